# NUMA scenarios run inside the two-node test guest (busybox sh), sourced
# by /init; tests/numa/numa-qemu.sh checks their output on the host.  Node 0 =
# CPU 0 + 512 MiB, node 1 = CPU 1 + 512 MiB.  Each scenario prints the
# JSON frames memtop wrote (one per line) and ends with memtop's status.
#
# The workload's hot pages fault once per round (refault mode), so every
# round gives one `faults` sample per hot page, issued by the CPU the
# worker is pinned to and landing on the node the region is bound to.

SCENARIOS="topology remote local migrate migrate_private crossed uncrossed"

# memtop options shared by every scenario: the faults source at period 1,
# half-second frames, enough rows for every hot page.
MEMTOP_ARGS="-b --json -e faults -c 1 -d 0.5 -k 64"

run_memtop() {
	memtop -o /tmp/frames.jsonl "$@"
	local rc=$?
	cat /tmp/frames.jsonl
	rm -f /tmp/frames.jsonl
	return $rc
}

# The workload's hot page addresses, as "HOT 0x..." lines.
print_hot() {
	sed 's/^/HOT /' /tmp/hot.txt
	rm -f /tmp/hot.txt
}

scenario_topology() {
	for n in /sys/devices/system/node/node[0-9]*; do
		echo "${n##*/} cpus=$(cat $n/cpulist)" \
		     "blocks=$(ls -d $n/memory[0-9]* 2>/dev/null | wc -l)"
	done
	echo "block_size_bytes=$(cat /sys/devices/system/memory/block_size_bytes)"
	test-physnode-live --live
}

# Memory bound to node 1, the worker on node 0: every sample is remote.
scenario_remote() {
	run_memtop $MEMTOP_ARGS -- memtop-workload --node 1 --cpu-node 0 \
		--mode refault --hot 32 --pages 512 --threads 1 --rounds 100 \
		--interval-ms 20 --duration 0 --quiet
}

# Memory and worker on node 0: every sample is local.
scenario_local() {
	run_memtop $MEMTOP_ARGS -- memtop-workload --node 0 --cpu-node 0 \
		--mode refault --hot 32 --pages 512 --threads 1 --rounds 100 \
		--interval-ms 20 --duration 0 --quiet
}

# Shared memory bound to node 1, refaulted from CPU 0: --migrate-hot moves
# the hot pages to node 0 after a frame; a shared page survives
# MADV_DONTNEED, so the later refaults land on node 0 and turn local.
scenario_migrate() {
	run_memtop $MEMTOP_ARGS --migrate-hot 64 -- numa-shared-refault \
		--node 1 --cpu 0 --hot 32 --rounds 120 --interval-ms 20 \
		--print-hot /tmp/hot.txt
	local rc=$?
	print_hot
	return $rc
}

# Private memory touched once (access mode): the hot pages are moved
# after the first frame and later frames list them on node 0.  Each hot
# page faults once, so -k lists every page: start-up faults (many more in
# a sanitizer build) must not push the hot pages out of the frame.  6 s:
# a sanitizer build's frames come seconds apart under TCG, and a page can
# only be moved while its process lives.
scenario_migrate_private() {
	run_memtop $MEMTOP_ARGS -k 4000 -s total --migrate-hot 64 -- \
		memtop-workload \
		--node 1 --cpu-node 0 --mode access --hot 32 --pages 512 \
		--threads 1 --duration 6 --quiet --print-hot /tmp/hot.txt
	local rc=$?
	print_hot
	return $rc
}

# Whole machine (-a): two workloads at once, A on CPU node 0 and B on CPU
# node 1.  run_system_pair NODE_A NODE_B binds A's memory to NODE_A and
# B's to NODE_B, stops memtop with SIGINT two frames after both ended, and
# prints "WPID A|B PID" lines after the frames for check.py to find their
# process rows.  400 rounds (8 s): a whole machine's frames come seconds
# apart under TCG, and a page's node is only known while its process
# lives.
run_system_pair() {
	memtop -o /tmp/frames.jsonl $MEMTOP_ARGS -a &
	local mt=$! a b rc
	sleep 1
	memtop-workload --node "$1" --cpu-node 0 --mode refault --hot 32 \
		--pages 512 --threads 1 --rounds 400 --interval-ms 20 \
		--duration 0 --quiet &
	a=$!
	memtop-workload --node "$2" --cpu-node 1 --mode refault --hot 32 \
		--pages 512 --threads 1 --rounds 400 --interval-ms 20 \
		--duration 0 --quiet &
	b=$!
	wait $a
	wait $b
	sleep 1.2
	kill -INT $mt
	wait $mt
	rc=$?
	cat /tmp/frames.jsonl
	rm -f /tmp/frames.jsonl
	echo "WPID A $a"
	echo "WPID B $b"
	return $rc
}

# Each process's memory on the other node's: both rows remote-heavy.
scenario_crossed() {
	run_system_pair 1 0
}

# Each process's memory on its own CPU's node: both rows local.
scenario_uncrossed() {
	run_system_pair 0 1
}
