# Helpers for tests that drive the real memtop TUI on a live workload in a
# private tmux server and check it against outside oracles: the kernel's
# own fault counter of the workload (/proc/PID/stat minflt, the count
# `perf stat -e page-faults` and the workload's --report "rusage_minflt"
# give), read while the workload is stopped so that both sides are still.
#
# Source after lib.sh.  Defines:
#   tui_start NAME CMD...   run CMD in a private tmux server (160x45)
#   screen, wait_screen ERE [SECS], wait_gone ERE [SECS]
#   hdr_frame, hdr_cum      frame number and cumulative samples + lost +
#                           unattributed + untracked from the header
#   wl_stop PID, wl_cont PID, minflt PID
#   quiesce                 waits for two frames with the workload stopped
#                           and sets CUM (cumulative count) and FLT (minflt)
#   check_ratio WHAT S F P N  S samples for F faults at period P, N channels
# Every process signalled is one the test started (by pid).

command -v tmux >/dev/null || skip "tmux not installed"
unset TMUX

TUI_SOCK="memtop-test-$$"
TUI_W=160
TUI_H=45
tm() { tmux -L "$TUI_SOCK" -f /dev/null "$@"; }
cleanup_hooks+=('tmux -L "$TUI_SOCK" -f /dev/null kill-server 2>/dev/null')

# tui_start NAME CMD...: a fresh server per scenario; the pane's shell
# writes its pid to $TMP/NAME.pid, runs CMD, prints EXIT=status and keeps
# the last screen.
tui_start() {
	local name=$1 script
	shift
	tm kill-server 2>/dev/null
	TUI_SOCK="memtop-test-$$-$name"
	script=$(mktemp "$TMP/$name.XXXXXX")
	{
		echo 'stty sane'
		printf 'echo $$ >%q\n' "$TMP/$name.pid"
		printf '%q ' "$@"
		echo
		echo 'echo "EXIT=$?"'
		echo 'exec sleep 600'
	} >"$script"
	rm -f "$TMP/$name.pid"
	tm new-session -d -x "$TUI_W" -y "$TUI_H" "bash $script"
}

# child_of PID: the first child process of PID (0 if none yet).
child_of() {
	local c
	c=$(cat /proc/"$1"/task/*/children 2>/dev/null | tr ' ' '\n' | grep -m1 .)
	echo "${c:-0}"
}

# launched_pid NAME EXE: the command memtop launched in scenario NAME (the
# child of memtop, the child of the pane's shell) once it runs EXE (memtop
# forks, then the child execs the command), waiting up to 10 s.
launched_pid() {
	local i sh m w
	for ((i = 0; i < 200; i++)); do
		sh=$(cat "$TMP/$1.pid" 2>/dev/null)
		if [ -n "$sh" ]; then
			m=$(child_of "$sh")
			# memtop has other children too (the symbols helper):
			# the one running EXE.
			for w in $(cat /proc/"$m"/task/*/children 2>/dev/null); do
				[ "$(readlink "/proc/$w/exe")" = "$(readlink -f "$2")" ] &&
					{ echo "$w"; return 0; }
			done
		fi
		sleep 0.05
	done
	return 1
}

screen() { tm capture-pane -p 2>/dev/null; }

wait_screen() {
	local pat=$1 limit=${2:-10} i
	for ((i = 0; i < limit * 20; i++)); do
		screen >"$TMP/screen"
		grep -Eq -- "$pat" "$TMP/screen" && return 0
		sleep 0.05
	done
	echo "--- screen (waited ${limit}s for /$pat/):"
	cat "$TMP/screen"
	return 1
}

wait_gone() {
	local pat=$1 limit=${2:-10} i
	for ((i = 0; i < limit * 20; i++)); do
		screen >"$TMP/screen"
		grep -Eq -- "$pat" "$TMP/screen" || return 0
		sleep 0.05
	done
	echo "--- screen (waited ${limit}s for /$pat/ to go):"
	cat "$TMP/screen"
	return 1
}

# Header fields of the screen last captured in $TMP/screen.
hdr_frame() { grep -o '  frame [0-9]*' "$TMP/screen" | head -1 | grep -o '[0-9]*$'; }
# Cumulative samples, plus every other place a sample can be counted in.
hdr_cum() {
	awk '
	/^lost [0-9]+\/[0-9]+  throttled/ {
		split($2, a, "/"); split($6, u, "/"); split($8, t, "/")
		extra = a[2] + u[2] + t[2]; have_e = 1
	}
	/^samples [0-9]+\/[0-9]+  threads/ { split($2, s, "/"); cum = s[2]; have_s = 1 }
	END { if (have_e && have_s) print cum + extra }' "$TMP/screen"
}
hdr_samples_line() { grep -E '^samples [0-9]+/[0-9]+' "$TMP/screen" | head -1; }

