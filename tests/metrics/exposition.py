#!/usr/bin/env python3
"""The exposition memtop serves and writes (issue 14), in each mode.

- batch (-b --json) with --listen and --metrics-file: `promtool check
  metrics` passes on the endpoint's text and on the file; Accept:
  application/openmetrics-text gets OpenMetrics 1.0.0 ending in "# EOF";
  after the run the file holds exactly the totals of the JSON frames, is
  mode 0644 and leaves no temporary file behind;
- headless (-b --quiet): nothing on standard output, the file written;
- replay (-i) in batch: the file equals the replay's JSON frames;
- the TUI (a private tmux server) replaying a recording with --listen:
  frames are exported as they come, and r (reset) does not make any
  exported counter go down.
Exit 77 when promtool or perf cannot be used.
"""
import os
import shutil
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlib  # noqa: E402

NAME = 'exposition'
HOST = '127.0.0.1'
OM_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8'
TEXT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'
PERFDATA_TOOL = os.environ.get('MEMTOP_PERFDATA_TOOL') or \
    os.path.join(mlib.BUILD, 'tests', 'perfdata-tool')


def promtool(what, text):
    r = subprocess.run(['promtool', 'check', 'metrics'], input=text,
                       capture_output=True, text=True)
    if r.returncode != 0:
        mlib.fail('promtool check metrics, %s: %s%s' % (what, r.stdout,
                                                         r.stderr))
    else:
        mlib.ok('promtool check metrics passes on %s' % what)


def check_file(path, frames, version, top, what):
    text = open(path, encoding='utf-8').read()
    diffs = mlib.compare(mlib.parse_exposition(text),
                         mlib.expected(frames, len(frames), version, top))
    for d in diffs[:20]:
        mlib.fail('%s: %s' % (what, d))
    if not diffs:
        mlib.ok('%s equals the %d JSON frames (%d samples)' % (
            what, len(frames), frames[-1]['cumulative']['samples']))
    return text


def scrape_formats(port):
    st, hdr, body = mlib.http_get(HOST, port)
    text = body.decode('utf-8')
    if st != 200 or hdr.get('content-type') != TEXT_TYPE:
        mlib.fail('plain scrape: %d %s' % (st, hdr.get('content-type')))
    promtool('the endpoint\'s text format', text)
    st, hdr, body = mlib.http_get(HOST, port, headers={
        'Accept': 'application/openmetrics-text;version=1.0.0,'
                  'text/plain;version=0.0.4;q=0.5'})
    om = body.decode('utf-8')
    if st != 200 or hdr.get('content-type') != OM_TYPE or \
       not om.endswith('\n# EOF\n') or om.count('# EOF') != 1:
        mlib.fail('OpenMetrics scrape: %d %s, ends %r' % (
            st, hdr.get('content-type'), om[-20:]))
    elif '# TYPE memtop_samples counter' not in om or \
            '# TYPE memtop_build info' not in om:
        mlib.fail('OpenMetrics family lines: %s' % om[:300])
    else:
        mlib.ok('Accept: application/openmetrics-text gets OpenMetrics '
                '1.0.0 ending in # EOF')
    if set(mlib.parse_exposition(text)) != set(mlib.parse_exposition(om)):
        mlib.fail('text and OpenMetrics have different series')


def batch(tmp, version):
    port = mlib.free_port()
    frames_path = os.path.join(tmp, 'batch.jsonl')
    mdir = os.path.join(tmp, 'textfile')
    os.mkdir(mdir)
    mfile = os.path.join(mdir, 'memtop.prom')
    p = mlib.start([mlib.MEMTOP, '-b', '--json', '-o', frames_path, '-e',
                    'faults', '--listen', str(port), '--metrics-file', mfile,
                    '--', mlib.WORKLOAD, '--mode', 'refault', '--duration',
                    '4', '--quiet'], stderr=subprocess.PIPE)
    if not mlib.wait_http(HOST, port, alive=lambda: p.poll() is None):
        mlib.fail('batch: no endpoint: %s' % p.stderr.read()[-300:])
        return
    time.sleep(1.5)
    scrape_formats(port)
    if p.wait(60) != 0:
        mlib.fail('batch: exit %d' % p.returncode)
    text = check_file(mfile, mlib.read_frames(frames_path), version, 20,
                      '--metrics-file after a batch run')
    promtool('--metrics-file', text)
    mode = stat.S_IMODE(os.stat(mfile).st_mode)
    left = sorted(set(os.listdir(mdir)) - {'memtop.prom'})
    if mode != 0o644 or left:
        mlib.fail('--metrics-file: mode %o, left behind: %s' % (mode, left))
    else:
        mlib.ok('--metrics-file is mode 0644, no temporary file left')


