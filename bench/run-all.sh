#!/bin/bash
# Every performance figure (issues 7 and 15), full size, one after the other:
#
#   bench/run-all.sh [BUILDDIR]        (default: build; use a release build
#                                       with line information, as scripts/demo
#                                       makes: meson setup build-rel
#                                       -Dbuildtype=release -Ddebug=true;
#                                       touches.sh needs it to take the
#                                       ring's misses off)
#
# decode + aggregate, memory per page and growth stalls (bench-ingest;
# then again with every sample's ip independent of its page, the side
# tables' worst case),
# frame build (bench-frame), one collector over 2..512 per-CPU rings
# (bench-drain), lines and pages touched a sample (touches.sh, with and
# without the side tables), live collector CPU, latency, losses and
# overhead (bench-live.py), instructions per sample (callgrind.sh) and
# replay beside perf report (bench-replay).  Each prints the machine it
# ran on.  Takes 10-20 minutes and about 3 GB of memory at 10 Mi pages;
# run it on an otherwise idle machine: wall-clock figures follow the load.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
status=0
run() {
	echo
	echo "### $*"
	"$@" || status=1
}
run "$build/bench/bench-ingest"
run "$build/bench/bench-ingest" --ips uniform --no-memory
run "$build/bench/bench-frame"
run "$build/bench/bench-drain"
run "$build/bench/bench-sitetab"
run "$src/bench/touches.sh" "$build"
run "$src/bench/touches.sh" --no-sides "$build"
run python3 "$src/bench/bench-live.py" --memtop "$build/ui/memtop" \
	--workload "$build/tools/memtop-workload"
run python3 "$src/bench/bench-live.py" --memtop "$build/ui/memtop" \
	--workload "$build/tools/memtop-workload" --hot 64,1024,16384,262144
run "$src/bench/callgrind.sh" "$build"
run "$src/bench/callgrind.sh" --ips uniform "$build"
run "$src/bench/callgrind.sh" --stream uniform --pages "4096 16384 65536" \
	--samples 1000000 "$build"
run "$build/bench/bench-replay" --memtop "$build/ui/memtop" \
	--workload "$build/tools/memtop-workload"
exit $status
