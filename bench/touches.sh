#!/bin/bash
# The machine-independent proxy of the per-sample cost (issue 15): random
# cache lines and random 4 KiB pages the collector touches per sample
# beyond the ring, from bench-ingest under valgrind --tool=cachegrind.
#
#   bench/touches.sh [--quick] [--no-sides] [--layouts "L..."] [BUILDDIR]
#                                             (default BUILDDIR: build)
#
# lines   misses of a simulated 1 MiB 16-way cache of 64-byte lines (an
#         L2): the random trips to the last-level cache or memory; beside
#         them, the misses of a 32 KiB 8-way L1 ("L1 lines")
# pages   misses of a simulated 1536-entry 12-way second-level TLB: a
#         cache of 4 KiB "lines" (cachegrind's LL with 4096-byte lines),
#         the page walks; beside them, a 64-entry 4-way first-level DTLB
#         (its D1, "L1 pages")
# Both are counted only in memtop's own functions (those the memtop
# libraries of BUILDDIR define, with all they inline): not the benchmark
# writing records or building its stream, not libc (malloc and memset
# of a table's growth are left out: amortized, they are a few lines a
# thousand samples).  The ring is read in order once, and that is what
# the "beyond the ring" of the target means, so its reads do not count:
# - in the L1 columns, its share is its record bytes a sample over 64
#   and over 4096 (every ring line and page misses there);
# - in the lines and pages columns, the read misses at the source lines
#   of the ring's reader, collector/live/ingest.c, taken off when the
#   build has line information (-g: meson's debug build, or -Ddebug=true
#   beside -Dbuildtype=release), at most one a ring line or page, and
#   printed as "ring L2".  Not all ring lines hit in the simulated L2:
#   the benchmark writes a whole ring (256 KiB) before the drain, whose
#   table traffic evicts some of it before it is read (0.13 lines a
#   sample, PEBS at 256 Ki pages).  Reads only: the ring is only read
#   there, and the writes at those lines (the batch slots records decode
#   into) still count.  A few of the reads are not the ring's (the
#   events' layouts copied at the start of a drain): 0.002 lines a
#   sample of those 0.13.  A build without line information counts the
#   ring's misses, and the header says so.
# Target (issue 15): <= 2 lines and <= 1 page a sample.  Cachegrind does
# not model the hardware prefetcher or the CPU's real sizes: the figures
# compare builds and working sets, not hosts.
#
# Sizes: a Zipf(0.99) stream over 64, 1 Ki, 16 Ki and 256 Ki distinct
# pages (bench-ingest --pages), 200 K samples, two passes (from empty,
# then steady); --quick: 64 and 16 Ki pages, 20 K samples.
# Exits 77 when valgrind is missing.
set -u
quick=0
sides=
layouts="faults-tp pebs"
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	--no-sides) sides=--no-sides ;;
	--layouts) layouts=${2:?--layouts needs a list}; shift ;;
	*) break ;;
	esac
	shift
done
. "$(dirname "$0")/vg-setup.sh"
vg_setup touches.sh "${1:-}"

if [ $quick -eq 1 ]; then
	samples=20000 sizes="64 16384"
else
	samples=200000 sizes="${TOUCHES_SIZES:-64 1024 16384 262144}"
fi
# memtop's own functions: every text symbol its libraries define.
find "$build/src" "$build/collector" -name 'libmemtop-*.a' \
	-exec nm --defined-only {} + 2>/dev/null |
	awk '$2 ~ /^[tT]$/ { print $3 }' | sort -u >"$out/own"
if [ ! -s "$out/own" ]; then
	echo "touches.sh: no memtop libraries under $build" >&2
	exit 1
