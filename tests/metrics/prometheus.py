#!/usr/bin/env python3
"""A real Prometheus scrapes memtop --listen; what it stored must equal
memtop's own JSON frames (issue 14).

memtop -b --json watches `sh -c 'memtop-workload ...; exec sleep'` with
the faults source, so its counts grow for a few seconds and then stand
still.  Prometheus (the Debian package's binary, on loopback, with a
config and a storage folder of its own) scrapes it every second; it asks
for OpenMetrics, so this also checks that Prometheus parses memtop's
OpenMetrics.

Matching times exactly: every scrape shows the snapshot of one frame,
and memtop_frames_total says which (batch never skips, so it is the
frame's seq).  So
1. once the counts stand still, an instant query of every memtop series
   must equal the sums of the first k JSON frames, k = the frames_total
   of the same scrape;
2. after memtop has stopped, every sample Prometheus stored, scrape by
   scrape (a range query), must equal the sums of its scrape's k frames,
   while the workload ran and after.
Exit 77 when prometheus is not installed or perf may not be used.
"""
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlib  # noqa: E402

NAME = 'prometheus'
TOP = 5
WORKLOAD_S = 8


def prom_query(port, query, at=None):
    args = {'query': query}
    if at is not None:
        args['time'] = '%.3f' % at
    url = 'http://127.0.0.1:%d/api/v1/query?%s' % (
        port, urllib.parse.urlencode(args))
    with urllib.request.urlopen(url, timeout=10) as r:
        data = json.load(r)
    if data.get('status') != 'success':
        raise RuntimeError('query %s: %s' % (query, data))
    return data['data']


def start_prometheus(tmp, target_port):
    binary = shutil.which('prometheus') or '/usr/bin/prometheus'
    if not os.access(binary, os.X_OK):
        mlib.skip('prometheus is not installed (Debian package prometheus)')
    port = mlib.free_port()
    conf = os.path.join(tmp, 'prometheus.yml')
    with open(conf, 'w') as f:
        f.write('global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n'
                'scrape_configs:\n  - job_name: memtop\n'
                '    static_configs:\n'
                "      - targets: ['127.0.0.1:%d']\n" % target_port)
    log = open(os.path.join(tmp, 'prometheus.log'), 'w')
    p = mlib.start([binary, '--config.file=' + conf,
                    '--storage.tsdb.path=' + os.path.join(tmp, 'data'),
                    '--web.listen-address=127.0.0.1:%d' % port,
                    '--log.level=warn'],
                   stdout=log, stderr=subprocess.STDOUT)
    if not mlib.wait_http('127.0.0.1', port, '/-/ready', timeout=60,
                          alive=lambda: p.poll() is None):
        print(open(os.path.join(tmp, 'prometheus.log')).read()[-2000:])
        mlib.fail('prometheus did not become ready')
        mlib.finish(NAME)
    return p, port


def start_memtop(tmp, port):
    frames = os.path.join(tmp, 'frames.jsonl')
    cmd = ('%s --mode refault --threads 2 --duration %d --quiet; '
           'exec sleep 600' % (mlib.WORKLOAD, WORKLOAD_S))
    p = mlib.start([mlib.MEMTOP, '-b', '--json', '-o', frames, '-e', 'faults',
                    '--listen', '127.0.0.1:%d' % port, '--metrics-top',
                    str(TOP), '--', 'sh', '-c', cmd],
                   stdout=subprocess.DEVNULL,
                   stderr=open(os.path.join(tmp, 'memtop.err'), 'w'))
    return p, frames


def stable_from(frames):
    """The seq from which counts stand still: the first of three frames
    without samples after frames with some; None before that."""
    seen = False
    for i, f in enumerate(frames):
        seen = seen or f['totals']['samples'] > 0
        if seen and i + 3 <= len(frames) and \
           all(g['totals']['samples'] == 0 and g['totals']['lost'] == 0
               for g in frames[i:i + 3]):
            return f['seq']
    return None


def instant(prom_port):
    """{series_key: value} of every memtop series now, and the one
    timestamp they share."""
    data = prom_query(prom_port, '{__name__=~"memtop_.*",job="memtop"}')
    got, stamps = {}, set()
    for r in data['result']:
        m = dict(r['metric'])
        name = m.pop('__name__')
        got[mlib.series_key(name, m)] = float(r['value'][1])
        stamps.add(r['value'][0])
    return got, stamps


