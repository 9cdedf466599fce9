#!/bin/bash
# The data addresses memtop --record writes, read back by perf (not by
# memtop's reader): `perf script -F addr` on the recording of a workload
# with a known hot set, every fault sampled (-c 1, launched with --: from
# its first instruction).
#   - every hot page the workload reports has exactly as many samples in
#     perf's listing as the workload counted faults on it;
#   - every page of memtop's own final frame (-s total) has as many
#     samples in perf's listing as memtop counted there, and perf lists no
#     page memtop did not count;
#   - perf lists as many samples as memtop counted in all.
# Both faults variants: the software event, and the tracepoint (the load/
# store split), whose samples carry the address in their tracepoint
# payload; the tracepoint variant runs in a private mount namespace with
# tracefs mounted there when the machine has not mounted it (root only).
. "$(dirname "$0")/../lib/lib.sh"
need_perf
need_python
PERF=$(command -v perf) || skip "perf not installed (the oracle is perf script)"

# The workload without LeakSanitizer in a sanitizer build: its check at
# exit runs in a tracer process of its own that memtop follows and records,
# whose faults on the workload's pages perf then lists too.
WL=(env ASAN_OPTIONS=detect_leaks=0 "$MEMTOP_WORKLOAD" --mode refault --rounds 20 --hot 16 --pages 256
    --threads 2 --interval-ms 2 --duration 0 --quiet)

# run_variant NAME [ENV...]
run_variant() {
	local name=$1 status
	shift
	env "$@" "$MEMTOP" -e faults -c 1 --record "$TMP/$name.data" -b --json -s total \
		-k 100000 -d 0.2 -o "$TMP/$name.jsonl" -- "${WL[@]}" \
		--report "$TMP/$name.report" 2>"$TMP/$name.err"
	status=$?
	[ $status -eq 0 ] || { fail "$name: memtop --record exited $status: $(cat "$TMP/$name.err")"; return; }
	# The allocation events' samples (issue 18) carry ADDR too: told
	# apart by their event.
	if ! "$PERF" script -i "$TMP/$name.data" -F addr >/dev/null 2>"$TMP/$name.perr" ||
		! "$PERF" script -i "$TMP/$name.data" -F event,addr >"$TMP/$name.addr" 2>"$TMP/$name.perr"; then
		fail "$name: perf script -F addr refuses memtop's file: $(grep -v '^$' "$TMP/$name.perr" | head -2 | tr '\n' ' ')"
		return
	fi
	python3 - "$TMP/$name.addr" "$TMP/$name.report" "$TMP/$name.jsonl" "$name" <<'PY' || fail "$name: perf's addresses"
import json, sys
from collections import Counter
addr_file, report_file, frames_file, name = sys.argv[1:5]
perf = Counter()
n = 0
for line in open(addr_file):
    line = line.strip()
    if not line or 'raw_syscalls:sys_exit' in line:
        continue
    perf[int(line.split()[-1], 16) & ~0xfff] += 1
    n += 1
report = json.load(open(report_file))
frames = [json.loads(l) for l in open(frames_file)]
final = frames[-1]
bad = []
# The workload's own counts.
for h in report["hot"]:
    a = int(h["addr"], 16)
    if perf[a] != h["faults"]:
        bad.append(f"hot page {h['addr']}: perf lists {perf[a]} samples, the workload made {h['faults']} faults")
# memtop's own page list, against perf.
lost = final["cumulative"]["lost"]
mem = {int(p["addr"], 16): p["total"] for p in final["pages"] if p["pid"] == report["pid"]}
for a, t in mem.items():
    if perf[a] != t:
        bad.append(f"page {a:#x}: memtop {t}, perf {perf[a]}")
extra = [a for a in perf if a not in mem and perf[a]]
want = final["cumulative"]["samples"] + final["cumulative"]["unattributed"]
if len(mem) < len(final["pages"]):
    # pages of other pids (none expected from this workload)
    bad.append(f"pages of other processes in the frame: {len(final['pages']) - len(mem)}")
if extra:
    bad.append(f"{len(extra)} pages in perf's listing that memtop did not count, e.g. {extra[0]:#x}")
if n != want:
    bad.append(f"perf lists {n} samples, memtop counted {want}")
if lost:
    bad.append(f"memtop lost {lost} samples: counts cannot be exact")
for b in bad[:10]:
    print(f"{name}: {b}")
if not bad:
    print(f"ok: {name}: perf script -F addr: {n} samples; {len(report['hot'])} hot pages "
          f"as the workload counted them ({sum(h['faults'] for h in report['hot'])} faults), "
          f"{len(mem)} pages as memtop counted them")
sys.exit(1 if bad else 0)
PY
}

if [ "${1:-}" = "--tracepoint-in-namespace" ]; then
	# Inside unshare -m: mount tracefs here only.
	mount -t tracefs nodev /sys/kernel/tracing 2>"$TMP/mount.err" ||
		skip "cannot mount tracefs in a private namespace: $(cat "$TMP/mount.err")"
	[ -d /sys/kernel/tracing/events/exceptions/page_fault_user ] ||
		skip "this kernel has no exceptions:page_fault_user tracepoint"
	run_variant tracepoint
	finish
fi

run_variant software MEMTOP_FAULTS_NO_TRACEPOINT=1

if [ -d /sys/kernel/tracing/events/exceptions/page_fault_user ] && [ "$(id -u)" -eq 0 ]; then
	run_variant tracepoint
elif [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null; then
	unshare -m --propagation private bash "$0" --tracepoint-in-namespace
	rc=$?
	case $rc in
	0) ;;
	77) echo "# SKIP tracepoint variant: see the SKIP line above" ;;
	*) fail "tracepoint variant (in a private mount namespace) failed" ;;
	esac
else
	echo "# SKIP tracepoint variant: needs root (tracefs and the tracepoint's RAW data)"
fi
finish
