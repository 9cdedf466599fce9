"""Helpers of the fleet metrics tests (tests/metrics/*.py).

Environment as in tests/lib/lib.sh: MEMTOP, MEMTOP_WORKLOAD,
MEMTOP_SRCDIR.  Every process a test starts goes through start(), and
cleanup() (registered with atexit) signals exactly those, by pid.
Temporary files live in one tempfile.mkdtemp() folder, removed at exit.
"""
import atexit
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SRC = os.environ.get('MEMTOP_SRCDIR') or os.path.abspath(
    os.path.join(os.path.dirname(__file__), '..', '..'))
BUILD = os.environ.get('MEMTOP_BUILDDIR') or os.path.join(SRC, 'build')
MEMTOP = os.environ.get('MEMTOP') or os.path.join(BUILD, 'ui', 'memtop')
WORKLOAD = os.environ.get('MEMTOP_WORKLOAD') or \
    os.path.join(BUILD, 'tools', 'memtop-workload')

_procs = []
_tmp = []
failures = []


def skip(why):
    print('SKIP: %s' % why)
    sys.exit(77)


def ok(what):
    print('ok: %s' % what)


def fail(what):
    print('FAIL: %s' % what)
    failures.append(what)


def finish(name):
    if failures:
        print('%s: %d failure(s)' % (name, len(failures)))
        sys.exit(1)
    print('%s: all passed' % name)
    sys.exit(0)


def need_perf():
    """Skips unless this machine lets us sample our children's faults."""
    try:
        paranoid = int(open('/proc/sys/kernel/perf_event_paranoid').read())
    except (OSError, ValueError):
        paranoid = 3
    if os.geteuid() != 0 and paranoid > 2:
        skip('perf_event_paranoid=%d (needs <= 2 or root)' % paranoid)


def tmpdir(name):
    d = tempfile.mkdtemp(prefix='memtop-%s.' % name)
    _tmp.append(d)
    return d


def start(argv, **kw):
    """Popen, remembered for cleanup()."""
    p = subprocess.Popen(argv, **kw)
    _procs.append(p)
    return p


