#!/bin/bash
# Names end to end on the live `faults` source: memtop launches
# tests/names/names-test, which faults one page in each of its executable's
# .data and .bss, its shared library's .data, its heap, a thread's stack
# and a file mapping, and reports the names expected; the frames must name
# each region and symbol, the code sites and the code view must name the
# touching functions, line heat must add up.  Then the same with a
# stripped copy of the executable and library (objcopy --strip-all): the
# executable degrades to PATH+0xOFF without symbols, the library keeps its
# exported symbols through .dynsym.
. "$(dirname "$0")/lib.sh"
need_perf
need_python
: "${MEMTOP_NAMES_TEST:=$MEMTOP_BUILDDIR/tests/names/names-test}"
: "${MEMTOP_NAMES_LIB:=$MEMTOP_BUILDDIR/tests/names/libnames-lib.so}"
CHECK="$MEMTOP_SRCDIR/tests/names/names-check.py"
[ -x "$MEMTOP_NAMES_TEST" ] || skip "names-test not built ($MEMTOP_NAMES_TEST)"

# run NAME EXE [ENV...]: memtop launches EXE; frames in $TMP/NAME.jsonl.
run() {
	local name=$1 exe=$2
	shift 2
	env "$@" "$MEMTOP" -b --json -e faults -d 0.2 -s total -k 500 \
		-o "$TMP/$name.jsonl" -- "$exe" --report "$TMP/$name-report.json" \
		--file "$TMP/$name-data.bin" --linger-ms 1500
	local status=$?
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
	echo "note: objcopy not installed (binutils); stripped variant not run"
fi

# Bad input stays harmless: a process that exits at once leaves pages
# without names, never a crash.
"$MEMTOP" -b --json -e faults -d 0.2 -o "$TMP/true.jsonl" -- /bin/true ||
	fail "memtop on /bin/true failed"
python3 "$FRAMETOOL" check "$TMP/true.jsonl" || fail "true: frame invariants"
finish
