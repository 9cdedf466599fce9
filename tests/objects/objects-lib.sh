# What the objects tests share, sourced after tests/lib/lib.sh: perf,
# python and the objects test program, or a skip; the --list-events text
# in $TMP/list.txt.
need_perf
need_python
: "${MEMTOP_OBJECTS_TEST:=$MEMTOP_BUILDDIR/tests/objects/objects-test}"
[ -x "$MEMTOP_OBJECTS_TEST" ] || skip "objects-test not built"
"$MEMTOP" --list-events > "$TMP/list.txt" 2>&1