def wait_stable(prom_port, frames_path, memtop):
    """Waits until Prometheus holds a scrape made while the counts stood
    still; returns that scrape's series."""
    deadline = time.monotonic() + WORKLOAD_S + 60
    while time.monotonic() < deadline and memtop.poll() is None:
        s = stable_from(mlib.read_frames(frames_path))
        if s is not None:
            got, stamps = instant(prom_port)
            k = got.get(mlib.series_key('memtop_frames_total', {}), 0)
            if k >= s + 1:
                return got, stamps
        time.sleep(0.5)
    mlib.fail('no scrape of standing counts within %d s (memtop %s)' % (
        WORKLOAD_S + 60, 'running' if memtop.poll() is None else
        'exited %d' % memtop.returncode))
    mlib.finish(NAME)


def check_instant(got, stamps, frames, version):
    k = int(got[mlib.series_key('memtop_frames_total', {})])
    if len(stamps) != 1:
        mlib.fail('instant query: series from %d scrapes' % len(stamps))
    diffs = mlib.compare(got, mlib.expected(frames, k, version, TOP))
    for d in diffs[:20]:
        mlib.fail('instant, frame %d: %s' % (k, d))
    if not diffs:
        mlib.ok('instant query at frame %d: %d series equal the JSON frames'
                % (k, len(got)))
    key = mlib.series_key('memtop_samples_total', {'kind': 'other'})
    print('  memtop_samples_total{kind="other"}: Prometheus %d, JSON '
          'cumulative.other of frame %d: %d' % (
              got.get(key, -1), k, frames[k - 1]['cumulative']['other']))
    for name, labels in (
            ('memtop_node_samples_total', {'node': '0', 'side': 'cpu'}),
            ('memtop_matrix_samples_total', {'cpu_node': '0', 'mem_node': '0'}),
            ('memtop_estimated_accesses_total', {'kind': 'other'})):
        print('  %s%s: Prometheus %s' % (name, labels,
              got.get(mlib.series_key(name, labels))))


def stored(prom_port, at):
    """Every stored sample of every memtop series: {timestamp: {key: v}}."""
    data = prom_query(prom_port, '{__name__=~"memtop_.*",job="memtop"}[10m]',
                      at)
    scrapes = {}
    for r in data['result']:
        m = dict(r['metric'])
        name = m.pop('__name__')
        for t, v in r['values']:
            scrapes.setdefault(t, {})[mlib.series_key(name, m)] = float(v)
    return scrapes


def check_stored(scrapes, frames, version):
    """Scrape by scrape: the values of the frame it saw."""
    ks, bad = [], 0
    for t in sorted(scrapes):
        got = scrapes[t]
        k = int(got.get(mlib.series_key('memtop_frames_total', {}), -1))
        if k < 0 or k > len(frames):
            mlib.fail('scrape at %.3f: frames_total %d of %d frames' %
                      (t, k, len(frames)))
            bad += 1
            continue
        ks.append(k)
        for d in mlib.compare(got, mlib.expected(frames, k, version, TOP)):
            if bad < 20:
                mlib.fail('scrape at %.3f (frame %d): %s' % (t, k, d))
            bad += 1
    active = sum(1 for k in set(ks) if k and
                 frames[k - 1]['totals']['samples'] > 0)
    if len(ks) < 5 or active < 2:
        mlib.fail('too few scrapes: %d stored, %d of frames with samples' %
                  (len(ks), active))
    elif bad == 0:
        mlib.ok('%d stored scrapes (frames %d..%d, %d while the workload '
                'ran) equal the JSON frames they saw' %
                (len(ks), min(ks), max(ks), active))
    print('  frames seen by the stored scrapes: %s' % ks)
    if any(b < a for a, b in zip(ks, ks[1:])):
        mlib.fail('frames_total went down between scrapes: %s' % ks)


def main():
    mlib.need_perf()
    if not os.access(mlib.MEMTOP, os.X_OK):
        mlib.skip('no memtop at %s' % mlib.MEMTOP)
    version = subprocess.run([mlib.MEMTOP, '-V'], capture_output=True,
                             text=True).stdout.split()[-1]
    tmp = mlib.tmpdir(NAME)
    port = mlib.free_port()
    prom, prom_port = start_prometheus(tmp, port)
    memtop, frames_path = start_memtop(tmp, port)
    got, stamps = wait_stable(prom_port, frames_path, memtop)
    up = prom_query(prom_port, 'up{job="memtop"}')['result']
    if not up or up[0]['value'][1] != '1':
        mlib.fail('up{job="memtop"} is %s' % up)
    end = time.time()
    st = mlib.stop(memtop)
    if st != 0:
        mlib.fail('memtop exited %d: %s' % (st, open(os.path.join(
            tmp, 'memtop.err')).read()[-500:]))
    frames = mlib.read_frames(frames_path)
    check_instant(got, stamps, frames, version)
    check_stored(stored(prom_port, end + 1), frames, version)
    mlib.stop(prom)
    mlib.finish(NAME)


if __name__ == '__main__':
    main()
