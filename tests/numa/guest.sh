# A two-node QEMU test guest built from Debian packages, for memtop's NUMA
# tests.  Source it (after tests/lib/lib.sh); it installs nothing on the host:
# the kernel package is fetched with `apt-get download` and unpacked with
# dpkg-deb into a cache directory (its /boot only, the .deb removed once
# unpacked).
#
#   guest_fetch CACHE            kernel + busybox into CACHE (reused; the
#                                kernel pinned, see below)
#   guest_initramfs CACHE OUT SCENARIOS BIN...
#                                gzip'd newc cpio: busybox, BIN... and every
#                                shared library they load, /init, SCENARIOS
#   guest_boot CACHE INITRD LOG SECS [APPEND...]
#                                boots 2 nodes x (1 CPU, 512 MiB) under TCG
#   guest_boot_again CACHE INITRD LOG SECS [APPEND...]
#                                the same, once more after a kernel panic
#   guest_section LOG NAME       stdout of scenario NAME (markers removed)
#
# Each function returns non-zero with the reason in GUEST_WHY.  The kernel
# is pinned: Debian 12's GUEST_KERNEL_PKG at GUEST_KERNEL_VERSION, fetched
# with `apt-get download PKG=VERSION` (apt checks it against the signed
# lists), so a test run never boots whatever kernel the archive has that
# day.  When that version cannot be fetched (no network, or a Debian point
# release has replaced it: then move the pin to what `apt-cache madison
# linux-image-amd64` shows for bookworm), the host's own
# /boot/vmlinuz-* is used if a Debian package installed it.  Busybox is the
# host's static one (busybox-static, which scripts/setup.sh installs), else
# the pinned package.  MEMTOP_NUMA_KERNEL=FILE uses a bzImage of your own
# instead.  $CACHE/kernel.id says which kernel the cache holds.

GUEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
GUEST_WHY=
GUEST_KERNEL_PKG=linux-image-6.1.0-50-amd64
GUEST_KERNEL_VERSION=6.1.176-1
GUEST_BUSYBOX_VERSION=1:1.35.0-4+deb12u1+b1
# Set by guest_use_trixie: the suite the kernel comes from when it is not
# one of the host's own apt sources (empty: the host's apt as it is).
GUEST_SUITE=

# guest_use_trixie: Debian 13's kernel (6.12: soft-dirty and DAMON's
# vaddr, paddr and sysfs interfaces built in) instead of Debian 12's, for
# tests/numa/access-qemu.sh.  Trixie need not be among the host's apt
# sources: guest_download then reads the archive with an apt
# configuration of its own under CACHE/apt (its own sources list, lists
# and cache; Debian's archive keyring), never the host's.  Pinned: move
# the pin to what `apt-cache madison linux-image-amd64` shows for trixie
# under that configuration when a point release replaces it.
guest_use_trixie() {
	GUEST_KERNEL_PKG=linux-image-6.12.117+deb13-amd64
	GUEST_KERNEL_VERSION=6.12.117-1
	GUEST_SUITE=trixie
}

# guest_apt_private DIR: apt options for GUEST_SUITE's archive with
# lists and cache under DIR/apt (created; `apt-get update` run once).
guest_apt_private() {
	local dir=$1/apt key=/usr/share/keyrings/debian-archive-keyring.gpg
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" || return 1
	[ -r "$key" ] || { GUEST_WHY="$key missing (package debian-archive-keyring)"; return 1; }
	printf 'deb [signed-by=%s] http://deb.debian.org/debian %s main\n' \
		"$key" "$GUEST_SUITE" >"$dir/sources.list"
	GUEST_APT_OPTS="-o Dir::Etc::SourceList=$dir/sources.list
		-o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$dir/lists
		-o Dir::Cache=$dir/cache -o Dir::Etc::Preferences=/dev/null
		-o Dir::Etc::PreferencesParts=/dev/null"
	[ "$(id -u)" -eq 0 ] && GUEST_APT_OPTS="$GUEST_APT_OPTS -o APT::Sandbox::User=root"
	apt-cache $GUEST_APT_OPTS show "$GUEST_KERNEL_PKG=$GUEST_KERNEL_VERSION" \
		>/dev/null 2>&1 && return 0
	echo "guest: fetching the $GUEST_SUITE lists into $dir"
	apt-get $GUEST_APT_OPTS update -qq >"$dir/update.log" 2>&1 ||
		{ GUEST_WHY="apt-get update ($GUEST_SUITE, private lists) failed: $(grep -m1 '^E:' "$dir/update.log")"; return 1; }
}

