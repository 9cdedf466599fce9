#!/bin/bash
# Replay order (memtop -i; man page, "Replay"): records are handed to the
# frames in time order, as perf's ordered events hand them to perf script
# (sorted within FINISHED_ROUND windows), and frames are cut at sample
# time: frame k covers [t0 + k d, t0 + (k + 1) d) with t0 the first
# sample's time, a sample at a frame's end opens the next frame, and the
# final frame ends at the latest time seen.
#
# A synthetic 4-CPU capture (samples 200 us apart, cpu i % 4) is rewritten
# as perf record writes a system-wide capture: in passes of 400 samples,
# each pass's samples CPU by CPU (every CPU's ring drained in turn, a ring
# read late in a pass holding samples newer than one read early in the
# next), so file order is not time order, with a FINISHED_ROUND after each
# pass.
#   rounds:    that file.  One sample of a late pass is also made older
#              than everything handed out by then: perf hands it out in
#              its turn (out of order), and memtop counts it in the frame
#              it is read in; and the last sample, made old too, comes
#              after two rounds in a row (which hand out everything), so
#              it is handed out last: the final frame still ends at the
#              latest time seen.
#   no-rounds: the same passes without FINISHED_ROUND (as memtop --record
#              writes): the reorder window sorts it whole.
# The oracle replays perf's rule (tools/perf/util/ordered-events.c) in
# Python on the file's own bytes; its order is first checked against
# `perf script`'s own order of the same file, then memtop's frames
# against the frames that order gives.
. "$(dirname "$0")/../lib/lib.sh"
need_python
: "${MEMTOP_PERFDATA_TOOL:=$MEMTOP_BUILDDIR/tests/perfdata-tool}"
TOOL=$MEMTOP_PERFDATA_TOOL
[ -x "$TOOL" ] || skip "perfdata-tool not built ($TOOL)"

"$TOOL" gen "$TMP/in.data" --samples 20000 --nodes 2 --cpus 4 --pages 256 \
	--seconds 4 >/dev/null || fail "gen failed"

# rewrite IN OUT ROUNDS(0|1) EXPECTED-FRAMES EXPECTED-ORDER
cat >"$TMP/rewrite.py" <<'PY'
import struct, sys
src, dst, rounds, out, order_out = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4], sys.argv[5]
PASS, D = 400, 500000000			# samples a pass, -d 0.5
b = bytearray(open(src, "rb").read())
off, size = struct.unpack_from("<QQ", b, 40)	# perf_file_header.data
recs, pos = [], off
while pos < off + size:
    typ, _, rsize = struct.unpack_from("<IHH", b, pos)
    recs.append((typ, bytearray(b[pos:pos + rsize])))
    pos += rsize
