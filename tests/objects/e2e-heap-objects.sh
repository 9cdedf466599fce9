#!/bin/bash
# Small heap objects end to end (--heap-objects, issue 18): memtop
# launches tests/objects/heap-test, which mallocs 10 000 64-byte nodes
# from node_a() and node_b() interleaved (runs of 50), writes them with a
# forked child alive (copy-on-write faults: samples of the faults source
# on pages whose nodes exist), then frees a quarter of node_a's nodes,
# mallocs most of them again from node_c() (at the same addresses) and
# reallocs a tenth of node_b's from node_d() (moved).  The program prints
# every node and every free (the oracle).  The objects rows must count
# each site's live nodes exactly, before and after, and every sampled
# page must be named by the site holding most of its bytes.  Then the run
# again under --record, replayed with -i: the same objects as live, the
# workload's counts, pages named by sites the workload put there; and with
# a size floor, which the replay keeps.  Then
# --list-events and the header must say whether uprobes work and why not.
. "$(dirname "$0")/../lib/lib.sh"
need_python
: "${MEMTOP_HEAP_TEST:=$MEMTOP_BUILDDIR/tests/objects/heap-test}"
[ -x "$MEMTOP_HEAP_TEST" ] || skip "heap-test not built"
"$MEMTOP" --list-events > "$TMP/list.txt" 2>&1
grep -q '^heap ' "$TMP/list.txt" || fail "--list-events has no heap line"
grep -q '^objects .*off' "$TMP/list.txt" &&
	skip "allocation events unavailable: $(grep '^objects ' "$TMP/list.txt")"
grep -q '^heap .*off' "$TMP/list.txt" &&
	skip "uprobes unavailable: $(grep '^heap ' "$TMP/list.txt")"

# Every allocation (=1): the counts are exact.
"$MEMTOP" -b --json -e faults -d 0.25 -s samples -k 2000 --heap-objects=1 \
	--log "$TMP/log" -o "$TMP/frames.jsonl" -- "$MEMTOP_HEAP_TEST" \
	--run-ms 3000 --phase-ms 1500 > "$TMP/oracle.txt"
status=$?
[ "$status" -eq 0 ] || fail "memtop exited $status: $(tail -3 "$TMP/log")"
python3 "$FRAMETOOL" check "$TMP/frames.jsonl" || fail "frame invariants"
python3 - "$TMP/frames.jsonl" "$TMP/oracle.txt" <<'PY' || fail "heap objects"
import collections, json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
FNS = ('node_a', 'node_b', 'node_c', 'node_d')
live, first = {}, None
for line in open(sys.argv[2]):
    w = line.split()
    if w and w[0] == 'node':
        live[int(w[2], 16)] = (w[1], int(w[3]))
    elif w and w[0] == 'free':
        del live[int(w[1], 16)]
    elif w and w[0] == 'reused':
        assert w[1] == w[3], 'node_c not at the freed addresses: ' + line
    if first is None and len(live) == 10000:
        first = dict(live)
final = live
def counts(objs):
    return dict(collections.Counter(fn for fn, _ in objs.values()))
want = [counts(first), counts(final)]
assert want[0] == {'node_a': 5000, 'node_b': 5000}, want[0]
print('oracle counts:', want)
def dominant(objs, page):
    by = collections.Counter()
    for base, (fn, size) in objs.items():
        lo, hi = max(base, page), min(base + size, page + 4096)
        if hi > lo:
            by[fn] += hi - lo
    top = by.most_common(2) + [(None, 0)]
    # The rest of the page may hold other objects (stdio's buffer): only
    # a site that beats them all, whatever they are, is checked.
    rest = 4096 - sum(by.values())
    if not top[0][0] or top[0][1] <= max(top[1][1], rest):
        return None
    return top[0][0]
lost = sum(f['objects_lost'] for f in frames)
seen = [False, False]
last = None
checked = bad = 0
for f in frames:
    assert f['objects_on'], 'objects off'
    assert 'heap objects:' in f['source_note'], f['source_note']
    got = {}
    for o in f['objects']:
        fn = o['site'].split('+')[0]
        if fn in FNS:
            got[fn] = got.get(fn, 0) + o['objects']
    if got not in want:
        last = got
        continue	# allocating or freeing in this frame
    state = want.index(got)
    seen[state] = True
    objs = (first, final)[state]
    for p in f['pages']:
        a = int(p['addr'], 16)
        d = dominant(objs, a)
        if d is None:
            continue
        fn = ((p['object'] or {}).get('site') or '').split('+')[0]
        checked += 1
        if fn != d:
            bad += 1
            if bad < 5:
                print('page %s: %r, want %s' % (p['addr'], fn, d))
