#!/bin/bash
# Signals and the terminal, on the real TUI watching a live workload,
# through a private tmux server: SIGINT, SIGTERM and SIGHUP sent with
# kill(1); Ctrl-Z then `fg` in an interactive bash; a storm of 50 window
# resizes; a 20x5 window; the target exiting (banner, picture kept until
# q); TERM=dumb and TERM unset; standard output not a terminal; the C
# locale.  After each: memtop's exit status (0 for q and signals, 1 when
# the TUI cannot start, with a message suggesting -b), the terminal back in
# canonical mode with echo, and the launched workload gone.
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/chaos-lib.sh"
need_perf
command -v tmux >/dev/null || skip "tmux not installed"

SOCK="$TMP/tmux"
unset TMUX
# tmux draws UTF-8 only when its own locale says so; the panes inherit it
# (the C-locale case overrides it in its pane).
export LC_ALL=C.UTF-8
TM() { tmux -S "$SOCK" -f /dev/null "$@"; }
cleanup_hooks+=('tmux -S "$SOCK" kill-server 2>/dev/null')
# The server lives as long as this idle session.
TM new-session -d -s idle -x 80 -y 24 'exec sleep 100000'

# screen NAME: the pane's text.
screen() { TM capture-pane -p -t "$1" 2>/dev/null; }

# wait_screen NAME PATTERN [SECONDS]: until a line matches (ERE).
wait_screen() {
	local name=$1 pat=$2 limit=${3:-10} i
	for ((i = 0; i < limit * 10; i++)); do
		screen "$name" >"$TMP/screen"
		grep -Eq -- "$pat" "$TMP/screen" && return 0
		sleep 0.1
	done
	echo "--- $name: waited ${limit}s for /$pat/; screen:"
	cat "$TMP/screen"
	return 1
}

# start NAME COLSxROWS [VAR=value...]: runs memtop's TUI on a workload
# in session NAME; memtop's pid goes to $TMP/NAME.pid; after memtop the
# pane shows EXIT=<status>, TTY=<icanon and echo flags>, and whether the
# workload is gone.  WL_ARGS overrides the workload's arguments.
start() {
	local name=$1 size=$2 script=$TMP/$1.sh
	shift 2
	local wl=${WL_ARGS:---mode refault --threads 2 --hot 32 --pages 512 --interval-ms 2 --duration 0}
	local cmd="\"$MEMTOP\" -e faults -d 0.3 -- \"$MEMTOP_WORKLOAD\" $wl --quiet --report \"$TMP/$name.report\""
	{
		echo 'stty sane'
		# NAME= (empty) unsets NAME.
		for v in "$@"; do
			if [ -z "${v#*=}" ]; then
				echo "unset ${v%%=*}"
			else
				printf 'export %q\n' "$v"
			fi
		done
		echo "sh -c 'echo \$\$ >\"$TMP/$name.pid\"; exec \"\$@\"' sh $cmd"
		echo 'echo "EXIT=$?"'
		echo "echo \"TTY=\$(stty -a | tr ' ;' '\\n\\n' | grep -xE -- '-?(icanon|echo)' | tr '\\n' ' ')\""
		echo "pgrep -f -- \"$TMP/$name.report\" >/dev/null && echo WORKLOAD-ALIVE || echo WORKLOAD-GONE"
		echo 'exec sleep 600'
	} >"$script"
	TM new-session -d -s "$name" -x "${size%x*}" -y "${size#*x}" "bash $script"
}

# ended NAME WANT_STATUS: checks the lines the runner printed after memtop.
ended() {
	local name=$1 want=$2
	wait_screen "$name" "^WORKLOAD-" 15 || { fail "$name: memtop did not end"; return 1; }
	local st tty
	st=$(grep -o 'EXIT=[0-9]*' "$TMP/screen" | tail -1)
	tty=$(grep -o 'TTY=.*' "$TMP/screen" | tail -1)
	[ "$st" = "EXIT=$want" ] || { fail "$name: $st, want EXIT=$want"; return 1; }
	[ "${tty% }" = "TTY=icanon echo" ] || { fail "$name: terminal not restored: $tty"; return 1; }
	grep -q WORKLOAD-GONE "$TMP/screen" || { fail "$name: workload still running"; return 1; }
	return 0
}

