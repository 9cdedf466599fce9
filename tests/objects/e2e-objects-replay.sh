#!/bin/bash
# Objects through --record and -i (issue 18, item 5): memtop records
# tests/objects/objects-test (a malloc'd table in make_table(), an mmap'd
# grid in make_grid(), a calloc'd array in make_array(), the table freed
# and made again in remake_table()) with the allocation events, then
# replays the file.  The file must hold the raw_syscalls:sys_exit samples
# as the kernel wrote them, so that perf script and perf report read it
# and see them (perf's own count is the oracle: at least the workload's
# four objects); the replay must name the same pages by the same sites as
# the live frames, with the same objects per site, and the same samples
# over the run for the sites whose objects live throughout (the grid and
# the array: a frame built while the table is freed, which live and
# replay cut at other times, counts its samples under no object).
# Each object's fields (base, sizes, threads) are checked against the
# workload's report, and a target living under one frame is named live
# and in replay.
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/objects-lib.sh"
grep -q '^objects .*off' "$TMP/list.txt" &&
	skip "allocation events unavailable: $(grep '^objects ' "$TMP/list.txt")"

"$MEMTOP" -b --json -e faults -d 0.25 -s samples -k 2000 \
	--record "$TMP/rec.data" -o "$TMP/live.jsonl" -- \
	"$MEMTOP_OBJECTS_TEST" --run-ms 1500 --phase-ms 700 --touch-thread 1 \
	> "$TMP/oracle.txt" || fail "memtop --record exited $?"
"$MEMTOP" -b --json -d 0.25 -s samples -k 2000 -i "$TMP/rec.data" \
	-o "$TMP/replay.jsonl" || fail "memtop -i exited $?"

# perf reads the allocation samples memtop wrote.
perf script -i "$TMP/rec.data" -F event,ip,sym > "$TMP/script.txt" \
	2> "$TMP/script.err" || fail "perf script: $(head -3 "$TMP/script.err")"
n_exit=$(grep -c 'raw_syscalls:sys_exit' "$TMP/script.txt")
[ "$n_exit" -ge 4 ] || fail "perf script: $n_exit sys_exit samples, want >= 4"
perf report -i "$TMP/rec.data" --stdio > "$TMP/report.txt" \
	2> "$TMP/report.err" || fail "perf report: $(head -3 "$TMP/report.err")"
grep -q "of event 'raw_syscalls:sys_exit'" "$TMP/report.txt" ||
	fail "perf report lists no raw_syscalls:sys_exit samples"

python3 - "$TMP/live.jsonl" "$TMP/replay.jsonl" "$TMP/oracle.txt" \
	<<'PY' || fail "replay names objects as live"
import json, sys
WORK = ('make_table', 'make_grid', 'make_array', 'remake_table')
def load(path):
    return [json.loads(l) for l in open(path)]
live, rep = load(sys.argv[1]), load(sys.argv[2])
oracle = [l.split() for l in open(sys.argv[3]) if l.startswith('object ')]
assert len(oracle) == 4, oracle
for f in rep:
    assert f['objects_on'], 'replay: objects off'
    assert f['objects_samples'] + f['objects_none'] == f['totals']['samples']
def fn(site):
    return site.split('+')[0]
# Every page a replay frame names lies in the object the workload made
# there, and is named by the same site as in the live frames.
def pages(frames):
    out = {}
    for f in frames:
        for p in f['pages']:
            if p['object']:
                out.setdefault((p['pid'], p['addr']), set()).add(
                    p['object']['site'])
    return out
lp, rp = pages(live), pages(rep)
assert rp, 'replay names no page'
print('pages named: live %d, replay %d' % (len(lp), len(rp)))
for k, sites in rp.items():
    assert k in lp, 'page %s named in replay only' % (k,)
    assert sites <= lp[k], (k, sites, lp[k])
    if len(sites) == 1 and len(lp[k]) == 1:
        assert sites == lp[k], (k, sites, lp[k])
named = {fn(s) for v in rp.values() for s in v}
assert set(WORK) <= named, named
# The last frame's objects per site, and the run's samples per site.
def rows(frames):
    objs = {o['site']: o['objects'] for o in frames[-1]['objects']}
    samples = {}
    for f in frames:
        for o in f['objects']:
            k = fn(o['site'])
            k = 'table' if k in ('make_table', 'remake_table') else k
            samples[k] = samples.get(k, 0) + o['samples']
    return objs, samples, frames[-1]['objects_live']
lo, ls, ll = rows(live)
ro, rs, rl = rows(rep)
print('objects live %s replay %s' % (lo, ro))
assert lo == ro and ll == rl, (lo, ro, ll, rl)
lost = sum(f['totals']['lost'] + f['objects_lost'] for f in live)
if lost:
    print('# SKIP samples per site: %d lost while recording' % lost)
