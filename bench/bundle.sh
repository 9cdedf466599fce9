#!/bin/bash
# A release build of memtop and its benchmarks that runs on another Linux
# x86-64 host without installing anything there (a lent machine with more
# CPUs, another CPU vendor), for bench/host-run.sh:
#
#   bench/bundle.sh [OUTDIR]      (default: .bundle, in the source tree)
#
# The binaries name /tmp/mt/ld-linux-x86-64.so.2 as their interpreter and
# /tmp/mt as their library path (DT_RPATH, which also serves the
# libraries' own dependencies), and OUTDIR/lib holds this machine's glibc
# and every library they load: host-run.sh copies them to /tmp/mt first,
# so the other host's own libraries (older or newer) are never mixed in.
# OUTDIR is about 15 MiB; add it to .git/info/exclude to keep it out of
# commits.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/.bundle}
build=$src/build-bundle
mt=/tmp/mt
# meson runs what it builds at set-up: the interpreter must exist here too.
mkdir -p "$mt"
cp -L /lib64/ld-linux-x86-64.so.2 "$mt"/
if [ ! -d "$build" ]; then
	meson setup "$build" -Dbuildtype=release \
		"-Dc_link_args=-Wl,--dynamic-linker=$mt/ld-linux-x86-64.so.2 -Wl,-rpath,$mt -Wl,--disable-new-dtags" >/dev/null
fi
ninja -C "$build" >/dev/null
rm -rf "$out"
mkdir -p "$out"/ui "$out"/tools "$out"/bench "$out"/lib
cp "$build"/ui/memtop "$out"/ui/
cp "$build"/tools/memtop-workload "$out"/tools/
for b in bench-drain bench-ingest bench-scale bench-frame bench-objtab; do
	cp "$build/bench/$b" "$out"/bench/
done
cp "$src"/bench/bench-live.py "$src"/bench/host-run.sh \
   "$src"/bench/frames-sum.py "$out"/bench/
for f in "$out"/ui/memtop "$out"/tools/memtop-workload "$out"/bench/bench-*; do
	case $f in *.py|*.sh) continue ;; esac
	ldd "$f" | awk '/=>/ { print $3 } /ld-linux/ { print $1 }'
done | sort -u | while read -r l; do cp -L "$l" "$out"/lib/; done
echo "bundle: $out ($(du -sh "$out" | cut -f1)); run bench/host-run.sh from it"
