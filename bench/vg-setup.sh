# Sourced by bench/callgrind.sh and bench/touches.sh after their options:
# vg_setup NAME [BUILDDIR] sets src, build (default: build), bench (its
# bench-ingest) and out (a scratch folder removed at exit); exits 77 when
# valgrind is missing and 1 when bench-ingest is not built.
vg_setup() {
	local name=$1
	src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	build=${2:-$src/build}
	bench=$build/bench/bench-ingest
	command -v valgrind >/dev/null || { echo "SKIP: valgrind not installed"; exit 77; }
	[ -x "$bench" ] || { echo "$name: $bench not built" >&2; exit 1; }
	out=$(mktemp -d "${TMPDIR:-/tmp}/memtop-$name.XXXXXX")
	trap 'rm -rf "$out"' EXIT
}
