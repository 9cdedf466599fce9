#!/usr/bin/env python3
"""Hostile clients against memtop --listen while it samples (issue 14).

While memtop -b --json watches memtop-workload (faults source), this
sends, one kind after another: connections of random bytes, a request
with a 2 MB header, clients that connect and never send (and one that
stops in the middle of its request line), wrong methods, paths and a
request body, then 40 concurrent scrapes.  Each must be served (a valid
exposition) or refused cleanly (a 4xx, or the connection closed), the
silent ones closed by memtop's timeout, and afterwards memtop must be
alive, still answering, its frames must have kept coming every second,
and its final frame must count 0 lost samples.
Exit 77 when perf may not be used.
"""
import os
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlib  # noqa: E402

NAME = 'hostile'
HOST = '127.0.0.1'
WORKLOAD_S = 16
TIMEOUT_S = 5		# METRICS_HTTP_TIMEOUT_S in ui/metrics/metrics_http.c


def status_of(sock, timeout=10):
    """The status code of what the server sends, 0 when it closes the
    connection without an answer (also a clean refusal), -2 when it
    neither answers nor closes within timeout."""
    sock.settimeout(timeout)
    data = b''
    try:
        while b'\r\n' not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
    except (ConnectionResetError, BrokenPipeError):
        return 0
    except TimeoutError:
        return -2
    if not data:
        return 0
    parts = data.split(b' ', 2)
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else -1


def connect(port):
    return socket.create_connection((HOST, port), timeout=10)


def random_bytes(port):
    statuses = []
    for i in range(20):
        s = connect(port)
        try:
            s.sendall(os.urandom(4096))
        except (ConnectionResetError, BrokenPipeError):
            pass
        statuses.append(status_of(s))
        s.close()
    bad = [st for st in statuses if not (st == 0 or 400 <= st < 500)]
    if bad:
        mlib.fail('random bytes: answers %s' % bad)
    else:
        mlib.ok('20 connections of 4 KiB random bytes: %d answered 4xx, '
                '%d closed' % (sum(1 for st in statuses if st), statuses.count(0)))


def big_header(port):
    s = connect(port)
    req = (b'GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ' + b'a' * (2 << 20) +
           b'\r\n\r\n')
    sent = 0
    try:
        while sent < len(req):
            sent += s.send(req[sent:sent + 65536])
    except (ConnectionResetError, BrokenPipeError):
        pass
    st = status_of(s)
    s.close()
    if st == 0 or 400 <= st < 500:
        mlib.ok('2 MB header: %s after %d KiB sent' %
                ('status %d' % st if st else 'connection closed', sent >> 10))
    else:
        mlib.fail('2 MB header: status %d' % st)


def silent(port):
    """Clients that never send, or stop mid-request: closed by memtop."""
    socks = [connect(port) for _ in range(8)]
    half = connect(port)
    half.sendall(b'GET /metrics HTT')
    socks.append(half)
    t0 = time.monotonic()
    closed = []
    for s in socks:
        st = status_of(s, timeout=TIMEOUT_S + 10)
        closed.append((st, time.monotonic() - t0))
        s.close()
    worst = max(t for _, t in closed)
    if any(st not in (0, 408) for st, _ in closed) or worst > TIMEOUT_S + 5:
        mlib.fail('silent clients (status, seconds; -2: still open): %s' %
                  [(st, round(t, 1)) for st, t in closed])
    else:
        mlib.ok('9 silent clients (one mid-request) closed by memtop after '
                '%.1f s at most' % worst)


def wrong_requests(port):
    cases = [('DELETE', '/metrics', None, 405), ('POST', '/metrics', b'x', 405),
             ('GET', '/', None, 404), ('GET', '/metrics/x', None, 404),
             ('GET', '/metrics', b'body', 400), ('HEAD', '/metrics', None, 200)]
    for method, path, body, want in cases:
        c = mlib.http.client.HTTPConnection(HOST, port, timeout=10)
        c.request(method, path, body=body)
        r = c.getresponse()
        data = r.read()
        c.close()
        if r.status != want:
            mlib.fail('%s %s: status %d, want %d' % (method, path, r.status,
                                                      want))
        elif method == 'HEAD' and (data or not r.getheader('Content-Length')):
            mlib.fail('HEAD /metrics: %d body bytes, Content-Length %s' % (
                len(data), r.getheader('Content-Length')))
    mlib.ok('DELETE, POST 405; /, /metrics/x 404; a GET body 400; HEAD '
            'without body')