def quiet(tmp):
    mfile = os.path.join(tmp, 'quiet.prom')
    r = subprocess.run([mlib.MEMTOP, '-b', '--quiet', '-e', 'faults',
                        '--metrics-file', mfile, '--', mlib.WORKLOAD,
                        '--mode', 'touch', '--duration', '0', '--quiet'],
                       capture_output=True, timeout=60)
    if r.returncode != 0 or r.stdout or not os.path.exists(mfile) or \
       'memtop_frames_total' not in open(mfile).read():
        mlib.fail('--quiet: exit %d, %d bytes of output, file %s' % (
            r.returncode, len(r.stdout), os.path.exists(mfile)))
    else:
        mlib.ok('-b --quiet writes no frame, only --metrics-file')


def replay(tmp, version):
    rec = os.path.join(tmp, 'rec.data')
    if subprocess.run([PERFDATA_TOOL, 'gen', rec, '--samples', '20000',
                       '--seconds', '20'], capture_output=True).returncode:
        mlib.fail('perfdata-tool gen failed')
        return None
    frames_path = os.path.join(tmp, 'replay.jsonl')
    mfile = os.path.join(tmp, 'replay.prom')
    r = subprocess.run([mlib.MEMTOP, '-i', rec, '-b', '--json', '-o',
                        frames_path, '--metrics-file', mfile],
                       capture_output=True, timeout=120)
    if r.returncode != 0:
        mlib.fail('replay: exit %d: %s' % (r.returncode, r.stderr[-300:]))
        return rec
    check_file(mfile, mlib.read_frames(frames_path), version, 20,
               '--metrics-file of a replay (-i)')
    return rec


def tui_counters(port):
    st, _, body = mlib.http_get(HOST, port)
    m = mlib.parse_exposition(body.decode('utf-8'))
    return {k: v for k, v in m.items() if k[0].endswith('_total')}


def tui(tmp, rec):
    """The TUI replaying rec (20 s at recorded speed) with --listen."""
    if not shutil.which('tmux'):
        print('note: tmux not installed: the TUI case is not run')
        return
    port = mlib.free_port()
    sock = 'memtop-metrics-%d' % os.getpid()
    tmux = ['tmux', '-L', sock, '-f', '/dev/null']
    subprocess.run(tmux + ['new-session', '-d', '-x', '140', '-y', '40',
                           "'%s' -i '%s' --listen %d 2>'%s/tui.err'; "
                           "sleep 60" % (mlib.MEMTOP, rec, port, tmp)],
                   check=True)
    try:
        tui_reset(tmux, port, tmp)
    finally:
        subprocess.run(tmux + ['kill-server'], capture_output=True)


def tui_reset(tmux, port, tmp):
    frames = mlib.series_key('memtop_frames_total', {})
    deadline = time.monotonic() + 30
    before = {}
    while time.monotonic() < deadline:
        try:
            before = tui_counters(port)
        except OSError:
            before = {}
        if before.get(frames, 0) >= 3:
            break
        time.sleep(0.3)
    if before.get(frames, 0) < 3:
        mlib.fail('TUI: no frames exported: %s' % open(
            os.path.join(tmp, 'tui.err')).read()[-300:])
        return
    subprocess.run(tmux + ['send-keys', 'r'], check=True)
    time.sleep(2.5)
    after = tui_counters(port)
    down = [str(k) for k in before if after.get(k, -1) < before[k]]
    if down or after[frames] <= before[frames]:
        mlib.fail('TUI: after r: frames %s -> %s; went down: %s' % (
            before[frames], after[frames], down[:5]))
    else:
        samples = mlib.series_key('memtop_samples_total', {'kind': 'load'})
        mlib.ok('TUI replay exports frames; after r no counter went down '
                '(frames %d -> %d, loads %d -> %d)' % (
                    before[frames], after[frames], before.get(samples, 0),
                    after.get(samples, 0)))
    subprocess.run(tmux + ['send-keys', 'q'], check=True)


def main():
    if not shutil.which('promtool'):
        mlib.skip('promtool not installed (Debian package prometheus)')
    mlib.need_perf()
    version = subprocess.run([mlib.MEMTOP, '-V'], capture_output=True,
                             text=True).stdout.split()[-1]
    tmp = mlib.tmpdir(NAME)
    batch(tmp, version)
    quiet(tmp)
    rec = replay(tmp, version)
    if rec:
        tui(tmp, rec)
    mlib.finish(NAME)


if __name__ == '__main__':
    main()
