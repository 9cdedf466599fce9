#!/bin/bash
# -b without --json: a readable block per frame, exactly -n frames, -k rows,
# into -o FILE; exit 0 when memtop ends the command itself.
. "$(dirname "$0")/../lib/lib.sh"
need_perf

timeout 20 "$MEMTOP" -b -n 2 -d 0.3 -k 3 -o "$TMP/out.txt" -- \
	"$MEMTOP_WORKLOAD" --mode refault --hot 8 --pages 64 --duration 0 --quiet
status=$?
[ "$status" -eq 0 ] || fail "exit $status"
n=$(grep -c '^memtop frame ' "$TMP/out.txt")
[ "$n" -eq 2 ] || fail "want 2 frame headers, got $n"
rows=$(grep -Ec '^ +0x[0-9a-f]+ +[0-9]+ ' "$TMP/out.txt")
[ "$rows" -eq 6 ] || fail "want 3 page rows per frame (6), got $rows"
grep -q '^samples [0-9]*: loads' "$TMP/out.txt" || fail "no samples line"
grep -q 'lost 0, throttled 0' "$TMP/out.txt" || fail "loss counters not shown"
grep -q '^nodes: 0:' "$TMP/out.txt" || fail "no per-node line"
[ "$failures" -eq 0 ] && ok "text batch: 2 frames, 3 rows each, counters and nodes"
finish