# The kernel's count of the process's page faults (all threads, live and
# gone): field 10 of /proc/PID/stat, counted after the ")" of the comm.
minflt() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $8 }'; }

# wl_stop PID: SIGSTOP, then wait until every thread is stopped.  A
# thread stops only once it runs again to take the signal: on a loaded
# machine (the workload runs niced under meson) that can take seconds.
wl_stop() {
	local pid=$1 end=$((SECONDS + 30)) f st all states
	kill -STOP "$pid" || return 1
	while :; do
		all=1
		states=
		for f in /proc/"$pid"/task/*/stat; do
			st=$(<"$f") 2>/dev/null || continue
			st=${st##*) }
			st=${st:0:1}
			states+=$st
			case $st in
			T | t) ;;
			*) all=0 ;;
			esac
		done
		[ "$all" = 1 ] && return 0
		[ "$SECONDS" -ge "$end" ] && break
		sleep 0.01
	done
	echo "workload $pid did not stop within 30 s (thread states: $states)"
	return 1
}
wl_cont() { kill -CONT "$1"; }

# quiesce PID: with the workload stopped, the frame after next has drained
# every sample of its faults (memtop drains all rings at each frame); a
# third frame must agree.  Sets CUM and FLT.
quiesce() {
	local pid=$1 f0 f c1 end=$((SECONDS + 30))
	FLT=$(minflt "$pid")
	screen >"$TMP/screen"
	f0=$(hdr_frame)
	while :; do
		screen >"$TMP/screen"
		f=$(hdr_frame)
		[ -n "$f" ] && [ -n "$f0" ] && [ "$f" -ge $((f0 + 2)) ] && break
		[ "$SECONDS" -ge "$end" ] && { echo "no new frames: $(hdr_samples_line)"; return 1; }
		sleep 0.05
	done
	c1=$(hdr_cum)
	f0=$f
	while :; do
		screen >"$TMP/screen"
		f=$(hdr_frame)
		[ -n "$f" ] && [ "$f" -ge $((f0 + 1)) ] && break
		[ "$SECONDS" -ge "$end" ] && { echo "no new frames: $(hdr_samples_line)"; return 1; }
		sleep 0.05
	done
	CUM=$(hdr_cum)
	if [ -z "$CUM" ] || [ "$CUM" != "$c1" ]; then
		echo "--- counts still moving with the workload stopped ($c1 -> $CUM):"
		cat "$TMP/screen"
		return 1
	fi
	[ "$(minflt "$pid")" = "$FLT" ] || { echo "workload faulted while stopped"; return 1; }
}

# run_for PID SECS: lets the stopped workload run for SECS seconds.
run_for() {
	wl_cont "$1"
	sleep "$2"
	wl_stop "$1"
}

# check_ratio WHAT S F P N: S samples for F faults at period P over N
# channels (threads).  The faults source's software event overflows on
# every P-th fault of each channel, so S*P and F differ by less than the
# N channels' residues (N samples) plus one per channel for the reload on
# a period change; a sampler that picked faults at random with probability
# 1/P would add a binomial spread, sqrt(F/P*(1-1/P)): 4 standard
# deviations of it are allowed on top.  Nothing comes from memtop.
RATIOS=()
check_ratio() {
	local what=$1 s=$2 f=$3 p=$4 n=$5 verdict
	verdict=$(awk -v s="$s" -v f="$f" -v p="$p" -v n="$n" 'BEGIN {
		e = f / p; q = 1 / p
		tol = 2 * n + 4 * sqrt(f * q * (1 - q))
		d = s - e; if (d < 0) d = -d
		printf "%s %.1f %.1f %.4f\n", (f > 0 && d <= tol) ? "ok" : "bad", e, tol, (f ? s / f : 0)
	}')
	set -- $verdict
	RATIOS+=("$what: period $p, $s samples / $f faults = $4 (want $2 +- $3)")
	if [ "$1" = ok ]; then
		ok "$what: period $p: $s samples for $f faults (expected $2 +- $3)"
	else
		fail "$what: period $p: $s samples for $f faults, expected $2 +- $3"
	fi
}