# guest_download DIR PKG VERSION: the .deb of PKG=VERSION in DIR, as
# DIR/PKG.deb.  Runs `apt-get update` once (as root) when apt's lists do
# not know that version.
guest_download() {
	local dir=$1 pkg=$2 version=$3
	GUEST_APT_OPTS=
	if [ -n "$GUEST_SUITE" ]; then
		guest_apt_private "$(dirname "$dir")" || return 1
	elif ! apt-cache show "$pkg=$version" >/dev/null 2>&1 &&
	   [ "$(id -u)" -eq 0 ] && [ -z "${guest_updated:-}" ]; then
		guest_updated=1
		echo "guest: apt lists lack $pkg=$version; running apt-get update"
		apt-get update -qq >/dev/null 2>&1
	fi
	rm -f "$dir/${pkg}_"*.deb "$dir/$pkg.deb"
	# apt's sandbox user cannot write into a root-owned test directory.
	(cd "$dir" && apt-get $GUEST_APT_OPTS download -q "$pkg=$version" >"$dir/apt-$pkg.log" 2>&1) ||
		{ GUEST_WHY="apt-get download $pkg=$version failed: $(grep -m1 '^E:' \
			"$dir/apt-$pkg.log")"; return 1; }
	mv "$(ls "$dir/${pkg}_"*.deb | head -n1)" "$dir/$pkg.deb"
}

# guest_host_kernel: the host's /boot/vmlinuz-* that a Debian
# linux-image package installed (the running one first), readable;
# prints "PATH PKG VERSION".
guest_host_kernel() {
	local k pkg
	for k in "/boot/vmlinuz-$(uname -r)" $(ls -r /boot/vmlinuz-* 2>/dev/null); do
		[ -r "$k" ] || continue
		pkg=$(dpkg-query -S "$k" 2>/dev/null | sed -n 's/^\(linux-image-[^:]*\)\(:[a-z0-9]*\)\{0,1\}: .*/\1/p' | head -n1)
		[ -n "$pkg" ] || continue
		echo "$k $pkg $(dpkg-query -W -f='${Version}' "$pkg")"
		return 0
	done
	return 1
}

# guest_kernel CACHE: CACHE/vmlinuz, the pinned package's or the host's.
guest_kernel() {
	local cache=$1 want="$GUEST_KERNEL_PKG=$GUEST_KERNEL_VERSION" deb host why
	if [ -e "$cache/vmlinuz" ] && [ "$(cat "$cache/kernel.id" 2>/dev/null)" = "$want" ]; then
		return 0
	fi
	rm -f "$cache/vmlinuz" "$cache/kernel.id"
	if command -v apt-get >/dev/null &&
	   guest_download "$cache/debs" "$GUEST_KERNEL_PKG" "$GUEST_KERNEL_VERSION"; then
		deb=$cache/debs/$GUEST_KERNEL_PKG.deb
		rm -rf "$cache/kernel"
		mkdir -p "$cache/kernel"
		# Only /boot: the modules (400 MB unpacked) are not needed, the
		# guest uses what is built in (8250 console, NUMA, tracefs).
		dpkg-deb --fsys-tarfile "$deb" |
			tar -x -C "$cache/kernel" --wildcards './boot/vmlinuz-*' ||
			{ GUEST_WHY="cannot unpack /boot of $deb"; return 1; }
		rm -f "$deb"
		ln -sf "$(ls "$cache"/kernel/boot/vmlinuz-* | head -n1)" "$cache/vmlinuz"
		echo "$want" >"$cache/kernel.id"
		echo "guest: kernel $want (pinned)"
		return 0
	fi
	why=${GUEST_WHY:-apt-get not found}
	if [ -z "$GUEST_SUITE" ] && host=$(guest_host_kernel); then
		set -- $host
		ln -sf "$1" "$cache/vmlinuz"
		echo "host $2=$3" >"$cache/kernel.id"
		echo "guest: kernel $1 of the host ($2=$3): the pinned $want cannot be fetched: $why"
		return 0
	fi
	GUEST_WHY="$why; and no readable Debian kernel in the host's /boot"
	return 1
}

