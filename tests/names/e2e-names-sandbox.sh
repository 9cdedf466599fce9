#!/bin/bash
# The ELF parsing helper end to end (src/names/symbols_sandbox.c): memtop
# launches a process that maps a crafted ELF file (tests/names/craft-elf.py,
# a symbol table that keeps libdw busy for seconds) and touches its pages.
# While memtop runs, the helper it logs must run as nobody (when root) with
# seccomp mode 2 and no_new_privs; the crafted file must time out
# (MEMTOP_SYMBOLS_TIMEOUT_MS=100), be logged as one failure and never be
# handed over again (and counted in the frames' names.helper_failed);
# memtop must go on producing frames to the end and exit 0, and its
# frames must still hold.
. "$(dirname "$0")/../lib/lib.sh"
need_perf
need_python

python3 "$MEMTOP_SRCDIR/tests/names/craft-elf.py" "$TMP/crafted.so" ||
	fail "craft-elf.py failed"
cat >"$TMP/touch.py" <<'PY'
import mmap, sys, time
f = open(sys.argv[1], "rb")
m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    for i in range(0, 64 * 4096, 4096):
        m[i]
    m2 = mmap.mmap(-1, 64 * 4096)   # fresh pages: more faults to sample
    for i in range(0, 64 * 4096, 4096):
        m2[i] = 1
    m2.close()
    time.sleep(0.05)
PY

# Under valgrind (MEMTOP_WRAPPER) every parse is slow: a longer timeout
# that the crafted file (2 s natively) still overruns.
timeout_ms=100
[ -n "${MEMTOP_WRAPPER:-}" ] && timeout_ms=5000
MEMTOP_SYMBOLS_TIMEOUT_MS=$timeout_ms "$MEMTOP" -b --json -e faults -d 0.2 -k 500 \
	--log "$TMP/memtop.log" -o "$TMP/frames.jsonl" \
	-- python3 "$TMP/touch.py" "$TMP/crafted.so" 4 &
memtop_pid=$!

# The helper, once memtop logs it, seen from /proc while it runs (it may
# already be gone: killed on the crafted file; the log says).
helper_confined "symbols helper" "$TMP/memtop.log"

wait "$memtop_pid"
rc=$?
[ "$rc" -eq 0 ] || fail "memtop exited $rc with a crafted ELF file mapped"
timeouts=$(grep -c 'symbols helper [0-9]* timed out' "$TMP/memtop.log")
want=1
# Under valgrind, or a sanitizer on a busy machine, an ordinary file (libc)
# may overrun the timeout too: at least the crafted one.
slow=${MEMTOP_WRAPPER:-}${ASAN_OPTIONS:-}${TSAN_OPTIONS:-}
[ -n "$slow" ] && [ "$timeouts" -ge 1 ] && want=$timeouts
[ "$timeouts" -eq "$want" ] ||
	fail "want one helper timeout in the log, got $timeouts: $(grep 'symbols helper' "$TMP/memtop.log")"
python3 "$FRAMETOOL" check "$TMP/frames.jsonl" || fail "frame invariants"
# The file the helper choked on is counted in the frames too.
got=$(tail -1 "$TMP/frames.jsonl" |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["names"]["helper_failed"])')
[ "$got" = "$want" ] && ok "names.helper_failed $got, as the log's timeouts" ||
	fail "names.helper_failed $got, want $want (the log's timeouts)"
# Frames to the end: the run lasts 4 s at 0.2 s a frame.
n=$(wc -l <"$TMP/frames.jsonl")
[ "$n" -ge 12 ] || fail "only $n frames in a 4 s run at -d 0.2"
ok "crafted file timed out once; memtop went on: $n frames, exit $rc"
finish