else:
    print('samples live %s replay %s' % (
        {k: ls[k] for k in ls if k in WORK + ('table',)},
        {k: rs[k] for k in rs if k in WORK + ('table',)}))
    for k in ('make_grid', 'make_array'):
        assert ls.get(k) == rs.get(k), (k, ls.get(k), rs.get(k))
    assert ls.get('table') and rs.get('table'), (ls, rs)
PY

# Each object's fields against the workload's own report, live and in
# replay: base and mapped size, the size asked (the grid's mmap length
# exactly; glibc adds its chunk header to a malloc's), the allocating
# thread (main) and the first toucher (the toucher thread for the grid,
# main for the others); and the objects rows' sums of them.
python3 - "$TMP/live.jsonl" "$TMP/replay.jsonl" "$TMP/oracle.txt" \
	<<'PY' || fail "objects' fields against the workload"
import json, sys
objs, toucher = {}, None
for l in open(sys.argv[3]):
    w = l.split()
    if w[0] == 'object':
        objs[w[1]] = (int(w[2], 16), int(w[3]))
    elif w[0] == 'toucher':
        toucher = int(w[1])
assert toucher and len(objs) == 4, (toucher, objs)
# A first toucher is looked up at a page's first sample of an interval:
# with samples lost (a sanitizer build on a loaded machine), a page may
# show none yet, or the first thread whose sample was kept (the toucher's
# were lost; seen under TSan).  Then either is let pass, and said.
lost = sum(json.loads(l)['totals']['lost'] for l in open(sys.argv[1]))
if lost:
    print('# SKIP first toucher on every page: %d samples lost' % lost)
for path in sys.argv[1:3]:
    frames = [json.loads(l) for l in open(path)]
    seen = set()
    for f in frames:
        for p in f['pages']:
            o = p['object']
            fn = o and o['site'].split('+')[0]
            if fn not in objs:
                continue
            base, size = objs[fn]
            # Only the object the workload reported (make_table's first
            # malloc also grows the heap: another object, same site).
            if not base <= int(p['addr'], 16) < base + size:
                continue
            seen.add(fn)
            pid = p['pid']
            assert o['tid'] == pid, (path, fn, o)
            if fn == 'make_grid':
                assert int(o['base'], 16) == base and o['size'] == size \
                    and o['requested'] == size, (path, o)
                assert o['first_touch'] == toucher or (
                    lost and o['first_touch'] in (None, pid)), \
                    (path, o, toucher)
            else:
                assert int(o['base'], 16) <= base < int(o['base'], 16) + 4096
                assert 0 <= o['requested'] - size < 8192, (path, o)
                assert o['size'] == (o['requested'] + 4095) & ~4095, o
                # remake_table's object may get its first sample only
                # in the frame after the one it is born in.
                assert o['first_touch'] == pid or (
                    (fn == 'remake_table' or lost) and
                    o['first_touch'] is None), (path, o)
    assert seen == set(objs), (path, seen)
    rows = {o['site'].split('+')[0]: o for o in frames[-1]['objects']}
    g = rows['make_grid']
    assert g['bytes'] == g['requested'] == objs['make_grid'][1], g
    assert g['tids'] == [pid], g
    assert g['first_touch'] == [toucher] or (
        lost and set(g['first_touch']) <= {toucher, pid}), g
    for fn in ('make_array', 'remake_table'):
        assert rows[fn]['first_touch'] == [pid], rows[fn]
    print('%s: fields as the workload reported' % path.split('/')[-1])
PY

# A target that lives under one frame (300 ms in a 2 s frame): its
# allocations are named as they happen, live and from the recording.
"$MEMTOP" -b --json -e faults -d 2 -s samples -k 2000 \
	--record "$TMP/short.data" -o "$TMP/short-live.jsonl" -- \
	"$MEMTOP_OBJECTS_TEST" --run-ms 300 --phase-ms 150 \
	> /dev/null || fail "short: memtop --record exited $?"
"$MEMTOP" -b --json -d 2 -s samples -k 2000 -i "$TMP/short.data" \
	-o "$TMP/short-replay.jsonl" || fail "short: memtop -i exited $?"
python3 - "$TMP/short-live.jsonl" "$TMP/short-replay.jsonl" <<'PY' ||
import json, sys
named = []
for path in sys.argv[1:]:
    frames = [json.loads(l) for l in open(path)]
    assert len(frames) == 1, (path, len(frames))
    sites = {p['object']['site'].split('+')[0]
             for p in frames[0]['pages'] if p['object']}
    print('%s: one frame, sites %s' % (path.split('/')[-1], sorted(sites)))
    assert {'make_table', 'make_grid', 'make_array',
            'remake_table'} <= sites, sites
    named.append(sites)
assert named[0] == named[1], named
PY
	fail "short-lived target: sites"
[ "$failures" -eq 0 ] && ok "replay names objects as the live frames did"
finish
