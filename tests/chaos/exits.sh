#!/bin/bash
# Exits: the watched process exits normally, is killed with SIGKILL, stays
# a zombie (its parent never reaps it), loses its leader thread first,
# execs another program (-p and -- COMMAND), exits with a status or a
# signal (-- COMMAND), existed a moment ago, or cannot be executed.
# memtop writes the final frame ("final": true, every target alive false)
# within 2 s of the exit and exits with the right status: 0 for -p, the
# command's for -- COMMAND, 1 when nothing could be watched.
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/chaos-lib.sh"
need_perf
need_python

W=$MEMTOP_WORKLOAD
LIMIT_MS=2000
MT=(-b --json -e faults -d 0.25 -k 50 -s total)

# exited PID: true once PID is gone, or a zombie (state Z or X) with no
# thread left (a leader that exited before its threads shows Z too).
exited() {
	local st
	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 0
	[ -z "$st" ] && return 0
	[ "$st" = Z ] || [ "$st" = X ] || return 1
	[ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -le 1 ]
}

# watch_pid NAME PID [ACTION]: memtop -p PID in the background; runs ACTION
# (e.g. "kill -9 PID") after 1 s, waits for PID to exit, then checks that
# memtop ends with status 0 and a final frame within LIMIT_MS.
watch_pid() {
	local name=$1 pid=$2 action=${3:-} mpid t_exit t_end status
	"$MEMTOP" "${MT[@]}" -p "$pid" -o "$TMP/$name.jsonl" 2>"$TMP/$name.err" &
	mpid=$!
	if [ -n "$action" ]; then
		sleep 1
		eval "$action"
	fi
	for ((i = 0; i < 600; i++)); do
		exited "$pid" && break
		sleep 0.02
	done
	t_exit=$(now_ms)
	wait $mpid
	status=$?
	t_end=$(now_ms)
	[ "$status" -eq 0 ] || fail "$name: memtop exited $status: $(cat "$TMP/$name.err")"
	python3 "$FRAMETOOL" check "$TMP/$name.jsonl" >/dev/null || fail "$name: frame invariants"
	final_ok "$TMP/$name.jsonl" || fail "$name: final frame"
	local samples
	samples=$(python3 "$FRAMETOOL" get "$TMP/$name.jsonl" 'f["cumulative"]["samples"]')
	[ "${samples:-0}" -gt 0 ] || fail "$name: no samples before the exit"
	if [ $((t_end - t_exit)) -gt $LIMIT_MS ]; then
		fail "$name: memtop ended $((t_end - t_exit)) ms after the exit"
	else
		ok "$name: final frame and exit 0 within $((t_end - t_exit)) ms of the exit ($samples samples)"
	fi
}

# 1. Normal exit.
"$W" --mode refault --threads 2 --hot 16 --pages 256 --interval-ms 5 \
	--duration 1.5 --quiet &
watch_pid "normal exit" $!

# 2. SIGKILL.
"$W" --mode refault --threads 2 --hot 16 --pages 256 --interval-ms 5 \
	--duration 0 --quiet &
wpid=$!
cleanup_hooks+=("kill_own -9 $wpid")
watch_pid "SIGKILL" $wpid "kill -9 $wpid"
wait $wpid 2>/dev/null

# 3. A zombie: the parent sleeps and never reaps the child memtop watches.
"$MEMTOP_ZOMBIE" child 1500 30 >"$TMP/zombie.out" &
zpid=$!
cleanup_hooks+=("kill_own $zpid")
for ((i = 0; i < 100; i++)); do
	[ -s "$TMP/zombie.out" ] && break
	sleep 0.02
done
child=$(awk '{ print $2 }' "$TMP/zombie.out")
watch_pid "zombie" "$child"
[ "$(awk '{ print $3 }' "/proc/$child/stat" 2>/dev/null)" = Z ] ||
	fail "zombie: the child was reaped early; the case did not test a zombie"
kill $zpid 2>/dev/null

# 4. The leader thread exits first (shows as Z) while a thread still runs.
"$MEMTOP_ZOMBIE" leader 1500 >"$TMP/leader.out" &
lpid=$!
sleep 0.1
watch_pid "leader exits first" $lpid
wait $lpid 2>/dev/null

# 5. -p on a process that execs another program: same pid, new comm, and
# the new program's faults are sampled (its thread is followed from its
# FORK record: the first rounds may fall in the birth gap, which a
# sanitizer build on a busy machine stretches to several hundred ms, so
# sanitizer builds require a quarter of the faults, others 60 %).
sh -c "sleep 0.5; exec '$W' --mode refault --rounds 20 --hot 8 --pages 64 \
	--interval-ms 50 --duration 0 --quiet --report '$TMP/exec-p.report'" &
epid=$!
watch_pid "exec (-p)" $epid
wait $epid
python3 - "$TMP/exec (-p).jsonl" "$TMP/exec-p.report" "$epid" "${MEMTOP_SANITIZE:-}" <<'PY' || fail "exec (-p): figures"
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
rep = json.load(open(sys.argv[2]))
pid = int(sys.argv[3])
need = 0.25 if sys.argv[4] not in ("", "none") else 0.6
f = frames[-1]
t = f["targets"][0]
assert t["pid"] == pid and t["comm"] == "memtop-workload", f["targets"]
pages = {int(p["addr"], 16): p["total"] for p in f["pages"] if p["pid"] == pid}
got = sum(pages.get(int(h["addr"], 16), 0) for h in rep["hot"])
made = sum(h["faults"] for h in rep["hot"])
assert got >= made * need, f"only {got} of {made} faults after exec sampled"
print(f"ok: exec (-p): comm {t['comm']}, {got} of {made} faults after exec")
PY

