#!/bin/bash
# The figures of issue 15 on another host, from a bundle (bench/bundle.sh):
#
#   BUNDLE/bench/host-run.sh [OUTDIR]     (default OUTDIR: /tmp/host-run)
#
# Host facts and event sources, memtop --list-events, the drain over 16,
# 128 and 512 rings with 0 to 15 drain threads, the frame's merge plain
# and draining (a thread plays the kernel meanwhile), decode + aggregate,
# bench-scale, memtop -a on every CPU beside a 16-thread workload (with
# and without drain threads), and the live collector's CPU a sample at
# 64, 1 Ki, 16 Ki and 256 Ki hot pages.  About 6 minutes on 16 CPUs;
# everything goes to OUTDIR/host-run.log too.  Run as root (tracefs,
# -a); nothing is installed: the libraries go to /tmp/mt.
D=$(cd "$(dirname "$0")/.." && pwd)
O=${1:-/tmp/host-run}
rm -rf /tmp/mt
mkdir -p /tmp/mt "$O" && cp "$D"/lib/* /tmp/mt/
exec > >(tee "$O/host-run.log") 2>&1
step() { echo; echo "=== $* ($(date +%T), load $(cut -d' ' -f1 /proc/loadavg))"; }
step host
grep -m1 'model name' /proc/cpuinfo; nproc; uname -r
echo "perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid)," \
     "max_sample_rate $(cat /proc/sys/kernel/perf_event_max_sample_rate)"
echo "event sources: $(ls /sys/bus/event_source/devices/ | tr '\n' ' ')"
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
step list-events
"$D"/ui/memtop --list-events
step drain
timeout 150 "$D"/bench/bench-drain --rings 16,128,512 --threads 0,2,4,8,15 \
	--samples 4000000
for m in plain draining; do
	step "merge $m"
	timeout 60 "$D"/bench/bench-drain --rings 128 --threads 2,4,8 \
		--pages 262144 --samples 30000000 --merge $m
done
step ingest
timeout 60 "$D"/bench/bench-ingest --pages 65536 --layout all --no-memory
step scale
timeout 40 "$D"/bench/bench-scale
for dt in "" 4; do
	step "memtop -a, 16 workload threads, MEMTOP_DRAIN_THREADS=$dt"
	"$D"/tools/memtop-workload --mode refault --interval-ms 0 --threads 16 \
		--hot 4096 --pages 8192 --duration 9 --report "$O/wl$dt.json" \
		--quiet &
	w=$!
	MEMTOP_DRAIN_THREADS=$dt timeout 30 "$D"/ui/memtop -a -b --json \
		-e faults -c 1 -d 1 -n 7 -o "$O/a$dt.jsonl"
	echo "memtop: exit $?"
	wait $w
	python3 "$D"/bench/frames-sum.py "$O/a$dt.jsonl" "$O/wl$dt.json"
done
step live
timeout 200 python3 -u "$D"/bench/bench-live.py --cpu-only \
	--memtop "$D"/ui/memtop --workload "$D"/tools/memtop-workload \
	--hot 64,1024,16384,262144
step end