# guest_busybox CACHE: CACHE/busybox/bin/busybox, a static busybox.
guest_busybox() {
	local cache=$1 bb deb
	[ -x "$cache/busybox/bin/busybox" ] && return 0
	for bb in /bin/busybox /usr/bin/busybox; do
		if [ -x "$bb" ] && LC_ALL=C ldd "$bb" 2>&1 | grep -q "not a dynamic executable"; then
			mkdir -p "$cache/busybox/bin"
			cp "$bb" "$cache/busybox/bin/busybox" && return 0
		fi
	done
	command -v apt-get >/dev/null ||
		{ GUEST_WHY="no static busybox here, and apt-get not found"; return 1; }
	GUEST_SUITE= guest_download "$cache/debs" busybox-static "$GUEST_BUSYBOX_VERSION" || return 1
	deb=$cache/debs/busybox-static.deb
	rm -rf "$cache/busybox"
	dpkg-deb -x "$deb" "$cache/busybox" ||
		{ GUEST_WHY="dpkg-deb -x $deb failed"; return 1; }
	rm -f "$deb"
}

guest_fetch() {
	local cache
	mkdir -p "$1/debs" || { GUEST_WHY="cannot create $1"; return 1; }
	cache=$(cd "$1" && pwd)
	command -v dpkg-deb >/dev/null || { GUEST_WHY="dpkg-deb not found"; return 1; }
	if [ -n "${MEMTOP_NUMA_KERNEL:-}" ]; then
		[ -r "$MEMTOP_NUMA_KERNEL" ] ||
			{ GUEST_WHY="MEMTOP_NUMA_KERNEL=$MEMTOP_NUMA_KERNEL not readable"; return 1; }
		rm -f "$cache/kernel.id"
		ln -sf "$MEMTOP_NUMA_KERNEL" "$cache/vmlinuz"
	else
		guest_kernel "$cache" || return 1
	fi
	guest_busybox "$cache" || return 1
	[ -e "$cache/vmlinuz" ] && [ -x "$cache/busybox/bin/busybox" ] ||
		{ GUEST_WHY="kernel or busybox missing after unpacking"; return 1; }
}

# guest_copy_lib ROOT PATH: PATH at the same place under ROOT (following
# symlinks, so the loader finds the real file under its usual name).
guest_copy_lib() {
	local root=$1 path=$2
	[ -e "$root$path" ] && return 0
	mkdir -p "$root$(dirname "$path")"
	cp -L "$path" "$root$path"
}

# guest_copy_bin ROOT BIN: BIN as ROOT/bin/NAME plus what `ldd` lists.
guest_copy_bin() {
	local root=$1 bin=$2 lib
	cp -L "$bin" "$root/bin/$(basename "$bin")" || return 1
	# "libx.so.1 => /lib/.../libx.so.1 (0x...)" and "/lib64/ld-linux... (0x...)"
	for lib in $(ldd "$bin" 2>/dev/null |
		     awk '/=> \// { print $3 } /^[ \t]*\// { print $1 }'); do
		guest_copy_lib "$root" "$lib" || return 1
	done
}

guest_initramfs() {
	local cache=$1 out=$2 scenarios=$3
	shift 3
	local root="$cache/root" bin
	command -v cpio >/dev/null || { GUEST_WHY="cpio not installed"; return 1; }
	command -v ldd >/dev/null || { GUEST_WHY="ldd not found"; return 1; }
	rm -rf "$root"
	mkdir -p "$root"/{bin,dev,proc,sys,tmp,lib64} || return 1
	cp "$cache/busybox/bin/busybox" "$root/bin/busybox" || return 1
	for bin in "$@"; do
		guest_copy_bin "$root" "$bin" ||
			{ GUEST_WHY="cannot copy $bin and its libraries"; return 1; }
	done
	cp "$GUEST_DIR/guest-init.sh" "$root/init" &&
		cp "$scenarios" "$root/scenarios.sh" && chmod 755 "$root/init" ||
		{ GUEST_WHY="cannot install /init"; return 1; }
	(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet |
		gzip -1 >"$out") || { GUEST_WHY="cpio failed"; return 1; }
	rm -rf "$root"
}