# 6. -- COMMAND that execs: inherited channels survive exec; exact counts.
"$MEMTOP" "${MT[@]}" -o "$TMP/exec-cmd.jsonl" -- sh -c "true; exec '$W' \
	--mode refault --rounds 5 --hot 8 --pages 64 --threads 2 \
	--interval-ms 5 --duration 0 --quiet --report '$TMP/exec-cmd.report'"
status=$?
[ "$status" -eq 0 ] || fail "exec (-- COMMAND): memtop exited $status"
python3 - "$TMP/exec-cmd.jsonl" "$TMP/exec-cmd.report" "${MEMTOP_SANITIZE:-}" <<'PY' || fail "exec (-- COMMAND): figures"
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
rep = json.load(open(sys.argv[2]))
f = frames[-1]
assert f["final"] and not f["targets"][0]["alive"], f["targets"]
assert f["targets"][0]["comm"] == "memtop-workload", f["targets"]
pages = {int(p["addr"], 16): p["total"] for p in f["pages"]}
# Pages are keyed by (pid, address) and exec keeps the pid: a fault the
# same process made at the same address before an exec counts too.  A
# ThreadSanitizer build re-executes itself with ASLR off, so its hot
# addresses can repeat one from the first image: allow that one extra
# fault per page there, and nothing elsewhere.
slack = 1 if sys.argv[3] == "thread" else 0
for h in rep["hot"]:
    got = pages.get(int(h["addr"], 16), 0)
    assert h["faults"] <= got <= h["faults"] + slack, \
        f"{h['addr']}: memtop {got}, workload {h['faults']}"
print(f"ok: exec (-- COMMAND): all {len(rep['hot'])} hot pages exact after exec")
PY

# 7. -- COMMAND exit status and signal: memtop exits with the command's
# status (128 + signal when killed), the final frame carries it, and the
# end comes within LIMIT_MS of the command's last moment.
cmd_status() {
	local name=$1 want=$2 script=$3 t_exit t_end status
	"$MEMTOP" "${MT[@]}" -o "$TMP/$name.jsonl" -- sh -c "$script" 2>"$TMP/$name.err"
	status=$?
	t_end=$(now_ms)
	t_exit=$(cat "$TMP/stamp" 2>/dev/null || echo 0)
	rm -f "$TMP/stamp"
	if [ "$status" -ne "$want" ]; then
		fail "$name: memtop exited $status, want $want: $(cat "$TMP/$name.err")"
		return
	fi
	final_ok "$TMP/$name.jsonl" || fail "$name: final frame"
	local es
	es=$(python3 "$FRAMETOOL" get "$TMP/$name.jsonl" 'f.get("exit_status")')
	[ "$es" = "$want" ] || fail "$name: final frame exit_status $es, want $want"
	if [ $((t_end - t_exit)) -gt $LIMIT_MS ]; then
		fail "$name: memtop ended $((t_end - t_exit)) ms after the command"
	else
		ok "$name: exit $status, exit_status $es in the final frame, $((t_end - t_exit)) ms after the command"
	fi
}
WL="'$W' --mode refault --rounds 3 --hot 8 --pages 64 --interval-ms 5 --duration 0 --quiet"
cmd_status "command exit 3" 3 "$WL; date +%s%3N >'$TMP/stamp'; exit 3"
cmd_status "command SIGKILL" 137 "$WL; date +%s%3N >'$TMP/stamp'; kill -9 \$\$"
cmd_status "command exit 0" 0 "$WL; date +%s%3N >'$TMP/stamp'"

# 8. A pid that existed a moment ago.
true &
gone=$!
wait $gone
t0=$(now_ms)
timeout 10 "$MEMTOP" "${MT[@]}" -p $gone >"$TMP/out" 2>"$TMP/err"
status=$?
if [ "$status" -eq 1 ] && grep -q "no such process" "$TMP/err" &&
   [ "$(wc -l <"$TMP/err")" -eq 1 ] && [ $(($(now_ms) - t0)) -lt $LIMIT_MS ]; then
	ok "pid $gone just exited: exit 1 in $(($(now_ms) - t0)) ms: $(cat "$TMP/err")"
else
	fail "pid that just exited: exit $status: $(cat "$TMP/err")"
fi

# 9. -- COMMAND that cannot be executed: exit 1, one line, no child left
# (run_reaped counts what memtop and timeout leave running, and only that).
printf 'not a program\n' >"$TMP/noexec"
chmod -x "$TMP/noexec"
mkdir "$TMP/dir"
for what in "$TMP/noexec" "$TMP/dir"; do
	t0=$(now_ms)
	run_reaped "$TMP/left" timeout 10 "$MEMTOP" "${MT[@]}" -- "$what" arg \
		>"$TMP/out" 2>"$TMP/err"
	status=$?
	left=$(cat "$TMP/left" 2>/dev/null || echo "?")
	if [ "$status" -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
	   grep -q "cannot execute.*Permission denied" "$TMP/err" &&
	   [ "$left" -eq 0 ] && [ ! -s "$TMP/out" ]; then
		ok "exec failure ($(basename "$what")): exit 1 in $(($(now_ms) - t0)) ms: $(cat "$TMP/err")"
	else
		fail "exec failure ($what): exit $status, $left left: $(cat "$TMP/err")"
	fi
done
finish
