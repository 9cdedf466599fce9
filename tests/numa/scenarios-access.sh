# Access scenarios without a PMU, run inside the two-node test guest on
# Debian 13's kernel (tests/numa/access-qemu.sh; /init sources this file
# as it does scenarios.sh).  Each prints memtop's JSON frames, then the
# workload's ground truth (access-clusters --report: WRITE, READ,
# INTERVAL and RATE lines), and ends with memtop's status.

SCENARIOS="rearm"

# Frames and then the report; memtop's status.
access_run() {
	memtop -o /tmp/frames.jsonl "$@"
	local rc=$?
	cat /tmp/frames.jsonl
	cat /tmp/ac.txt 2>/dev/null
	rm -f /tmp/frames.jsonl /tmp/ac.txt
	return $rc
}

# --rearm: soft-dirty re-armed every frame, so each written page faults
# once per frame; the read cluster never faults after its first touch.
scenario_rearm() {
	# NUMA balancing's hinting faults would refault the read pages.
	echo 0 >/proc/sys/kernel/numa_balancing 2>/dev/null
	access_run -b --json -e faults -c 1 --rearm -d 0.5 -k 64 -s total -- \
		access-clusters --pages 16 --secs 6 --report /tmp/ac.txt
}
