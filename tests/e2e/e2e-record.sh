#!/bin/bash
# memtop --record FILE while watching the workload live:
#  (b) `perf script -i FILE` and `perf report -i FILE --stdio` read it and
#      count as many samples as memtop decoded (cumulative samples plus
#      unattributed), and perf's dump sees FINISHED_ROUND records (one
#      each time every ring was read to its end); `memtop -i FILE` gives the same per-page totals as
#      the live run's final frame;
#  an existing FILE is refused without --force (one-line error, exit 1,
#  file untouched) and replaced with it; the topology features come from
#  the topology memtop used (a 2-node sysfs fixture shows 2 nodes).
# Both faults variants: the software event, and the tracepoint when root
# with tracefs can open it.
. "$(dirname "$0")/../lib/lib.sh"
need_perf
need_python
CHECK="$MEMTOP_SRCDIR/tests/lib/perfdata-check.py"
command -v perf >/dev/null ||
	skip_part "perf script and perf report checks: perf not installed (Debian package linux-perf)"

WL=("$MEMTOP_WORKLOAD" --mode refault --rounds 5 --hot 16 --pages 256
    --threads 2 --interval-ms 5 --duration 0 --quiet)

# run_variant NAME [ENV...]
run_variant() {
	local name=$1 n perf_n
	shift
	env "$@" "$MEMTOP" --record "$TMP/$name.data" -b --json -s total \
		-k 100000 -d 0.2 -o "$TMP/$name-live.jsonl" -- "${WL[@]}" \
		2>"$TMP/$name.err"
	local status=$?
	[ $status -eq 0 ] || { fail "$name: memtop --record exited $status: $(cat "$TMP/$name.err")"; return; }
	n=$(python3 "$CHECK" samples "$TMP/$name-live.jsonl")
	[ "$n" -gt 0 ] || fail "$name: no samples recorded"
	if command -v perf >/dev/null; then
		perf script -i "$TMP/$name.data" >"$TMP/$name.script" 2>"$TMP/$name.perr" ||
			fail "$name: perf script failed: $(head -1 "$TMP/$name.perr")"
		# One line per sample; the allocation events' (issue 18)
		# are not memtop's samples.
		perf_n=$(perf script -i "$TMP/$name.data" -F event 2>/dev/null |
			grep -vc 'raw_syscalls:sys_exit')
		[ "$perf_n" -eq "$n" ] && ok "$name: perf script reads $perf_n samples, as memtop counted" ||
			fail "$name: perf script $perf_n samples, memtop $n"
		# -n: exact sample counts per process (the header rounds to 4K).
		# --no-children -g none: the allocation events' call chains
		# would turn on perf's children columns.
		perf report -i "$TMP/$name.data" --stdio -n --sort pid \
			--no-children -g none \
			>"$TMP/$name.report" 2>"$TMP/$name.rerr" ||
			fail "$name: perf report failed: $(head -1 "$TMP/$name.rerr")"
		perf_n=$(awk "/^# Samples: .* of event / { alloc = /sys_exit/ }
			/^ +[0-9.]+%/ && !alloc { n += \$2 } END { print n + 0 }" \
			"$TMP/$name.report")
		[ "$perf_n" -eq "$n" ] && ok "$name: perf report counts $perf_n samples" ||
			fail "$name: perf report counts $perf_n samples, memtop $n"
		# Rounds, as perf record writes them: perf's own dump sees them.
		perf_n=$(perf report -D -i "$TMP/$name.data" 2>/dev/null | grep -c PERF_RECORD_FINISHED_ROUND)
		[ "$perf_n" -ge 1 ] && ok "$name: perf report -D sees $perf_n FINISHED_ROUND records" ||
			fail "$name: no FINISHED_ROUND record in the file"
		if grep -qiE "error|incompatible|non matching|unsupported" "$TMP/$name.perr" "$TMP/$name.rerr"; then
			fail "$name: perf complains: $(cat "$TMP/$name.perr" "$TMP/$name.rerr" | head -2)"
		fi
	fi
	"$MEMTOP" -i "$TMP/$name.data" -b --json -s total -k 100000 \
		>"$TMP/$name-replay.jsonl" || fail "$name: memtop -i failed"
	python3 "$FRAMETOOL" check "$TMP/$name-replay.jsonl" >/dev/null ||
		fail "$name: replay frame invariants"
	python3 "$CHECK" frames "$TMP/$name-live.jsonl" "$TMP/$name-replay.jsonl" &&
		ok "$name: replay gives the live run's per-page totals" ||
		fail "$name: replay differs from the live run"
}

why=$(tracepoint_why)
if [ -z "$why" ]; then
	run_variant tracepoint
	python3 "$FRAMETOOL" get "$TMP/tracepoint-replay.jsonl" \
		'f["has_kinds"] and f["cumulative"]["stores"] > 0' | grep -qx True &&
		ok "tracepoint: replay splits loads from stores" ||
		fail "tracepoint: replay lost the load/store split"
else
	skip_part_ci "tracepoint variant: $why"
fi
run_variant software MEMTOP_FAULTS_NO_TRACEPOINT=1

# An existing file is not replaced without --force.
cp "$TMP/software.data" "$TMP/keep.data"
"$MEMTOP" --record "$TMP/software.data" -b -- true >"$TMP/out" 2>"$TMP/err"
status=$?
[ $status -eq 1 ] || fail "existing file: exit $status, want 1"
[ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q -- "--force" "$TMP/err" &&
	ok "existing file: $(cat "$TMP/err")" || fail "existing file: stderr: $(cat "$TMP/err")"
cmp -s "$TMP/software.data" "$TMP/keep.data" || fail "existing file was changed"
MEMTOP_FAULTS_NO_TRACEPOINT=1 "$MEMTOP" --record "$TMP/software.data" --force -b \
	-- "${WL[@]}" >/dev/null 2>&1 || fail "--force: memtop failed"
cmp -s "$TMP/software.data" "$TMP/keep.data" && fail "--force did not replace the file"
"$MEMTOP" -i "$TMP/software.data" -b >/dev/null || fail "--force: replaced file unreadable"

# Topology features follow the topology memtop used: a 2-node sysfs
# fixture (per-thread channels with -p: the fixture's CPUs need not exist).
"$MEMTOP_WORKLOAD" --mode refault --rounds 0 --hot 8 --interval-ms 20 \
	--duration 3 --quiet &
wl=$!
cleanup_hooks+=("kill_own $wl")
sleep 0.2
MEMTOP_SYSFS_ROOT="$MEMTOP_SRCDIR/tests/fixtures/sysfs/numa-2node" MEMTOP_FAULTS_NO_TRACEPOINT=1 \
	"$MEMTOP" -e faults -p $wl -n 2 -d 0.3 --record "$TMP/node2.data" -b \
	>/dev/null 2>"$TMP/node2.err" ||
	fail "2-node fixture: memtop failed: $(cat "$TMP/node2.err")"
"$MEMTOP" -i "$TMP/node2.data" -b --json >"$TMP/node2.jsonl" 2>&1 &&
	python3 "$FRAMETOOL" get "$TMP/node2.jsonl" '[n["node"] for n in f["nodes"]]' |
	grep -qx "\[0, 1\]" && ok "2-node fixture: the recording shows nodes 0 and 1" ||
	fail "2-node fixture: $(head -c 300 "$TMP/node2.jsonl")"
kill $wl 2>/dev/null
wait $wl 2>/dev/null

# A run that fails before recording leaves no file behind.
"$MEMTOP" --record "$TMP/none.data" -b -p 999999999 >/dev/null 2>&1
[ -e "$TMP/none.data" ] && fail "a failed run left $TMP/none.data" ||
	ok "a failed run leaves no recording behind"
finish
