#!/bin/bash
# memtop -i counts the kernel's loss records exactly: a synthetic capture
# (perfdata-tool gen --lost N --lost-samples M) holds N LOST records (the
# k-th says 3k samples were lost) and M LOST_SAMPLES records (100 + k)
# between its samples, at known times.  In the JSON frames:
#   - each frame's totals.lost is the sum of the records inside the frame
#     (frames are cut at sample time, -d 1 from the first sample);
#   - the final cumulative.lost is the sum of them all;
#   - every sample of the file is still counted as a sample.
# The generator's list of records is checked first against perf's own
# reader (perf script --show-lost-events, perf report --stats), so the
# oracle does not rest on memtop's writer.  Both byte orders.
. "$(dirname "$0")/../lib/lib.sh"
need_python
: "${MEMTOP_PERFDATA_TOOL:=$MEMTOP_BUILDDIR/tests/perfdata-tool}"
[ -x "$MEMTOP_PERFDATA_TOOL" ] || skip "perfdata-tool not built"

SAMPLES=24000
SECONDS_REC=12
# Record k of n sits after sample (2k + 1) * SAMPLES / (2n): with these
# counts none falls on a frame boundary (a multiple of 2000 samples).
NLOST=8
NLOSTS=4
PERF=$(command -v perf || true)

for order in native swapped; do
	swap=()
	[ "$order" = swapped ] && swap=(--swap)
	data=$TMP/$order.data
	truth=$TMP/$order.lost
	if ! "$MEMTOP_PERFDATA_TOOL" gen "$data" --samples $SAMPLES --seconds $SECONDS_REC \
		--pids 2 --lost $NLOST --lost-samples $NLOSTS --lost-truth "$truth" "${swap[@]}"; then
		fail "$order: perfdata-tool gen failed"
		continue
	fi
	[ "$(grep -c '^LOST ' "$truth")" -eq $NLOST ] &&
	[ "$(grep -c '^LOST_SAMPLES ' "$truth")" -eq $NLOSTS ] ||
		fail "$order: generator wrote $(wc -l <"$truth") loss records, want $((NLOST + NLOSTS))"

	# The file as perf reads it.
	if [ -n "$PERF" ]; then
		"$PERF" script -i "$data" --show-lost-events 2>/dev/null |
			sed -n 's/.*PERF_RECORD_LOST lost \([0-9]*\).*/\1/p' >"$TMP/$order.perf-lost"
		awk '$1 == "LOST" { print $3 }' "$truth" >"$TMP/$order.want-lost"
		if cmp -s "$TMP/$order.perf-lost" "$TMP/$order.want-lost"; then
			ok "$order: perf script reads the $NLOST LOST records the generator wrote"
		else
			fail "$order: perf script LOST records: $(tr '\n' ' ' <"$TMP/$order.perf-lost"), want $(tr '\n' ' ' <"$TMP/$order.want-lost")"
		fi
		want_ls=$(awk '$1 == "LOST_SAMPLES" { n += $3 } END { print n + 0 }' "$truth")
		got_ls=$("$PERF" report -i "$data" --stats 2>/dev/null |
			awk '/LOST_SAMPLES events:/ { v = $3 } END { print v }')
		# perf's --stats ends with the lost sample total over all
		# LOST_SAMPLES records.
		[ "$got_ls" = "$want_ls" ] &&
			ok "$order: perf report --stats: LOST_SAMPLES total $got_ls" ||
			fail "$order: perf report --stats LOST_SAMPLES total '$got_ls', want $want_ls"
	else
		echo "# SKIP $order: perf cross-check of the synthetic file (perf not installed)"
	fi

	if ! "$MEMTOP" -i "$data" -b --json -d 1 -k 5 >"$TMP/$order.jsonl" 2>"$TMP/$order.err"; then
		fail "$order: memtop -i failed: $(cat "$TMP/$order.err")"
		continue
	fi
	python3 - "$TMP/$order.jsonl" "$truth" $SAMPLES <<'PY' && ok "$order: LOST and LOST_SAMPLES counted exactly, frame by frame" || fail "$order: lost counters"
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
recs = [l.split() for l in open(sys.argv[2])]
samples = int(sys.argv[3])
T0 = 1000000000000          # perfdata-synth's first sample time (ns)
want = {}
for kind, t, n in recs:
    seq = (int(t) - T0) // 1000000000 + 1     # -d 1 from the first sample
    want[seq] = want.get(seq, 0) + int(n)
bad = []
for f in frames:
    w = want.get(f["seq"], 0)
    if f["totals"]["lost"] != w:
        bad.append(f"frame {f['seq']}: lost {f['totals']['lost']}, want {w}")
total = sum(int(n) for _, _, n in recs)
if frames[-1]["cumulative"]["lost"] != total:
    bad.append(f"cumulative lost {frames[-1]['cumulative']['lost']}, want {total}")
if sum(f["totals"]["lost"] for f in frames) != total:
    bad.append("sum of the frames' lost is not the total")
got_s = frames[-1]["cumulative"]["samples"] + frames[-1]["cumulative"]["unattributed"]
if got_s != samples:
    bad.append(f"samples {got_s}, want {samples}")
if max(want) > len(frames):
    bad.append(f"{len(frames)} frames, records up to frame {max(want)}")
for b in bad:
    print(b)
print(f"lost per frame {[f['totals']['lost'] for f in frames]}, total {total}")
sys.exit(1 if bad else 0)
PY
done
finish
