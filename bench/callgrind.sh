#!/bin/bash
# Instruction counts of decode + aggregate per sample: bench-ingest under
# valgrind --tool=callgrind, counting only inside ingest_drain (or
# ring_drain, in builds from before it: parse, decode, aggregation, side
# tables; not the benchmark writing records).
# Instructions do not depend on the machine's load, so this is the
# noise-free figure printed beside bench-ingest's wall-clock rates.
#
#   bench/callgrind.sh [--quick] [--no-sides] [--ips MODE] [--stream MODE]
#                      [--pages "N..."] [--samples N] [BUILDDIR]
#                                             (default BUILDDIR: build)
#
# Full: 2 M samples at 64 Ki and 1 Mi pages; --quick: 100 K at 64 Ki.
# --no-sides: without the naming side tables (bench-ingest --no-sides).
# --ips uniform: every sample's ip independent of its page, the side
# tables' worst case (default: a few code sites a page; bench-ingest.c).
# --stream uniform: every page once a round, in one order (a refault),
# instead of the Zipf stream; --pages and --samples replace the sizes.
# Exits 77 when valgrind is missing.
set -u
quick=0
sides=
ips=sites
stream=zipf
pages_arg=
samples_arg=
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	--no-sides) sides=--no-sides ;;
	--ips) ips=${2:?--ips needs sites or uniform}; shift ;;
	--stream) stream=${2:?--stream needs zipf or uniform}; shift ;;
	--pages) pages_arg=${2:?--pages needs a list}; shift ;;
	--samples) samples_arg=${2:?--samples needs a count}; shift ;;
	*) break ;;
	esac
	shift
done
. "$(dirname "$0")/vg-setup.sh"
vg_setup callgrind.sh "${1:-}"

if [ $quick -eq 1 ]; then
	samples=100000 sizes="65536"
else
	samples=2000000 sizes="65536 1048576"
fi
sizes=${pages_arg:-$sizes}
# Only when asked: builds from before --stream still run the default.
stream_arg=
[ "$stream" = zipf ] || stream_arg="--stream $stream"
samples=${samples_arg:-$samples}
echo "memtop callgrind: instructions per sample inside ingest_drain" \
	"($samples samples, two passes: from empty and steady, stream $stream, ips $ips${sides:+, $sides})"
status=0
for pages in $sizes; do
	for layout in faults-tp faults-sw pebs; do
		f=$out/cg.$layout.$pages
		if ! valgrind --tool=callgrind --callgrind-out-file="$f" \
			--toggle-collect=ring_drain \
			--toggle-collect=ingest_drain "$bench" \
			--pages "$pages" --samples "$samples" \
			--layout "$layout" --ips "$ips" $stream_arg \
			--no-memory $sides \
			>"$f.log" 2>&1; then
			echo "callgrind.sh: bench-ingest failed:" >&2
			tail -5 "$f.log" >&2
			status=1
			continue
		fi
		ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$f")
		# Two passes over the stream: instructions / (2 x samples).
		awk -v ir="$ir" -v n="$samples" -v l="$layout" -v p="$pages" \
			'BEGIN { printf "  %-9s %8d pages: %6.0f instructions/sample\n", l, p, ir / (2 * n) }'
	done
done
exit $status