print('pages checked: %d, misnamed: %d, records lost: %d' %
      (checked, bad, lost))
if lost:
    print('# SKIP exact counts: %d allocation records lost' % lost)
    sys.exit(0)
assert all(seen), 'no frame with the exact counts %r (seen %r; last %r)' % (
    want, seen, last)
assert checked >= 20, 'only %d pages checked' % checked
assert bad == 0, '%d pages misnamed' % bad
PY
[ "$failures" -eq 0 ] && ok "heap objects counted and named by their sites"

# --record writes the heap probes' records (memtop_heap:* events, which
# perf script and perf report read: perf script's counts against the
# workload's are the oracle),
# and -i names the same objects by the same sites as the live frames,
# with the workload's own counts.
"$MEMTOP" -b --json -e faults -d 0.25 -s samples -k 2000 --heap-objects=1 \
	--record "$TMP/h.data" --log "$TMP/rec.log" -o "$TMP/rec.jsonl" -- \
	"$MEMTOP_HEAP_TEST" --run-ms 2000 --phase-ms 1000 > "$TMP/rec-oracle.txt" ||
	fail "--heap-objects --record exited $?: $(tail -3 "$TMP/rec.log")"
"$MEMTOP" -b --json -d 0.25 -s samples -k 2000 -i "$TMP/h.data" \
	--log "$TMP/rep.log" -o "$TMP/rep.jsonl" ||
	fail "-i of a --heap-objects recording exited $?: $(tail -3 "$TMP/rep.log")"
perf script -i "$TMP/h.data" -F event > "$TMP/script.txt" \
	2> "$TMP/script.err" || fail "perf script: $(head -3 "$TMP/script.err")"
perf report -i "$TMP/h.data" --stdio > "$TMP/report.txt" \
	2> "$TMP/report.err" || fail "perf report: $(head -3 "$TMP/report.err")"
grep -q "of event 'memtop_heap:malloc'" "$TMP/report.txt" ||
	fail "perf report lists no memtop_heap:malloc samples"
python3 - "$TMP/rec.jsonl" "$TMP/rep.jsonl" "$TMP/rec-oracle.txt" \
	"$TMP/script.txt" <<'PY' || fail "heap objects in replay"
import collections, json, sys
FNS = ('node_a', 'node_b', 'node_c', 'node_d')
live = [json.loads(l) for l in open(sys.argv[1])]
rep = [json.loads(l) for l in open(sys.argv[2])]
objs, frees, at = collections.Counter(), 0, {}
for line in open(sys.argv[3]):
    w = line.split()
    if w and w[0] == 'node':
        objs[w[1]] += 1
        at[int(w[2], 16)] = w[1]
    elif w and w[0] == 'free':
        frees += 1
        del at[int(w[1], 16)]
final = dict(collections.Counter(at.values()))
script = collections.Counter(l.split()[0].rstrip(':') for l in open(sys.argv[4])
                             if l.strip())
print('oracle final:', final, 'perf script:', dict(script))
def sites(f):	# a row of no live object is there for its samples
    return {o['site']: o['objects'] for o in f['objects'] if o['objects']}
def fn_counts(f):
    got = collections.Counter()
    for o in f['objects']:
        if o['site'].split('+')[0] in FNS:
            got[o['site'].split('+')[0]] += o['objects']
    return dict(got)
assert all(f['objects_on'] for f in rep), 'replay: objects off'
# The same records, the same objects: replay's last frame is live's.
assert sites(rep[-1]) == sites(live[-1]), (sites(rep[-1]), sites(live[-1]))
# Pages: named in replay by a site whose node the workload put there (a
# page holds nodes of several sites: which one shows depends on the
# frame's samples, cut at other times live and in replay).
on_page = {}
for line in open(sys.argv[3]):
    w = line.split()
    if w and w[0] == 'node':
        base, size = int(w[2], 16), int(w[3])
        for pg in range(base >> 12, (base + size - 1 >> 12) + 1):
            on_page.setdefault(pg, set()).add(w[1])
named = bad = 0
for f in rep:
    for p in f['pages']:
        fn = ((p['object'] or {}).get('site') or '').split('+')[0]
        if fn not in FNS:
            continue
        named += 1
        if fn not in on_page.get(int(p['addr'], 16) >> 12, ()):
            bad += 1
            if bad < 5:
                print('page %s: %s, the workload put %s there' % (
                    p['addr'], fn, on_page.get(int(p['addr'], 16) >> 12)))
