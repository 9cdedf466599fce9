#!/bin/bash
# Objects end to end on the live `faults` source (issue 18): memtop
# launches tests/objects/objects-test, which allocates a malloc'd 4 MiB
# table in make_table(), an mmap'd grid in make_grid(), a calloc'd 256 KiB
# array in make_array(), refaults every page, then frees the table and
# mallocs it again in remake_table().  The program prints each object's
# function, base and size (the oracle): every shown page inside an object
# must be named by its function, before and after the reuse, and the
# objects rows must add up; the unwinding runs in a helper process that is
# not root (seccomp, no_new_privs) and never fails.  Then --list-events
# must say whether the allocation events work.
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/objects-lib.sh"
grep -q '^objects ' "$TMP/list.txt" || fail "--list-events has no objects line"
grep -q '^objects .*off' "$TMP/list.txt" &&
	skip "allocation events unavailable: $(grep '^objects ' "$TMP/list.txt")"

"$MEMTOP" -b --json -e faults -d 0.25 -s samples -k 2000 \
	--log "$TMP/memtop.log" -o "$TMP/frames.jsonl" -- \
	"$MEMTOP_OBJECTS_TEST" --run-ms 2000 --phase-ms 1000 > "$TMP/oracle.txt" &
memtop_pid=$!
# The stacks are unwound in a helper that is not root (src/names/unwind.c).
helper_confined "unwind helper" "$TMP/memtop.log"
wait "$memtop_pid"
status=$?
grep -q 'unwind helper .* killed\|frames named without it' "$TMP/memtop.log" &&
	fail "unwind helper failed: $(grep 'unwind helper' "$TMP/memtop.log")"
[ "$status" -eq 0 ] || fail "memtop exited $status"
python3 "$FRAMETOOL" check "$TMP/frames.jsonl" || fail "frame invariants"
python3 - "$TMP/frames.jsonl" "$TMP/oracle.txt" <<'PY' || fail "objects named"
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
objs = []
for line in open(sys.argv[2]):
    w = line.split()
    if w and w[0] == 'object':
        objs.append((w[1], int(w[2], 16), int(w[3])))
assert len(objs) == 4, objs
bad = 0
named = {}
table = {objs[0][0], objs[3][0]} if objs[3][1] == objs[0][1] else None
last_table = []
for i, f in enumerate(frames):
    assert f['objects_on'], 'objects off'
    assert f['objects_samples'] + f['objects_none'] == f['totals']['samples']
    assert sum(o['samples'] for o in f['objects']) + f['objects_more'] == \
        f['objects_samples']
    for p in f['pages']:
        a = int(p['addr'], 16)
        # The latest object whose whole pages hold a.
        want = None
        for fn, base, size in objs:
            if base <= a and a + 4096 <= base + size:
                want = fn
        if want is None:
            continue
        fn = ((p['object'] or {}).get('site') or '').split('+')[0]
        named[fn] = named.get(fn, 0) + 1
        # The reused table: make_table's before the free, remake_table's
        # after; a frame may straddle the two.
        ok = fn in table if table and want in table else fn == want
        if table and want in table and i == len(frames) - 1:
            last_table.append(fn)
        if not ok:
            bad += 1
            if bad < 5:
                print('page %s: %r, want %s' % (p['addr'], fn, want))
if table and last_table:
    assert set(last_table) == {'remake_table'}, set(last_table)
print('pages named:', named)
assert bad == 0, '%d pages misnamed' % bad
for fn in ('make_table', 'make_grid', 'make_array', 'remake_table'):
    assert named.get(fn), 'no page named by ' + fn
sites = {o['site'].split('+')[0] for f in frames for o in f['objects']}
assert {'make_table', 'make_grid', 'make_array'} <= sites, sites
PY
[ "$failures" -eq 0 ] &&
ok "pages named by their allocating functions"

# A target living under a second: its objects are named all the same.
"$MEMTOP" -b --json -e faults -d 0.1 -s samples -k 2000 \
	-o "$TMP/short.jsonl" -- "$MEMTOP_OBJECTS_TEST" --run-ms 300 \
	--phase-ms 150 > "$TMP/short-oracle.txt" || fail "short: memtop failed"
python3 - "$TMP/short.jsonl" <<'PY' || fail "short-lived target: sites"
import json, sys
sites = set()
for l in open(sys.argv[1]):
    f = json.loads(l)
    for p in f['pages']:
        if p['object']:
            sites.add(p['object']['site'].split('+')[0])
print('short-lived sites:', sorted(sites))
assert {'make_table', 'make_grid', 'make_array', 'remake_table'} <= sites
PY

# Without permission for the tracepoints, --list-events and the header
# say what is missing and the fix.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
	"${NOBODY[@]}" "$MEMTOP" --list-events > "$TMP/list-nobody.txt" 2>&1
	grep -E '^objects +off: .*fix: run as root' "$TMP/list-nobody.txt" ||
		fail "--list-events as nobody: $(grep '^objects' "$TMP/list-nobody.txt")"
	# A directory nobody may write its frames into.
	NB=$TMP/nobody
	mkdir -m 0777 "$NB" && chmod o+x "$TMP"
	(cd /tmp && "${NOBODY[@]}" env MEMTOP_FAULTS_NO_TRACEPOINT=1 \
		"$MEMTOP" -b --json -e faults -d 0.1 -n 2 -o "$NB/frames.jsonl" \
		-- "$MEMTOP_OBJECTS_TEST" --run-ms 300 --phase-ms 150 \
		> /dev/null 2>"$NB/err") || fail "as nobody: $(cat "$NB/err")"
	python3 - "$NB/frames.jsonl" <<'PY' || fail "header as nobody"
import json, sys
f = [json.loads(l) for l in open(sys.argv[1])][-1]
assert not f['objects_on'], 'objects on without permission'
assert 'objects: off' in f['source_note'] and 'fix:' in f['source_note'], \
    f['source_note']
PY
else
	skip_part "permission checks need root and setpriv"
fi
finish