HEADER="period [0-9]+ "

# 1-3. SIGINT, SIGTERM, SIGHUP from kill(1) while frames flow.
for sig in INT TERM HUP; do
	start "sig$sig" 120x40
	wait_screen "sig$sig" "$HEADER" || { fail "SIG$sig: no header"; continue; }
	# The control for case 7: in a UTF-8 locale the bars are not ASCII.
	[ $sig = INT ] && wait_screen sigINT "^0x[0-9a-f]+ " 10 && sleep 0.7 &&
		screen sigINT >"$TMP/utf8.screen"
	t0=$(now_ms)
	kill -$sig "$(cat "$TMP/sig$sig.pid")"
	ended "sig$sig" 0 && ok "SIG$sig: exit 0 in $(($(now_ms) - t0)) ms, terminal restored, workload reaped"
done

# 4. A storm of 50 resizes, then still drawing and answering q.
start winch 120x40
if wait_screen winch "$HEADER"; then
	for ((i = 0; i < 50; i++)); do
		TM resize-window -t winch -x $((40 + (i * 37) % 120)) -y $((6 + (i * 13) % 40))
	done
	TM resize-window -t winch -x 120 -y 40
	pid=$(cat "$TMP/winch.pid")
	if ! kill -0 "$pid" 2>/dev/null; then
		fail "resize storm: memtop died"
	elif wait_screen winch "$HEADER" 5; then
		TM send-keys -t winch q
		ended winch 0 && ok "resize storm (50 sizes): still drawing, q exits 0, terminal restored"
	else
		fail "resize storm: no header after the storm"
	fi
else
	fail "resize storm: no header"
fi

# 5. A 20x5 terminal: a message, no crash; growing it shows the picture.
start tiny 20x5
if wait_screen tiny "too small|small" 10; then
	sleep 1
	kill -0 "$(cat "$TMP/tiny.pid")" 2>/dev/null || fail "20x5: memtop died"
	TM resize-window -t tiny -x 120 -y 40
	wait_screen tiny "$HEADER" 5 || fail "20x5: no header after growing"
	TM send-keys -t tiny q
	ended tiny 0 && ok "20x5: 'too small' message, no crash, grows back, q exits 0"
else
	fail "20x5: no message"
fi

# 6. The target exits: the picture stays with a banner until q.
WL_ARGS="--mode refault --threads 2 --hot 16 --pages 256 --interval-ms 2 --duration 1" \
	start exited 120x40
if wait_screen exited "target exited" 10; then
	sleep 0.5
	kill -0 "$(cat "$TMP/exited.pid")" 2>/dev/null || fail "target exit: memtop left without q"
	grep -Eq "$HEADER" "$TMP/screen" || fail "target exit: picture not kept"
	TM send-keys -t exited q
	ended exited 0 && ok "target exit: 'exited' banner, picture kept, q exits 0"
else
	fail "target exit: no banner"
fi

# 7. The C locale: ASCII only on screen, no crash.
start clocale 120x40 LANG=C LC_ALL=C
if wait_screen clocale "$HEADER" && wait_screen clocale "^0x[0-9a-f]+ " 10; then
	sleep 1
	screen clocale >"$TMP/clocale.screen"
	LC_ALL=C grep -q '[^ -~]' "$TMP/utf8.screen" ||
		fail "C locale: control failed: no non-ASCII in the UTF-8 run"
	if LC_ALL=C grep -q '[^ -~]' "$TMP/clocale.screen"; then
		fail "C locale: non-ASCII on screen: $(LC_ALL=C grep -m3 '[^ -~]' "$TMP/clocale.screen")"
	fi
	TM send-keys -t clocale q
	ended clocale 0 && ok "C locale: ASCII-only screen, q exits 0"
