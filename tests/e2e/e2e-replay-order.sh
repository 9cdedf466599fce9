#!/bin/bash
# Replay order (memtop -i, man page: "one frame covers -d seconds of
# recorded time, cut at the samples' timestamps"): every frame of a
# synthetic capture holds exactly the samples the rule puts there, worked
# out here from the file's own timestamps.  Frame k covers
# [t0 + k d, t0 + (k + 1) d) with t0 the first sample's time; a sample at
# a frame's end opens the next frame; records are not reordered, so a
# sample older than the current frame counts in it and the clock never
# runs backwards: the final frame ends at the latest time seen, even when
# the last sample is older.  The capture's samples are 200 us apart, so
# one falls exactly on every frame boundary.
. "$(dirname "$0")/../lib/lib.sh"
need_python
: "${MEMTOP_PERFDATA_TOOL:=$MEMTOP_BUILDDIR/tests/perfdata-tool}"
TOOL=$MEMTOP_PERFDATA_TOOL
[ -x "$TOOL" ] || skip "perfdata-tool not built ($TOOL)"

"$TOOL" gen "$TMP/in.data" --samples 20000 --nodes 2 --cpus 4 --pages 256 \
	--seconds 4 >/dev/null || fail "gen failed"

# Two samples made older than their neighbours: one in the middle (it
# counts in the frame it is read in) and the last one (the final frame
# still ends at the latest time).  Writes the expected frames, one
# "samples time interval" line each.
python3 - "$TMP/in.data" "$TMP/order.data" "$TMP/expected" 0.5 <<'PY' || fail "cannot patch the capture"
import struct, sys
src, dst, out, d = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
b = bytearray(open(src, "rb").read())
off, size = struct.unpack_from("<QQ", b, 40)	# perf_file_header.data
pos, samples = off, []
while pos < off + size:
    typ, _, rsize = struct.unpack_from("<IHH", b, pos)
    if typ == 9:		# SAMPLE: identifier, ip, pid/tid, time, ...
        samples.append(pos)
    pos += rsize
def time(i):
    return struct.unpack_from("<Q", b, samples[i] + 32)[0]
t0 = time(0)
struct.pack_into("<Q", b, samples[7001] + 32, t0 + 1)
struct.pack_into("<Q", b, samples[-1] + 32, t0 + 2)
open(dst, "wb").write(b)

# The rule, applied to the patched times in file order.
dn = round(d * 1e9)
frames, n, start, end, clock = [], 0, t0, t0 + dn, t0
for i in range(len(samples)):
    clock = max(clock, time(i))
    while clock >= end:
        frames.append((n, end, end - start))
        n, start, end = 0, end, end + dn
    n += 1
final = max(clock, start)
frames.append((n, final, final - start))
with open(out, "w") as f:
    for n, t, iv in frames:
        f.write(f"{n} {(t - t0) / 1e9:.3f} {iv / 1e9:.3f}\n")
PY

"$MEMTOP" -i "$TMP/order.data" -b --json -k 1 -d 0.5 >"$TMP/out.jsonl" \
	2>"$TMP/err" || fail "memtop -i exited $?: $(cat "$TMP/err")"
python3 - "$TMP/out.jsonl" >"$TMP/got" <<'PY' || fail "cannot read the frames"
import json, sys
for line in open(sys.argv[1]):
    f = json.loads(line)
    print(f"{f['totals']['samples']} {f['time']:.3f} {f['interval']:.3f}")
PY
if diff "$TMP/expected" "$TMP/got" >"$TMP/diff"; then
	ok "$(wc -l <"$TMP/got") frames: each holds the samples of its recorded time, final frame at the latest time"
else
	fail "frames differ from the rule (expected, got: samples time interval):"
	head -n 20 "$TMP/diff"
fi
finish
