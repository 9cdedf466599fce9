#!/bin/bash
# Names end to end on the live `faults` source: memtop launches
# tests/names/names-test, which faults one page in each of its executable's
# .data and .bss, its shared library's .data, its heap, a thread's stack
# and a file mapping, and reports the names expected; the frames must name
# each region and symbol, the code sites and the code view must name the
# touching functions, line heat must add up.  Then the same with a
# stripped copy of the executable and library (objcopy --strip-all): the
# executable degrades to PATH+0xOFF without symbols, the library keeps its
# exported symbols through .dynsym.  Then records out of time order:
# names-test stops memtop, executes itself again on one CPU and maps on
# the other (names-test --stop-exec), so the exec's records and the new
# image's wait in two rings that memtop drains one after the other; each
# way round, the names must be the same (CI's TSan run once named a file
# mapping after the ld.so.cache its addresses had held, and a thread's
# stack over an unmapped file after the stack, when the exec's COMM came
# last).
. "$(dirname "$0")/../lib/lib.sh"
need_perf
need_python
: "${MEMTOP_NAMES_TEST:=$MEMTOP_BUILDDIR/tests/names/names-test}"
: "${MEMTOP_NAMES_LIB:=$MEMTOP_BUILDDIR/tests/names/libnames-lib.so}"
CHECK="$MEMTOP_SRCDIR/tests/names/names-check.py"
[ -x "$MEMTOP_NAMES_TEST" ] || skip "names-test not built ($MEMTOP_NAMES_TEST)"

# run NAME EXE [ENV...]: memtop launches EXE; frames in $TMP/NAME.jsonl.
# $opts: more memtop options; $targs: more names-test options.
opts=
targs=
run() {
	local name=$1 exe=$2 pid dog status
	shift 2
	env "$@" "$MEMTOP" -b --json -e faults -d 0.2 -s total -k 500 $opts \
		-o "$TMP/$name.jsonl" -- "$exe" --report "$TMP/$name-report.json" \
		--file "$TMP/$name-data.bin" --linger-ms 1500 $targs &
	pid=$!
	# names-test --stop-exec stops memtop: should it die before its
	# SIGCONT, memtop goes on after 60 s rather than wait stopped.
	( trap 'kill "$s" 2>/dev/null; exit 0' TERM
	  sleep 60 >/dev/null 2>&1 & s=$!
	  wait "$s" && kill -CONT "$pid" 2>/dev/null ) &
	dog=$!
	wait "$pid"
	status=$?
	kill "$dog" 2>/dev/null
	wait "$dog" 2>/dev/null
	[ "$status" -eq 0 ] || fail "$name: memtop exited $status"
	[ -s "$TMP/$name-report.json" ] || fail "$name: names-test wrote no report"
	python3 "$FRAMETOOL" check "$TMP/$name.jsonl" || fail "$name: frame invariants"
}

run plain "$MEMTOP_NAMES_TEST"
python3 "$CHECK" "$TMP/plain.jsonl" "$TMP/plain-report.json" ||
	fail "plain: names"

if command -v objcopy >/dev/null; then
	mkdir -p "$TMP/strip"
	objcopy --strip-all "$MEMTOP_NAMES_TEST" "$TMP/strip/names-test" &&
	objcopy --strip-all "$MEMTOP_NAMES_LIB" "$TMP/strip/libnames-lib.so" ||
		fail "objcopy --strip-all failed"
	if readelf -S "$TMP/strip/names-test" | grep -q '\.symtab'; then
		fail "stripped copy still has .symtab"
	fi
	# LD_LIBRARY_PATH beats the build tree's DT_RUNPATH.
	run stripped "$TMP/strip/names-test" LD_LIBRARY_PATH="$TMP/strip"
	python3 "$CHECK" "$TMP/stripped.jsonl" "$TMP/stripped-report.json" \
		--stripped-exe --lib-prefix "$TMP/strip/" || fail "stripped: names"
else
	skip_part "stripped variant: objcopy not installed (binutils)"
fi

# The exec's records on CPU M, the mappings on CPU N, both drained late.
if [ "$(getconf _NPROCESSORS_ONLN)" -ge 2 ] &&
	taskset -c 0,1 true 2>/dev/null; then
	for way in 10 01; do
		m=${way:0:1} c=${way:1:1}
		targs="--stop-exec $m --cpu $c" run "order$way" \
			"$MEMTOP_NAMES_TEST"
		python3 "$CHECK" "$TMP/order$way.jsonl" \
			"$TMP/order$way-report.json" ||
			fail "exec on CPU $m, mappings on CPU $c: names"
	done
else
	skip_part "records out of order: needs CPUs 0 and 1"
fi

# --granularity 2m: 2 MiB pages from the start, still named.
opts="--granularity 2m" run huge "$MEMTOP_NAMES_TEST"
python3 - "$TMP/huge.jsonl" "$TMP/huge-report.json" <<'PY' || fail "2m: pages"
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
report = json.load(open(sys.argv[2]))
final = frames[-1]
assert all(f["granularity"] == 2 << 20 for f in frames), "granularity"
pages = [p for p in final["pages"] if p["pid"] == report["pid"]]
assert pages and all(p["size"] == 2 << 20 and int(p["addr"], 16) % (2 << 20) == 0
                     for p in pages), pages[:3]
want = {int(w["addr"], 16) >> 21 for w in report["pages"]}
got = {int(p["addr"], 16) >> 21 for p in pages}
assert want <= got, f"2 MiB pages missing: {want - got}"
assert all(p["region"] for p in pages if int(p["addr"], 16) >> 21 in want), pages
print(f"ok: 2m: {len(pages)} pages of 2 MiB, all touched ones named")
PY
out=$("$MEMTOP" -b --granularity 3m -p $$ 2>&1)
[ $? -eq 2 ] && [ "$(printf '%s\n' "$out" | head -1 | grep -c granularity)" -eq 1 ] ||
	fail "--granularity 3m: want exit 2 and a one-line error, got: $out"

# Bad input stays harmless: a process that exits at once leaves pages
# without names, never a crash.
"$MEMTOP" -b --json -e faults -d 0.2 -o "$TMP/true.jsonl" -- /bin/true ||
	fail "memtop on /bin/true failed"
python3 "$FRAMETOOL" check "$TMP/true.jsonl" || fail "true: frame invariants"
finish