fi
model=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')
btype=$(meson introspect --buildoptions "$build" 2>/dev/null |
	python3 -c 'import json,sys
print(next((o["value"] for o in json.load(sys.stdin) if o["name"] == "buildtype"), "?"))' 2>/dev/null)
echo "memtop touches: lines and 4 KiB pages a sample beyond the ring" \
	"(cachegrind, $samples samples x 2 passes${sides:+, $sides})"
echo "build: $build (${btype:-?}); host CPU: ${model:-unknown}" \
	"(the counts do not depend on it)"
if readelf -S "$bench" 2>/dev/null | grep -q '\.debug_line'; then
	echo "the ring taken off: its share of the L1 columns, the read misses" \
		"at collector/live/ingest.c's lines (ring L2) of lines and pages"
else
	echo "no line information in $bench: the ring's misses count in" \
		"lines and pages (build with -g to take them off)"
fi
printf '  %-9s %8s  %9s %9s %9s %9s  %6s %7s\n' layout pages "lines" \
	"pages" "L1 lines" "L1 pages" "ring B" "ring L2"
status=0
for pages in $sizes; do
	for layout in $layouts; do
		f=$out/cg.$layout.$pages
		ok=1
		for sim in lines pages; do
			if [ $sim = lines ]; then
				cache="--D1=32768,8,64 --LL=1048576,16,64"
			else
				cache="--D1=262144,4,4096 --LL=6291456,12,4096"
			fi
			# shellcheck disable=SC2086
			if ! valgrind --tool=cachegrind --cache-sim=yes \
				--I1=32768,8,64 $cache \
				--cachegrind-out-file="$f.$sim" "$bench" \
				--pages "$pages" --samples "$samples" \
				--layout "$layout" --no-memory $sides \
				>"$f.$sim.log" 2>&1; then
				echo "touches.sh: bench-ingest failed:" >&2
				tail -5 "$f.$sim.log" >&2
				ok=0
				status=1
				break
			fi
		done
		[ $ok -eq 1 ] || continue
		ring=$(sed -n 's/.*ring \([0-9.]*\) B\/sample.*/\1/p' \
			"$f.lines.log" | head -1)
		python3 - "$out/own" "$f.lines" "$f.pages" "$samples" \
			"${ring:-0}" "$layout" "$pages" <<'EOF'
import sys

own = set(open(sys.argv[1]).read().split())


RING_READER = "collector/live/ingest.c"


def misses(path):
    """D1 and LL data misses (reads + writes) in memtop's functions, and
    the LL read misses at the ring reader's source lines (0 without
    -g)."""
    events, fn, fl, d1, ll, ring_ll = [], None, "", 0, 0, 0
    for line in open(path):
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("fl="):
            fl = line[3:].strip()
        elif line.startswith("fn="):
            fn = line[3:].strip()
        elif line[:1].isdigit() and fn in own:
            v = dict(zip(events, map(int, line.split()[1:])))
            d1 += v.get("D1mr", 0) + v.get("D1mw", 0)
            ll += v.get("DLmr", 0) + v.get("DLmw", 0)
            if fl.endswith(RING_READER):
                ring_ll += v.get("DLmr", 0)
    return d1, ll, ring_ll


n = 2 * int(sys.argv[4])
ring = float(sys.argv[5])
l1, l2, ring_l2 = misses(sys.argv[2])
tlb1, tlb2, ring_tlb2 = misses(sys.argv[3])
# At most one miss a ring line (page): the rest would not be the ring's.
ring_l2 = min(ring_l2 / n, ring / 64)
ring_tlb2 = min(ring_tlb2 / n, ring / 4096)
print("  %-9s %8s  %9.2f %9.2f %9.2f %9.2f  %6.0f %7.2f" % (
    sys.argv[6], sys.argv[7], l2 / n - ring_l2, tlb2 / n - ring_tlb2,
    l1 / n - ring / 64, tlb1 / n - ring / 4096, ring, ring_l2))
EOF
	done
done
echo "  a sample (lines, pages: L2 and second-level TLB misses); target: <= 2 lines and <= 1 page a sample beyond the ring"
exit $status