print('replay pages named by a node site: %d, wrongly: %d' % (named, bad))
assert named >= 20, 'replay names only %d pages by a node site' % named
assert bad == 0, '%d pages misnamed' % bad
lost = sum(f['objects_lost'] for f in live)
if lost:
    print('# SKIP exact counts: %d allocation records lost' % lost)
    sys.exit(0)
assert fn_counts(rep[-1]) == final, (fn_counts(rep[-1]), final)
want = {'memtop_heap:malloc': objs['node_a'] + objs['node_b'] + objs['node_c'],
        'memtop_heap:realloc__return': objs['node_d'],
        'memtop_heap:free': frees - objs['node_d']}
for ev, n in want.items():
    assert script[ev] >= n, 'perf script: %d %s, want >= %d' % (
        script[ev], ev, n)
PY
[ "$failures" -eq 0 ] &&
	ok "--record and -i: heap objects named and counted as live"

# A size floor (--heap-objects=128b: node_d's 256-byte blocks, not the
# 64-byte nodes) holds in the replay too (read from the file's CMDLINE).
"$MEMTOP" -b --json -e faults -d 0.25 -k 2000 --heap-objects=128b \
	--record "$TMP/f.data" -o "$TMP/f-live.jsonl" -- "$MEMTOP_HEAP_TEST" \
	--run-ms 1000 --phase-ms 500 > /dev/null 2>"$TMP/f.err" ||
	fail "--heap-objects=128b --record: $(tail -3 "$TMP/f.err")"
"$MEMTOP" -b --json -d 0.25 -k 2000 -i "$TMP/f.data" \
	-o "$TMP/f-rep.jsonl" 2>"$TMP/f.err" ||
	fail "-i of a --heap-objects=128b recording: $(tail -3 "$TMP/f.err")"
python3 - "$TMP/f-live.jsonl" "$TMP/f-rep.jsonl" <<'PY' || fail "size floor in replay"
import json, sys
# The most objects each node_* site held in any frame (the last frame may
# come after the process's exit, which ends its objects).  Under the
# automatic rate (the traps cost over 5 %: every allocation on this VM)
# only 1 entry in N is recorded while the rate is high, so node_d's
# blocks may be sampled out of both runs alike.
def most(path):
    m = {}
    for line in open(path):
        for o in json.loads(line)['objects']:
            fn = o['site'].split('+')[0]
            if o['objects'] and fn.startswith('node_'):
                m[fn] = max(m.get(fn, 0), o['objects'])
    return m
live, rep = most(sys.argv[1]), most(sys.argv[2])
print('node sites, live:', live, 'replay:', rep)
assert not set(live) & {'node_a', 'node_b', 'node_c'}, live
assert not set(rep) & {'node_a', 'node_b', 'node_c'}, rep
if 'node_d' in live:
    assert rep.get('node_d') == live['node_d'], (rep, live)
else:
    assert 'node_d' not in rep, rep
    print('# SKIP node_d in the floor run: its reallocs were sampled out '
          '(1 entry in N recorded while the rate was high)')
PY
[ "$failures" -eq 0 ] &&
	ok "--heap-objects=SIZE: the replay keeps the recording's size floor"

# Without the uprobe PMU's permission (nor the tracepoints'): --list-events
# and the header say what is missing and the fix.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
	"${NOBODY[@]}" "$MEMTOP" --list-events > "$TMP/list-nobody.txt" 2>&1
	grep -E '^heap +--heap-objects off: .*fix: ' "$TMP/list-nobody.txt" ||
		fail "--list-events as nobody: $(grep '^heap' "$TMP/list-nobody.txt")"
	NB=$TMP/nobody
	mkdir -m 0777 "$NB" && chmod o+x "$TMP"
	(cd /tmp && "${NOBODY[@]}" env MEMTOP_FAULTS_NO_TRACEPOINT=1 \
		"$MEMTOP" -b --json -e faults -d 0.1 -n 2 --heap-objects \
		-o "$NB/frames.jsonl" -- "$MEMTOP_HEAP_TEST" --nodes 100 \
		--run-ms 300 --phase-ms 150 > /dev/null 2>"$NB/err") ||
		fail "as nobody: $(cat "$NB/err")"
	python3 - "$NB/frames.jsonl" <<'PY' || fail "header as nobody"
import json, sys
note = [json.loads(l) for l in open(sys.argv[1])][-1]['source_note']
assert 'heap objects: off' in note and 'fix:' in note, note
PY
else
	skip_part "permission checks need root and setpriv"
fi
finish