# guest_boot CACHE INITRD LOG SECS [APPEND...]: 0 when the guest printed
# @@MEMTOP-DONE before the time limit.  KVM is not used on purpose: nested
# KVM hangs on the development VMs, TCG works everywhere.  One host thread
# runs both vCPUs (thread=single): with a thread each, Debian's kernel
# died on an int3 left by its own code patching (a static key flipped as
# perf events open and close), in __schedule and, twice in one CI run, in
# syscall_exit_to_user_mode_prepare; one thread also ran access-qemu in
# 126 s where two took 168 s on this 2-CPU machine.
guest_boot() {
	local cache=$1 initrd=$2 log=$3 secs=$4
	shift 4
	command -v qemu-system-x86_64 >/dev/null ||
		{ GUEST_WHY="qemu-system-x86_64 not installed (Debian: qemu-system-x86)"; return 1; }
	timeout -k 5 "$secs" qemu-system-x86_64 -accel tcg,thread=single -smp 2 -m 1024 \
		-object memory-backend-ram,id=m0,size=512M \
		-object memory-backend-ram,id=m1,size=512M \
		-numa node,nodeid=0,cpus=0,memdev=m0 \
		-numa node,nodeid=1,cpus=1,memdev=m1 \
		-kernel "$cache/vmlinuz" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 quiet loglevel=1 $*" \
		-nographic -no-reboot -net none </dev/null >"$log" 2>&1
	local rc=$?
	# The serial console ends lines with CRLF.
	sed -i 's/\r$//' "$log"
	if grep -q '^@@MEMTOP-DONE' "$log"; then
		return 0
	fi
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		GUEST_WHY="guest did not finish within $secs s"
	elif ! grep -q '@@MEMTOP-GUEST' "$log"; then
		GUEST_WHY="guest did not boot (qemu exit $rc): $(tail -n 3 "$log" | tr '\n' ' ')"
	else
		GUEST_WHY="guest stopped early (qemu exit $rc)"
	fi
	return 1
}

# guest_boot_again CACHE INITRD LOG SECS [APPEND...]: guest_boot, and
# when the guest kernel panicked (an oops under TCG: the 2-vCPU emulator
# with a thread per vCPU crashed Debian's kernel on an int3, text being
# patched; see guest_boot), one boot more within what is left of SECS, said on stdout
# with the panic's last lines.  A kernel that panics twice fails.
guest_boot_again() {
	local cache=$1 initrd=$2 log=$3 secs=$4 t0 left
	shift 4
	t0=$(date +%s)
	guest_boot "$cache" "$initrd" "$log" "$secs" "$@" && return 0
	grep -q 'Kernel panic' "$log" || return 1
	left=$((secs - ($(date +%s) - t0)))
	echo "guest: the guest kernel panicked (${GUEST_WHY}); booting once more" \
		"(${left}s left). Its last lines:"
	grep -m 3 -E 'Oops|RIP:|Kernel panic' "$log" | sed 's/^/guest:   /'
	[ "$left" -gt 60 ] || return 1
	guest_boot "$cache" "$initrd" "$log" "$left" "$@"
}

# guest_section LOG NAME: the lines between NAME's markers.
guest_section() {
	awk -v name="$2" '
		$0 == "@@MEMTOP-BEGIN " name { on = 1; next }
		index($0, "@@MEMTOP-END " name " ") == 1 { on = 0 }
		on' "$1"
}

# guest_rc LOG NAME: the exit status the guest reported for NAME, or 255.
guest_rc() {
	local rc
	rc=$(awk -v name="$2" 'index($0, "@@MEMTOP-END " name " ") == 1 {
		for (i = 1; i <= NF; i++) if ($i ~ /^rc=/) print substr($i, 4) }' "$1")
	echo "${rc:-255}"
}

# guest_secs LOG NAME: how long NAME ran in the guest (seconds).
guest_secs() {
	awk -v name="$2" 'index($0, "@@MEMTOP-END " name " ") == 1 {
		for (i = 1; i <= NF; i++) if ($i ~ /^secs=/) print substr($i, 6) }' "$1"
}