def concurrent(port, n=40):
    results = [None] * n

    def one(i):
        try:
            st, hdr, body = mlib.http_get(HOST, port, timeout=20)
            if st == 200:
                mlib.parse_exposition(body.decode('utf-8'))
            results[i] = st
        except (ConnectionResetError, BrokenPipeError,
                mlib.http.client.RemoteDisconnected):
            results[i] = 0
        except Exception as e:	# noqa: BLE001 - reported as a failure
            results[i] = repr(e)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    served = results.count(200)
    bad = [r for r in results if r not in (200, 0)]
    if bad or served == 0:
        mlib.fail('%d concurrent scrapes: %s' % (n, results))
    else:
        mlib.ok('%d concurrent scrapes: %d served a valid exposition, %d '
                'refused' % (n, served, results.count(0)))


def frames_total(port):
    st, _, body = mlib.http_get(HOST, port)
    m = mlib.parse_exposition(body.decode('utf-8'))
    return st, m.get(mlib.series_key('memtop_frames_total', {}), -1)


def check_frames(frames):
    """Sampling went on: frames a second apart, samples in each while the
    workload ran, nothing lost."""
    times = [f['time'] for f in frames]
    gaps = [b - a for a, b in zip(times, times[1:])]
    busy = [f for f in frames[1:-3] if f['totals']['samples'] == 0]
    lost = frames[-1]['cumulative']['lost']
    if not frames or not frames[-1]['final']:
        mlib.fail('no final frame')
        return
    if max(gaps) > 1.5 or busy or lost:
        mlib.fail('frames: largest gap %.3f s, %d frames without samples, '
                  '%d lost' % (max(gaps), len(busy), lost))
    else:
        mlib.ok('%d frames, at most %.3f s apart, %d samples, 0 lost' % (
            len(frames), max(gaps), frames[-1]['cumulative']['samples']))


def main():
    mlib.need_perf()
    tmp = mlib.tmpdir(NAME)
    port = mlib.free_port()
    frames_path = os.path.join(tmp, 'frames.jsonl')
    memtop = mlib.start([mlib.MEMTOP, '-b', '--json', '-o', frames_path,
                         '-e', 'faults', '--listen', str(port), '--',
                         mlib.WORKLOAD, '--mode', 'refault', '--threads', '2',
                         '--duration', str(WORKLOAD_S), '--quiet'],
                        stderr=open(os.path.join(tmp, 'memtop.err'), 'w'))
    if not mlib.wait_http(HOST, port, alive=lambda: memtop.poll() is None):
        mlib.fail('memtop did not serve: %s' %
                  open(os.path.join(tmp, 'memtop.err')).read()[-500:])
        mlib.finish(NAME)
    before = frames_total(port)[1]
    random_bytes(port)
    big_header(port)
    wrong_requests(port)
    concurrent(port)
    silent(port)
    st, after = frames_total(port)
    if memtop.poll() is not None or st != 200 or after <= before:
        mlib.fail('after the clients: memtop %s, scrape %d, frames %s -> %s'
                  % ('alive' if memtop.poll() is None else 'exited', st,
                     before, after))
    else:
        mlib.ok('memtop alive and answering; frames %d -> %d meanwhile' %
                (before, after))
    rc = memtop.wait(WORKLOAD_S + 30)
    if rc != 0:
        mlib.fail('memtop exited %d: %s' % (
            rc, open(os.path.join(tmp, 'memtop.err')).read()[-500:]))
    check_frames(mlib.read_frames(frames_path))
    mlib.finish(NAME)


if __name__ == '__main__':
    main()
