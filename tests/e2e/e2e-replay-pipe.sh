#!/bin/bash
# memtop -i with the aggregation on a thread of its own
# (MEMTOP_REPLAY_THREADS=2, collector/replay/replay_pipe.h) writes the
# same frames, byte for byte, as with the aggregation on the replay thread
# (=1), on captures that cut batches everywhere the pipe must wait
# (frames, and records other than samples, between samples):
#   - synthetic perf-mem-like captures (perfdata-tool gen: DATA_SRC and
#     WEIGHT, with and without PHYS_ADDR; 4 processes; LOST and
#     LOST_SAMPLES records between samples; frames of 0.25 s), whose
#     per-page totals the generator's truth file also gives;
#   - a real `perf record -e page-faults -c 1 -d` capture of the workload
#     (MMAP, COMM, EXIT records; skipped when perf cannot record here).
# The log must say that the second thread took every batch (=2) and that
# none ran (=1); a bad MEMTOP_REPLAY_THREADS is one line and exit 1.
. "$(dirname "$0")/../lib/lib.sh"
need_python
: "${MEMTOP_PERFDATA_TOOL:=$MEMTOP_BUILDDIR/tests/perfdata-tool}"
TOOL=$MEMTOP_PERFDATA_TOOL
[ -x "$TOOL" ] || skip "perfdata-tool not built ($TOOL)"

# both NAME FILE SAMPLES SECONDS: frames of SECONDS in each mode compared;
# the pipe's log.
both() {
	local name=$1 file=$2 samples=$3 interval=$4 t
	for t in 1 2; do
		MEMTOP_REPLAY_THREADS=$t "$MEMTOP" -i "$file" -b --json -d "$interval" \
			-s total -k 100000 --log "$TMP/$name.$t.log" \
			>"$TMP/$name.$t.jsonl" 2>"$TMP/$name.$t.err" ||
			{ fail "$name: memtop -i (threads $t) exited $?: $(head -1 "$TMP/$name.$t.err")"; return; }
	done
	local frames
	frames=$(wc -l <"$TMP/$name.1.jsonl")
	[ "$frames" -ge 3 ] || fail "$name: only $frames frames (want several, to cut batches at frames)"
	if cmp -s "$TMP/$name.1.jsonl" "$TMP/$name.2.jsonl"; then
		ok "$name: $frames frames the same byte for byte with one and two threads"
	else
		fail "$name: frames differ between one and two threads: $(cmp "$TMP/$name.1.jsonl" "$TMP/$name.2.jsonl" | head -1)"
	fi
	grep -q "aggregation thread" "$TMP/$name.1.log" &&
		fail "$name: MEMTOP_REPLAY_THREADS=1 started an aggregation thread"
	# Every sample went through the pipe: at least samples / 256 batches.
	local batches
	batches=$(sed -n 's/.*aggregation thread: \([0-9]*\) batches handed over.*/\1/p' \
		"$TMP/$name.2.log")
	if [ -z "$batches" ]; then
		fail "$name: MEMTOP_REPLAY_THREADS=2: no aggregation thread in the log"
	elif [ "$batches" -lt $((samples / 256)) ]; then
		fail "$name: $batches batches handed over for $samples samples"
	else
		ok "$name: the aggregation thread took $batches batches ($samples samples)"
	fi
}

for shape in phys nophys; do
	extra=()
	[ $shape = nophys ] && extra=(--no-phys)
	"$TOOL" gen "$TMP/$shape.data" --samples 60000 --nodes 4 --cpus 8 \
		--pages 2048 --pids 4 --seconds 3 --lost 6 --lost-samples 3 \
		--truth "$TMP/$shape.truth" "${extra[@]}" >/dev/null ||
		{ fail "$shape: perfdata-tool gen failed"; continue; }
	both "$shape" "$TMP/$shape.data" 60000 0.25
done
# The synthetic truth: every page's total in the final frame (one run
# checks both, as the frames are the same).
python3 "$MEMTOP_SRCDIR/tests/lib/perfdata-check.py" truth \
	"$TMP/phys.2.jsonl" "$TMP/phys.truth" 4 >/dev/null 2>"$TMP/truth.err" &&
	ok "phys: per-page totals (two threads) equal the generator's" ||
	fail "phys: per-page totals differ from the generator's: $(head -1 "$TMP/truth.err")"

WL=("$MEMTOP_WORKLOAD" --mode refault --rounds 40 --hot 512 --threads 2
    --duration 0 --quiet)
if perf_faults_part "perf page-fault capture" "$TMP/faults.data" "${WL[@]}"
then
	n=$(perf script -i "$TMP/faults.data" -F addr 2>/dev/null | wc -l)
	# The workload's 20 K faults take a few tenths of a second or less.
	both faults "$TMP/faults.data" "$n" 0.02
fi

MEMTOP_REPLAY_THREADS=3 "$MEMTOP" -i "$TMP/phys.data" -b --json \
	>/dev/null 2>"$TMP/bad.err"
status=$?
if [ $status -eq 1 ] && [ "$(wc -l <"$TMP/bad.err")" -eq 1 ] &&
   grep -q "MEMTOP_REPLAY_THREADS=3" "$TMP/bad.err"; then
	ok "MEMTOP_REPLAY_THREADS=3: one line, exit 1"
else
	fail "MEMTOP_REPLAY_THREADS=3: exit $status, $(wc -l <"$TMP/bad.err") lines: $(head -1 "$TMP/bad.err")"
fi
finish
