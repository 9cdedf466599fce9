#!/bin/bash
# Where --listen binds and how it fails (issue 14):
# - PORT alone binds 127.0.0.1 only (ss -ltn), [::1]:PORT binds ::1;
# - a port in use, an address not on this host, an unwritable
#   --metrics-file: one line, exit 1, and the command is never launched;
# - bad --listen and --metrics-top values: one line, exit 2.
. "$(dirname "$0")/../lib/lib.sh"
need_perf
command -v ss >/dev/null || skip "ss (iproute2) not installed"
need_python

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# listening PORT: the local addresses listening on PORT, one a line.
listening() {
	ss -Hltn "sport = :$1" | awk '{print $4}'
}

# bound_by ARGS...: starts memtop ARGS on a long workload, waits until
# something listens on $PORT, prints the addresses, stops memtop.
bound_by() {
	local pid i
	"$MEMTOP" -b -o /dev/null -e faults "$@" -- "$MEMTOP_WORKLOAD" \
		--duration 30 --quiet 2>"$TMP/bound.err" &
	pid=$!
	cleanup_hooks+=("kill $pid 2>/dev/null")
	for ((i = 0; i < 100; i++)); do
		[ -n "$(listening "$PORT")" ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	listening "$PORT"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

PORT=$(free_port)
got=$(bound_by --listen "$PORT")
if [ "$got" = "127.0.0.1:$PORT" ]; then
	ok "--listen $PORT binds 127.0.0.1:$PORT only"
else
	fail "--listen $PORT: listening on '$got' (stderr: $(head -c 300 "$TMP/bound.err"))"
fi

if python3 -c 'import socket; s = socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null; then
	PORT=$(free_port)
	got=$(bound_by --listen "[::1]:$PORT")
	[ "$got" = "[::1]:$PORT" ] && ok "--listen [::1]:$PORT binds ::1" ||
		fail "--listen [::1]:$PORT: listening on '$got'"
else
	echo "note: no IPv6 loopback here: [::1] case not run"
fi

# expect STATUS PATTERN ARGS...: memtop ARGS -- touch $TMP/ran must exit
# STATUS with one stderr line matching PATTERN, and never run the command.
expect() {
	local want=$1 pat=$2 got lines
	shift 2
	rm -f "$TMP/ran"
	timeout 10 "$MEMTOP" -b -o /dev/null "$@" -- touch "$TMP/ran" \
		</dev/null >"$TMP/out" 2>"$TMP/err"
	got=$?
	lines=$(grep -vc '^Try ' "$TMP/err")
	if [ "$got" -ne "$want" ] || [ "$lines" -ne 1 ] ||
	   ! grep -Eq -- "$pat" "$TMP/err"; then
		fail "memtop $*: exit $got (want $want), stderr: $(head -c 300 "$TMP/err")"
	elif [ -e "$TMP/ran" ]; then
		fail "memtop $*: the command ran"
	else
		ok "memtop $*: exit $got: $(grep -v '^Try ' "$TMP/err")"
	fi
}

# A port in use: held by a listener of our own.
PORT=$(free_port)
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1)
print("ready", flush=True); time.sleep(60)' "$PORT" >"$TMP/holder.out" &
holder=$!
cleanup_hooks+=("kill $holder 2>/dev/null")
for ((i = 0; i < 50; i++)); do grep -q ready "$TMP/holder.out" && break; sleep 0.1; done
expect 1 "^memtop: --listen 127.0.0.1:$PORT: Address already in use$" --listen "$PORT"
kill "$holder"
wait "$holder" 2>/dev/null

expect 1 '^memtop: --listen 192\.0\.2\.1:9: Cannot assign requested address' \
	--listen 192.0.2.1:9
expect 1 "^memtop: --metrics-file /nonexistent/m.prom: No such file" \
	--metrics-file /nonexistent/m.prom
mkdir "$TMP/dir"
expect 1 "^memtop: --metrics-file $TMP/dir: Is a directory" \
	--metrics-file "$TMP/dir"
expect 2 "^memtop: --listen: invalid address in 'localhost:80'" --listen localhost:80
expect 2 "^memtop: --listen: port '0' out of range" --listen 0
expect 2 "^memtop: --listen: port '70000' out of range" --listen 127.0.0.1:70000
expect 2 "^memtop: --listen: invalid address in '\\[::1\\]'" --listen '[::1]'
expect 2 "^memtop: --listen: invalid address" --listen ':80'
expect 2 "^memtop: --metrics-top: process count '5000' out of range" \
	--listen 80 --metrics-top 5000
expect 2 "^memtop: --metrics-top needs --listen or --metrics-file" --metrics-top 3
finish