head = [r for r in recs if r[0] != 9]		# COMM records first
samples = [r[1] for r in recs if r[0] == 9]	# SAMPLE: id, ip, tid, time, addr, cpu
t = lambda s: struct.unpack_from("<Q", s, 32)[0]
cpu = lambda s: struct.unpack_from("<I", s, 48)[0]
assert all(t(samples[i]) < t(samples[i + 1]) for i in range(len(samples) - 1))
t0 = t(samples[0])
# A ring read late in one pass holds samples newer than those of a ring
# read early in the next: CPU c's passes start c/4 of a pass earlier, so
# a pass holds samples older than the newest of the pass before it (but
# none older than the newest of the pass before that: perf's rule).
passes = [[] for _ in range(len(samples) // PASS + 2)]
for i, smp in enumerate(samples):
    passes[(i + cpu(smp) * PASS // 4) // PASS].append(smp)
passes = [p for p in passes if p]
if rounds:	# a sample of pass 30, older than every sample of passes 0..28
    struct.pack_into("<Q", passes[30][5], 32, t0 + 1)
ROUND = ("round", struct.pack("<IHH", 68, 0, 8))
last = passes[-1].pop() if rounds else None
stream = [("rec", r[1]) for r in head]
for p in passes:
    stream += [("rec", s) for s in sorted(p, key=cpu)]	# ring by ring
    if rounds:
        stream.append(ROUND)
if rounds:	# two rounds in a row hand out all; then an old sample, last
    struct.pack_into("<Q", last, 32, t0 + 2)
    stream += [ROUND, ("rec", last)]
data = b"".join(bytes(x[1]) for x in stream)
delta = len(data) - size
# Whatever lies after the data moves by delta: the attrs and their ids,
# the feature section table (right after the data) and its sections.
def shift(at):
    o = struct.unpack_from("<Q", b, at)[0]
    if o >= off + size:
        struct.pack_into("<Q", b, at, o + delta)
attr_size, a_off, a_size = struct.unpack_from("<QQQ", b, 16)
for e in range(a_off, a_off + a_size, attr_size):
    shift(e + attr_size - 16)			# perf_file_attr.ids.offset
shift(24)					# perf_file_header.attrs.offset
feats = bin(int.from_bytes(b[72:104], "little")).count("1")
for k in range(feats):
    shift(off + size + 16 * k)
b = b[:off] + data + b[off + size:]
struct.pack_into("<Q", b, 48, len(data))
open(dst, "wb").write(b)

# perf's ordered events: each FINISHED_ROUND hands out, sorted, what is
# no newer than the newest time read before the previous one; the rest
# at the end.  Records without a sample's time (COMM here has sample_id
# with time) sort the same way.
queue, order, seen, nxt, seq = [], [], 0, 0, 0
def flush(limit):
    global queue
    queue.sort()
    order.extend(q for q in queue if q[0] <= limit)
    queue = [q for q in queue if q[0] > limit]
for kind, r in stream:
    if kind == "round":
        flush(nxt)
        nxt = seen
        continue
    typ = struct.unpack_from("<I", r, 0)[0]
    tm = t(r) if typ == 9 else struct.unpack_from("<Q", r, len(r) - 24)[0]
    queue.append((tm, seq, typ))
    seq += 1
    seen = max(seen, tm)
flush(1 << 64)
sample_times = [tm for tm, _, typ in order if typ == 9]
with open(order_out, "w") as f:
    f.writelines(f"{x}\n" for x in sample_times)
frames, n, start, end, clock = [], 0, t0, t0 + D, t0
for tm in sample_times:
    clock = max(clock, tm)
    while clock >= end:
        frames.append((n, end, end - start))
        n, start, end = 0, end, end + D
    n += 1
final = max(clock, start)
frames.append((n, final, final - start))
with open(out, "w") as f:
    for n, tt, iv in frames:
        f.write(f"{n} {(tt - t0) / 1e9:.3f} {iv / 1e9:.3f}\n")
PY

for v in rounds no-rounds; do
	r=0
	[ "$v" = rounds ] && r=1
	python3 "$TMP/rewrite.py" "$TMP/in.data" "$TMP/$v.data" $r "$TMP/$v.expected" "$TMP/$v.order" ||
		{ fail "$v: cannot rewrite the capture"; continue; }
	cmp -s "$TMP/in.data" "$TMP/$v.data" && fail "$v: the rewrite changed nothing"
	if command -v perf >/dev/null; then
		# perf script's own order of the same file (time in ns).
		perf script -i "$TMP/$v.data" -F time --ns 2>/dev/null |
			tr -d ' :.' | sed 's/^0*//' >"$TMP/$v.perf-order"
		if cmp -s "$TMP/$v.order" "$TMP/$v.perf-order"; then
			ok "$v: the oracle hands out the $(wc -l <"$TMP/$v.order") samples in perf script's order"
		else
			fail "$v: the oracle's order differs from perf script's"
		fi
	else
		skip_part "$v: perf script cross-check of the oracle (perf not installed)"
	fi
	"$MEMTOP" -i "$TMP/$v.data" -b --json -k 1 -d 0.5 --log "$TMP/$v.log" \
		>"$TMP/$v.jsonl" 2>"$TMP/$v.err" ||
		{ fail "$v: memtop -i exited $?: $(cat "$TMP/$v.err")"; continue; }
	python3 - "$TMP/$v.jsonl" >"$TMP/$v.got" <<'PY' || fail "$v: cannot read the frames"
import json, sys
for line in open(sys.argv[1]):
    f = json.loads(line)
    print(f"{f['totals']['samples']} {f['time']:.3f} {f['interval']:.3f}")
PY
	if diff "$TMP/$v.expected" "$TMP/$v.got" >"$TMP/$v.diff"; then
		ok "$v: $(wc -l <"$TMP/$v.got") frames, each with the samples the time order puts there"
	else
		fail "$v: frames differ from the time-sorted oracle (expected, got: samples time interval):"
		head -n 20 "$TMP/$v.diff"
	fi
	want_unordered=0
	[ "$v" = rounds ] && want_unordered=2
	grep -q "time order: .* $want_unordered out of order" "$TMP/$v.log" &&
		ok "$v: the log counts $want_unordered record(s) out of order" ||
		fail "$v: log: $(grep 'time order' "$TMP/$v.log")"
done
finish