else
	fail "C locale: no header or rows"
fi

# 8. TERM=dumb and TERM unset: one clear line suggesting -b, exit 1, and
# the command is never started (--print-hot would write its file at once).
for term in dumb unset; do
	value=dumb
	[ "$term" = unset ] && value=
	WL_ARGS="--mode refault --duration 0 --print-hot $TMP/term-$term.hot" \
		start "term-$term" 120x40 "TERM=$value"
	if ended "term-$term" 1; then
		if ! grep -q "use -b" "$TMP/screen"; then
			fail "TERM $term: no message suggesting -b: $(cat "$TMP/screen")"
		elif [ -e "$TMP/term-$term.hot" ]; then
			fail "TERM $term: the command was started although the TUI cannot run"
		else
			ok "TERM $term: exit 1, command not started, '$(grep -m1 'memtop:' "$TMP/screen")'"
		fi
	fi
done

# 9. Standard output is a pipe: suggests -b, exit 1, nothing launched.
cat >"$TMP/pipe.sh" <<EOS
stty sane
"$MEMTOP" -e faults -- "$MEMTOP_WORKLOAD" --quiet --report "$TMP/pipe.report" | cat
echo "EXIT=\${PIPESTATUS[0]}"
echo "TTY=\$(stty -a | tr ' ;' '\\n\\n' | grep -xE -- '-?(icanon|echo)' | tr '\\n' ' ')"
pgrep -f -- "$TMP/pipe.report" >/dev/null && echo WORKLOAD-ALIVE || echo WORKLOAD-GONE
exec sleep 600
EOS
TM new-session -d -s pipe -x 120 -y 40 "bash $TMP/pipe.sh"
if ended pipe 1; then
	grep -q "not a terminal.*-b" "$TMP/screen" &&
		ok "stdout a pipe: exit 1, '$(grep -m1 'memtop:' "$TMP/screen")'" ||
		fail "stdout a pipe: no message suggesting -b"
fi

# 10. Ctrl-Z and fg in an interactive job-control shell.
TM new-session -d -s jobs -x 120 -y 40 "bash --norc --noprofile -i"
TM send-keys -t jobs "PS1='jobs\$ '; stty sane" Enter
TM send-keys -t jobs "\"$MEMTOP\" -e faults -d 0.3 -- \"$MEMTOP_WORKLOAD\" --mode refault --threads 2 --hot 32 --pages 512 --interval-ms 2 --duration 0 --quiet --report \"$TMP/jobs.report\"" Enter
if wait_screen jobs "$HEADER"; then
	TM send-keys -t jobs C-z
	if wait_screen jobs "Stopped" 5; then
		TM send-keys -t jobs "clear; stty -a | tr ' ;' '\\n\\n' | grep -xE -- '-?(icanon|echo)' | tr '\\n' ' '; echo" Enter
		wait_screen jobs "^-?icanon -?echo" 5
		grep -q "^icanon echo" "$TMP/screen" ||
			fail "Ctrl-Z: the shell got the terminal without icanon/echo: $(grep icanon "$TMP/screen")"
		TM send-keys -t jobs "fg" Enter
		if wait_screen jobs "$HEADER" 5 && sleep 1 && wait_screen jobs "^0x[0-9a-f]+ " 5; then
			TM send-keys -t jobs q
			TM send-keys -t jobs "echo EXIT=\$?; echo \"TTY=\$(stty -a | tr ' ;' '\\n\\n' | grep -xE -- '-?(icanon|echo)' | tr '\\n' ' ')\"; pgrep -f -- \"$TMP/jobs.report\" >/dev/null && echo WORKLOAD-ALIVE || echo WORKLOAD-GONE" Enter
			ended jobs 0 && ok "Ctrl-Z: stopped, shell terminal sane; fg: screen back and updating; q exits 0"
		else
			fail "fg: the screen did not come back"
		fi
	else
		fail "Ctrl-Z: memtop did not stop"
	fi
else
	fail "job-control shell: no header"
fi
finish
