#!/bin/busybox sh
# /init of the NUMA test guest (tests/numa/guest.sh builds the initramfs).
# Runs as PID 1 in a busybox-only root: mounts the kernel file systems,
# runs /scenarios.sh (or only the scenarios named by memtop.only=A,B on
# the kernel command line), frames each scenario's output between markers
# on the serial console and powers off.  Nothing here may wait for input:
# the host kills QEMU at its time limit, and every scenario runs under
# `timeout`.
#
# Output protocol (parsed by tests/numa/guest.sh on the host):
#   @@MEMTOP-GUEST uptime=SECS nodes=LIST          once, after mounting
#   @@MEMTOP-BEGIN NAME                            before a scenario
#   ...the scenario's stdout and stderr...
#   @@MEMTOP-END NAME rc=N secs=SECS               after it
#   @@MEMTOP-DONE uptime=SECS                      before power-off

/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t tmpfs tmp /tmp
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
# Kernel messages would split JSON lines on the shared console.
echo 1 > /proc/sys/kernel/printk

uptime_s() { cut -d' ' -f1 /proc/uptime; }

only=
for arg in $(cat /proc/cmdline); do
	case $arg in
	memtop.only=*) only=${arg#memtop.only=} ;;
	esac
done

echo "@@MEMTOP-GUEST uptime=$(uptime_s) nodes=$(cat /sys/devices/system/node/online)"
# scenarios.sh defines scenario_NAME functions and lists them in SCENARIOS.
. /scenarios.sh
for name in $SCENARIOS; do
	if [ -n "$only" ]; then
		case ",$only," in
		*",$name,"*) ;;
		*) continue ;;
		esac
	fi
	t0=$(uptime_s)
	echo "@@MEMTOP-BEGIN $name"
	"scenario_$name" 2>&1
	rc=$?
	t1=$(uptime_s)
	echo "@@MEMTOP-END $name rc=$rc secs=$(echo "$t0 $t1" |
		awk '{ printf "%.2f", $2 - $1 }')"
done
echo "@@MEMTOP-DONE uptime=$(uptime_s)"
sync
poweroff -f