def stop(p, sig=signal.SIGTERM, timeout=15):
    """Signals one process we started, by pid; its exit status."""
    if p.poll() is None:
        p.send_signal(sig)
    try:
        return p.wait(timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        return p.wait()


def cleanup():
    for p in _procs:
        if p.poll() is None:
            stop(p, timeout=5)
    for d in _tmp:
        shutil.rmtree(d, ignore_errors=True)


atexit.register(cleanup)


def free_port():
    """A TCP port free on 127.0.0.1 at the time of asking."""
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


def http_get(url_host, port, path='/metrics', method='GET', headers=None,
         timeout=10):
    """(status, headers with lower-case names, body bytes)."""
    c = http.client.HTTPConnection(url_host, port, timeout=timeout)
    try:
        c.request(method, path, headers=headers or {})
        r = c.getresponse()
        body = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, body
    finally:
        c.close()


def wait_http(host, port, path='/metrics', timeout=30, alive=None):
    """Waits for a 200; False on timeout or when alive() turns False."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if alive is not None and not alive():
            return False
        try:
            if http_get(host, port, path, timeout=2)[0] == 200:
                return True
        except OSError:
            pass
        time.sleep(0.2)
    return False


def read_frames(path):
    """The complete JSON Lines frames written so far."""
    frames = []
    try:
        data = open(path, encoding='utf-8').read()
    except OSError:
        return frames
    for line in data.split('\n')[:-1]:
        frames.append(json.loads(line))
    return frames


_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def series_key(name, labels):
    return (name, frozenset((k, v) for k, v in labels.items()
                            if v != '' and k not in ('job', 'instance')))


def parse_exposition(text):
    """{series_key: float} of an exposition (either format)."""
    out = {}
    for line in text.split('\n'):
        if not line or line.startswith('#'):
            continue
        m = _SAMPLE.match(line)
        if not m:
            raise ValueError('bad sample line: %r' % line)
        labels = {k: re.sub(r'\\(.)', lambda e: '\n' if e.group(1) == 'n'
                            else e.group(1), v)
                  for k, v in _LABEL.findall(m.group(3) or '')}
        out[series_key(m.group(1), labels)] = float(m.group(4))
    return out


def _add(d, key, v):
    d[key] = d.get(key, 0) + v


def _node(n):
    return 'unknown' if n is None else str(n)


def _expected_nodes(e, frames):
    nodes, matrix, cpus = {}, {}, {}
    for f in frames:
        ids = [n['node'] for n in f['nodes']]
        for n in f['nodes']:
            for side, key in (('cpu', 'cpu_samples'), ('memory', 'mem_samples')):
                _add(nodes, ('memtop_node_samples_total',
                             (('node', str(n['node'])), ('side', side))), n[key])
            _add(nodes, ('memtop_node_local_samples_total',
                         (('node', str(n['node'])),)), n['local'])
            _add(nodes, ('memtop_node_remote_samples_total',
                         (('node', str(n['node'])),)), n['remote'])
        for side, key in (('cpu', 'cpu_unknown'), ('memory', 'mem_unknown')):
            _add(nodes, ('memtop_node_samples_total',
                         (('node', 'unknown'), ('side', side))), f[key])
        for i, row in enumerate(f['matrix']):
            for j, v in enumerate(row):
                _add(matrix, (str(ids[i]), str(ids[j])), v)
            _add(matrix, (str(ids[i]), 'unknown'), f['matrix_unknown'][i])
        _add(matrix, ('unknown', 'unknown'), f['cpu_unknown'])
        for c in f['cpus']:
            _add(cpus, (str(c['cpu']), _node(c['node'])), c['samples'])
        _add(cpus, ('unknown', 'unknown'), f['cpu_unknown'])
    for (name, labels), v in nodes.items():
        e[series_key(name, dict(labels))] = v
    for (cn, mn), v in matrix.items():
        e[series_key('memtop_matrix_samples_total',
                     {'cpu_node': cn, 'mem_node': mn})] = v
    for (cpu, node), v in cpus.items():
        e[series_key('memtop_cpu_samples_total', {'cpu': cpu, 'node': node})] = v


def _expected_procs(e, frames, top):
    """Per process, when every process fits in the top N (other 0)."""
    total, comm = {}, {}
    for f in frames:
        for t in f['threads']:
            _add(total, t['pid'], t['samples'])
        for t in f['targets']:
            if t['pid'] in total:
                comm[t['pid']] = t['comm']
    assert len(total) <= top, 'more processes than --metrics-top'
    for pid, v in total.items():
        if v:
            e[series_key('memtop_process_samples_total',
                         {'pid': str(pid), 'comm': comm.get(pid, '')})] = v
    e[series_key('memtop_process_samples_total', {'pid': 'other'})] = 0


def expected(frames, k, version, top):
    """{series_key: value} the exporter must show after the first k
    frames of a batch run (batch never skips, so seq k = k frames).  The
    collector's CPU seconds come as an interval (JSON rounds to us)."""
    fr = frames[:k]
    e = {}
    kinds = (('load', 'loads'), ('store', 'stores'), ('other', 'other'))
    c = fr[-1]['cumulative'] if fr else {}
    e[series_key('memtop_frames_total', {})] = k
    for kind, key in kinds:
        e[series_key('memtop_samples_total', {'kind': kind})] = c.get(key, 0)
        e[series_key('memtop_estimated_accesses_total', {'kind': kind})] = \
            sum(f['totals'][key] * f['period'] for f in fr)
    for name, key in (('lost', 'lost'), ('throttled', 'throttled'),
                      ('unattributed', 'unattributed'),
                      ('untracked', 'untracked')):
        e[series_key('memtop_%s_samples_total' % name, {})] = c.get(key, 0)
    for r in ('moved', 'busy', 'denied', 'failed', 'skipped'):
        e[series_key('memtop_page_migrations_total', {'result': r})] = \
            sum(f['migrations'][r] for f in fr)
    us = sum(f['collector_cpu_us'] for f in fr)
    e[series_key('memtop_collector_cpu_seconds_total', {})] = \
        (us / 1e6 - k * 1e-6, us / 1e6 + k * 1e-6)
    if not fr:
        return e
    last = fr[-1]
    e[series_key('memtop_build_info', {
        'version': version, 'source': last['source'],
        'events': ','.join(last['events'])})] = 1
    e[series_key('memtop_sampling_period', {})] = last['period']
    e[series_key('memtop_tracked_pages', {})] = last['tracked_pages']
    if last['imbalance'] is not None:
        e[series_key('memtop_node_imbalance_ratio', {})] = \
            (last['imbalance'] - 0.0005, last['imbalance'] + 0.0005)
    _expected_nodes(e, fr)
    _expected_procs(e, fr, top)
    return e


def compare(got, want):
    """Differences between {series_key: value} and expected(): a list of
    lines, empty when they agree."""
    diffs = []
    for key in sorted(set(got) | set(want), key=str):
        g, w = got.get(key), want.get(key)
        if isinstance(w, tuple):
            good = g is not None and w[0] <= g <= w[1]
        else:
            good = g is not None and w is not None and g == w
        if not good:
            diffs.append('%s%s: got %s, want %s' % (
                key[0], dict(key[1]), g, w))
    return diffs
