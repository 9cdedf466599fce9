#!/bin/bash
# Bad input gets one clear line on stderr and exit 1 (runtime) or 2
# (usage), never a crash or a hang.
. "$(dirname "$0")/../lib/lib.sh"

# expect STATUS DESCRIPTION PATTERN -- ARGS...: runs memtop with ARGS under
# a timeout, checks the exit status, that stderr is one line, and that it
# matches PATTERN (extended regex).
expect() {
	local want=$1 what=$2 pat=$3
	shift 4
	timeout 10 "$MEMTOP" "$@" </dev/null >"$TMP/out" 2>"$TMP/err"
	local got=$?
	local lines
	lines=$(grep -vc '^Try ' "$TMP/err")
	if [ "$got" -ne "$want" ]; then
		fail "$what: exit $got, want $want (stderr: $(head -c 300 "$TMP/err"))"
	elif [ "$lines" -ne 1 ]; then
		fail "$what: $lines lines on stderr: $(head -c 300 "$TMP/err")"
	elif ! grep -Eq -- "$pat" "$TMP/err"; then
		fail "$what: stderr does not match /$pat/: $(cat "$TMP/err")"
	else
		ok "$what: exit $got: $(grep -v '^Try ' "$TMP/err")"
	fi
}

expect 2 "no target"        "no target"            -- -b
expect 2 "missing pid"      "-p"                   -- -b -p
expect 2 "pid 0"            "-p.*0"                -- -b -p 0
expect 2 "negative pid"     "-p"                   -- -b -p -5
expect 2 "garbage pid"      "-p.*abc"              -- -b -p abc
expect 2 "empty pid item"   "-p"                   -- -b -p 1,,2
expect 2 "garbage period"   "-c.*abc"              -- -b -c abc -p 1
expect 2 "zero period"      "-c"                   -- -b -c 0 -p 1
expect 2 "unknown option"   "unrecognized|unknown" -- -b --frobnicate -p 1
expect 2 "delay 0"          "-d"                   -- -b -d 0 -p 1
expect 2 "delay nan"        "-d"                   -- -b -d nan -p 1
expect 2 "bad source"       "-e"                   -- -b -e quantum -p 1
expect 2 "bad sort"         "-s"                   -- -b -s bogus -p 1
expect 2 "top 0"            "-k"                   -- -b -k 0 -p 1
expect 2 "json without -b"  "json"                 -- --json -p 1
expect 2 "bad --listen"     "--listen"             -- -b --listen nowhere -p 1
expect 2 "--quiet with -o"  "--quiet"              -- -b --quiet -o x -p 1
expect 2 "-p and command"   "-p"                   -- -b -p 1 -- true
expect 2 "stray argument"   "unexpected argument"  -- -b true
expect 1 "no such pid"      "no such process"      -- -b -p 4194303
expect 1 "kernel thread"    "kernel thread"        -- -b -p 2
expect 1 "command not found" "cannot execute"      -- -b -- /nonexistent/cmd
expect 1 "unwritable -o"    "-o"                   -- -b -o /nonexistent/dir/x -- true
expect 1 "TUI without tty"  "not a terminal.*-b"   -- -p 1
# The parallel drain's knob (collector/live/drainpar.c): a count or nothing.
MEMTOP_DRAIN_THREADS=abc expect 1 "drain threads abc" "MEMTOP_DRAIN_THREADS=abc" -- -b -p 1
MEMTOP_DRAIN_THREADS=65 expect 1 "drain threads 65" "MEMTOP_DRAIN_THREADS=65.*0 to 64" -- -b -p 1
# Paths with control characters: still one line, the bytes escaped (a
# newline as \n, an escape as \x1b), never passed to the terminal.
nl_path=$(printf '/nonexistent/a\nb')
esc_path=$(printf '/nonexistent/\033[2Jc')
expect 1 "-o path with newline"  '-o /nonexistent/a\\nb'  -- -b -o "$nl_path" -- true
expect 1 "--log path with escape" '--log /nonexistent/\\x1b\[2Jc' -- -b --log "$esc_path" -- true
if grep -q "$(printf '\033')" "$TMP/err"; then
	fail "--log path with escape: an escape byte reached stderr"
fi

# A pid we may not trace: an unprivileged user against pid 1.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	timeout 10 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$MEMTOP" -b -p 1 </dev/null >"$TMP/out" 2>"$TMP/err"
	got=$?
	if [ "$got" -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
	   grep -Eq "Permission denied|not permitted" "$TMP/err" &&
	   grep -Eq "paranoid|CAP_PERFMON|another user" "$TMP/err"; then
		ok "untraceable pid: $(cat "$TMP/err")"
	else
		fail "untraceable pid: exit $got: $(cat "$TMP/err")"
	fi
elif [ "$(id -u)" -ne 0 ]; then
	skip_part "untraceable-pid case: not root (it runs memtop as nobody)"
else
	skip_part "untraceable-pid case: setpriv not installed (util-linux)"
fi
finish
