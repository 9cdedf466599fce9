#!/bin/bash
# Whether two memtop builds write the same frames on bench-replay's three
# capture shapes (a real page-fault capture of memtop-workload, perf-mem-
# like and system-wide PHYS_ADDR synthetic ones): `memtop -i FILE -b
# --json -d 1` of each, compared byte for byte.  A replay speed-up (issue
# 15) must not change a frame; the frames' correctness itself is what the
# replay tests check against perf script (e2e-replay*.sh).
#
#   bench/replay-same.sh [--quick] OLD_MEMTOP NEW_MEMTOP BUILDDIR
#
# BUILDDIR holds bench/bench-replay and tools/memtop-workload.  --quick:
# 1/100 of the samples.  Exits 0 when every shape's frames are the same,
# 1 when one differs (the first differing line is printed), 77 when the
# captures cannot be made (a shape perf cannot record here is left out
# and said so).
set -u
quick=
if [ "${1:-}" = --quick ]; then
	quick=--quick
	shift
fi
if [ $# -ne 3 ]; then
	echo "usage: $0 [--quick] OLD_MEMTOP NEW_MEMTOP BUILDDIR" >&2
	exit 2
fi
old=$1 new=$2 build=$3
dir=$(mktemp -d "${TMPDIR:-/tmp}/memtop-replay-same.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
if ! "$build/bench/bench-replay" $quick --keep "$dir" --write-only \
	--workload "$build/tools/memtop-workload" > "$dir/log" 2>&1; then
	cat "$dir/log" >&2
	echo "# SKIP: bench-replay could not write the captures"
	exit 77
fi
grep -m1 'model name' /proc/cpuinfo
ret=0 shapes=0
for shape in faults mem phys; do
	f=$dir/$shape.data
	if [ ! -s "$f" ]; then
		echo "$shape: left out (no capture: $(grep -m1 left "$dir/log"))"
		continue
	fi
	"$old" -i "$f" -b --json -d 1 > "$dir/$shape.old" 2>&1 || ret=1
	"$new" -i "$f" -b --json -d 1 > "$dir/$shape.new" 2>&1 || ret=1
	if cmp -s "$dir/$shape.old" "$dir/$shape.new"; then
		echo "$shape: same ($(wc -l < "$dir/$shape.new") frames," \
		     "$(wc -c < "$dir/$shape.new") bytes)"
	else
		echo "$shape: DIFFERENT"
		cmp "$dir/$shape.old" "$dir/$shape.new" | head -1
		ret=1
	fi
	shapes=$((shapes + 1))
done
[ "$shapes" -gt 0 ] || exit 77
exit $ret
