# Access scenarios without a PMU, run inside the two-node test guest on
# Debian 13's kernel (tests/numa/access-qemu.sh; /init sources this file
# as it does scenarios.sh).  Each prints memtop's JSON frames, then the
# workload's ground truth (access-clusters --report: WRITE, READ,
# INTERVAL and RATE lines), and ends with memtop's status.

SCENARIOS="rearm damon_regions damon damon_procs damon_pids damon_paddr damon_refuse"

# NUMA balancing off for every scenario, whichever runs first (a second
# boot of access-qemu.sh runs only some): its hinting faults would
# refault rearm's read pages, and its scans and migrations change the
# page tables DAMON reads the accessed bits of.
echo 0 >/proc/sys/kernel/numa_balancing 2>/dev/null

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
	access_run -b --json -e faults -c 1 --rearm -d 0.5 -k 64 -s total -- \
		access-clusters --pages 16 --secs 6 --report /tmp/ac.txt
}

# memtop's DAMON driver on the real interface (damon-live): a vaddr
# kdamond on the workload; its regions must find both clusters hot.
scenario_damon_regions() {
	access-clusters --pages 16 --secs 20 --report /tmp/ac.txt &
	local pid=$! rc
	sleep 1
	damon-live $pid 8
	rc=$?
	wait $pid
	cat /tmp/ac.txt
	rm -f /tmp/ac.txt
	return $rc
}

# memtop -e damon on the workload: its kdamond's regions as entries.
scenario_damon() {
	access_run -b --json -e damon -d 1 -k 40 -- \
		access-clusters --pages 16 --secs 20 --report /tmp/ac.txt
	local rc=$?
	# memtop removes its kdamond when it ends.
	echo "KDAMONDS_AFTER $(cat /sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds)"
	return $rc
}

# Several processes under one vaddr kdamond: a launched shell starts two
# workloads, the first bound to node 1, the second to node 0; memtop finds
# them through /proc's children lists, one DAMON target each.
scenario_damon_procs() {
	access_run -b --json -e damon -d 1 -k 60 -- sh -c \
		'access-clusters --pages 16 --secs 20 --node 1 --report /tmp/ac1.txt &
		 access-clusters --pages 16 --secs 20 --node 0 --report /tmp/ac2.txt &
		 wait'
	local rc=$?
	cat /tmp/ac1.txt /tmp/ac2.txt
	rm -f /tmp/ac1.txt /tmp/ac2.txt
	return $rc
}

# The same two workloads given as -p PID,PID: one target each.
scenario_damon_pids() {
	access-clusters --pages 16 --secs 20 --node 1 --report /tmp/ac1.txt &
	local p1=$! p2 rc
	access-clusters --pages 16 --secs 20 --node 0 --report /tmp/ac2.txt &
	p2=$!
	sleep 1
	memtop -o /tmp/frames.jsonl -b --json -e damon -d 1 -k 60 -p $p1,$p2
	rc=$?
	wait $p1 $p2
	cat /tmp/frames.jsonl /tmp/ac1.txt /tmp/ac2.txt
	rm -f /tmp/frames.jsonl /tmp/ac1.txt /tmp/ac2.txt
	return $rc
}

# -a: a paddr kdamond over the guest's RAM, the workload (4 MiB written,
# 4 MiB read) bound to node 1; its report gives each page's physical
# address.  memtop ends after -n frames; the workload outlives it.
scenario_damon_paddr() {
	access-clusters --pages 1024 --secs 20 --node 1 --report /tmp/ac.txt &
	local pid=$! rc
	sleep 1
	memtop -o /tmp/frames.jsonl -b --json -e damon -a -d 1 -k 60 -n 14 \
		--log /tmp/memtop.log
	rc=$?
	grep -i -E 'damon|final|quit' /tmp/memtop.log | tail -n 5
	echo "KDAMONDS_AFTER $(cat /sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds)"
	wait $pid
	cat /tmp/frames.jsonl /tmp/ac.txt
	rm -f /tmp/frames.jsonl /tmp/ac.txt
	return $rc
}

# Another user's kdamond (set up here with the shell, on this shell's own
# pid): memtop -e damon refuses, naming it, and leaves it running as it
# was.  It is stopped and removed afterwards.
scenario_damon_refuse() {
	local a=/sys/kernel/mm/damon/admin/kdamonds c rc
	c=$a/0/contexts/0
	echo 1 >$a/nr_kdamonds && echo 1 >$a/0/contexts/nr_contexts &&
		echo vaddr >$c/operations && echo 1 >$c/targets/nr_targets &&
		echo $$ >$c/targets/0/pid_target && echo on >$a/0/state ||
		{ echo "cannot start the test's own kdamond"; return 1; }
	echo "BEFORE state=$(cat $a/0/state) pid=$(cat $a/0/pid) nr=$(cat $a/nr_kdamonds) ops=$(cat $c/operations) target=$(cat $c/targets/0/pid_target)"
	memtop -b -e damon -n 1 -- true
	rc=$?
	echo "MEMTOP_RC $rc"
	echo "AFTER state=$(cat $a/0/state) pid=$(cat $a/0/pid) nr=$(cat $a/nr_kdamonds) ops=$(cat $c/operations) target=$(cat $c/targets/0/pid_target)"
	echo off >$a/0/state
	echo 0 >$a/nr_kdamonds
	return 0
}
