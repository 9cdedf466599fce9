# Sourced by scripts/demo and scripts/test: installs what memtop needs on
# a Debian machine when it is missing, then configures and builds BUILD
# (default: build).  Prints what it installs; changes nothing else.
set -eu

MEMTOP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
: "${BUILD:=$MEMTOP_ROOT/build}"

# Debian packages: build (meson ninja-build pkg-config gcc libc6-dev
# libncurses-dev libnuma-dev libelf-dev libdw-dev libzstd-dev
# libmicrohttpd-dev) and tests (python3 tmux linux-perf libpfm4-dev
# valgrind; prometheus for tests/metrics, which scrapes memtop with a real
# server and checks the exposition with promtool; clang libclang-rt-dev for
# the sanitizer and fuzzer builds and the symbolizer; qemu-system-x86
# busybox-static cpio for the two-node guest of tests/numa/numa-qemu.sh,
# which downloads its kernel package; debian-archive-keyring for
# tests/numa/access-qemu.sh, which reads Debian 13's archive with an apt
# configuration of its own).
setup_packages() {
	local want=(meson ninja-build pkg-config gcc libc6-dev libncurses-dev qemu-system-x86 busybox-static cpio debian-archive-keyring
		    libnuma-dev libelf-dev libdw-dev python3 tmux linux-perf libpfm4-dev libzstd-dev clang libclang-rt-dev valgrind
		    libmicrohttpd-dev prometheus "$@")
	local missing=()
	for p in "${want[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q "install ok installed" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "memtop setup: missing Debian packages: ${missing[*]}" >&2
		echo "memtop setup: run as root, or: sudo apt-get install ${missing[*]}" >&2
		return 1
	fi
	echo "memtop setup: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# setup_build DIR [-Dname=value...]: configures DIR with those options
# (once) and builds it.  A DIR configured before with other values for
# them (a build/ that scripts/demo made, without -Dwerror=true) is
# reconfigured first, so the options asked for always hold.
setup_build() {
	local dir=$1 differ
	shift
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$MEMTOP_ROOT" "$@" >/dev/null
	else
		differ=$(build_options_differ "$dir" "$@") || return 1
		if [ -n "$differ" ]; then
			echo "memtop setup: $dir: reconfiguring with" $differ
			# shellcheck disable=SC2086
			meson configure "$dir" $differ >/dev/null || return 1
		fi
	fi
	ninja -C "$dir" >/dev/null
}

# build_options_differ DIR -Dname=value...: those of the options whose
# value in DIR (meson introspect --buildoptions) is another, one a line.
build_options_differ() {
	local dir=$1
	shift
	[ $# -gt 0 ] || return 0
	meson introspect --buildoptions "$dir" | python3 -c '
import json, sys
have = {o["name"]: o["value"] for o in json.load(sys.stdin)}
def text(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return ",".join(map(str, v))
    return str(v)
for arg in sys.argv[1:]:
    name, _, value = arg[2:].partition("=")
    if name not in have or text(have[name]) != value:
        print(arg)
' "$@"
}
