#!/bin/bash
# Bad input beyond tests/e2e/bad-input.sh: every option with an empty,
# negative, huge or malformed value; output, log and record paths that
# cannot be written.  Each run: the exit status (2 usage, 1 runtime), one
# line on stderr (besides "Try 'memtop --help'") naming the option, no
# crash and no hang (10 s timeout), nothing on standard output.
. "$(dirname "$0")/../lib/lib.sh"
. "$(dirname "$0")/chaos-lib.sh"

# expect STATUS PATTERN ARGS...: memtop ARGS must exit STATUS with one
# stderr line matching PATTERN (ERE).
n_cases=0
expect() {
	local want=$1 pat=$2
	shift 2
	n_cases=$((n_cases + 1))
	timeout 10 "$MEMTOP" "$@" </dev/null >"$TMP/out" 2>"$TMP/err"
	local got=$? lines
	lines=$(grep -vc '^Try ' "$TMP/err")
	if [ "$got" -ne "$want" ]; then
		fail "memtop $*: exit $got, want $want ($(head -c 300 "$TMP/err"))"
	elif [ "$lines" -ne 1 ]; then
		fail "memtop $*: $lines lines on stderr: $(head -c 300 "$TMP/err")"
	elif ! grep -Eq -- "$pat" "$TMP/err"; then
		fail "memtop $*: stderr does not match /$pat/: $(cat "$TMP/err")"
	elif [ -s "$TMP/out" ] && [ "$want" -eq 2 ]; then
		fail "memtop $*: usage error wrote to standard output"
	fi
}

# Usage errors: option, then values that must each be refused.
usage_case() {
	local opt=$1 pat=$2
	shift 2
	for v in "$@"; do
		expect 2 "$pat" -b "$opt" "$v" -p 1
	done
}
HUGE=18446744073709551616
usage_case -p '^memtop: -p: ' '' -1 +1 ' 1' 1x 0x10 $HUGE 2147483648 1,,2 1,2,1 ,
usage_case -e '^memtop: -e: ' '' FAULTS faults,pebs ' faults'
usage_case -c '^memtop: -c: ' '' -1 0 $HUGE 0x 0x4000000000000001 1e3 ' 5' 5x 0x-1
usage_case -d '^memtop: -d: ' '' -1 0 1e400 -1e400 1e-400 inf nan ' 1' 1s 3601 0.001 ..
usage_case -n '^memtop: -n: ' '' -1 0 $HUGE 1.5 9223372036854775808
usage_case -k '^memtop: -k: ' '' -1 0 99999999999 100001 $HUGE 1k
usage_case -s '^memtop: -s: ' '' SAMPLES 'total,loads'
usage_case --max-pages '^memtop: --max-pages: ' '' -1 0 $HUGE 4294967297 1M
usage_case --ldlat '^memtop: --ldlat: ' '' -1 0 65536 $HUGE
usage_case --granularity '^memtop: --granularity: ' '' -1 0 3k 4096x 1t 2m2
usage_case --migrate-hot '^memtop: --migrate-hot: ' '' -1 $HUGE 99999999999
usage_case --listen '^memtop: --listen: ' '' 0 -1 65536 $HUGE x :80 '[::1]' \
	'[::1' ::1:80 localhost:80 1.2.3:80 '1.2.3.4: 80' ' 80' 0x50 1.2.3.4:
usage_case --metrics-top '^memtop: --metrics-top: ' '' -1 1001 $HUGE 1k
usage_case --metrics-file '^memtop: --metrics-file: ' ''
for opt in -o --log --record -i; do
	expect 2 "^memtop: $opt: empty file name" -b "$opt" '' -p 1
done
expect 2 '^memtop: --pid: missing argument|^memtop: -p' -b --pid
expect 2 'empty item' -b --pid= 
expect 2 'takes no argument' -b --batch=1 -p 1
expect 2 'ambiguous|unknown' -b --m 1 -p 1
# A pid list too long to be real: refused fast, not looked up one by one.
long=$(seq -s, 1 20000)
expect 2 '^memtop: -p: duplicate pid 1' -b -p "$long,1"

# Runtime errors: paths that cannot be written.
mkdir "$TMP/dir"
echo exists >"$TMP/exists"
expect 1 "^memtop: -o $TMP/dir: Is a directory" -b -o "$TMP/dir" -- true
expect 1 '^memtop: -o /proc/version: ' -b -o /proc/version -- true
expect 1 '^memtop: -o /dev/full: No space left' -b -o /dev/full -- true
expect 1 "^memtop: --log $TMP/dir: Is a directory" -b --log "$TMP/dir" -- true
expect 1 '^memtop: --log /proc/version: ' -b --log /proc/version -- true
expect 1 '^memtop: --log /nonexistent/x: No such file' -b --log /nonexistent/x -- true
expect 1 "^memtop: --record $TMP/exists: file exists.*--force" -b -o /dev/null \
	--record "$TMP/exists" -- true
grep -qx exists "$TMP/exists" || fail "--record without --force changed the existing file"
expect 1 '^memtop: --record /proc/version' -b -o /dev/null --force \
	--record /proc/version -- true
expect 1 "^memtop: -i $TMP/dir: " -b -i "$TMP/dir"
expect 1 '^memtop: -i /dev/null: not a perf.data' -b -i /dev/null
head -c 4096 /dev/urandom >"$TMP/garbage"
expect 1 "^memtop: -i $TMP/garbage: not a perf.data" -b -i "$TMP/garbage"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	for opt in -o --log; do
		n_cases=$((n_cases + 1))
		"${NOBODY[@]}" "$MEMTOP" -b "$opt" /root/memtop-chaos-x -- true \
			</dev/null >/dev/null 2>"$TMP/err"
		st=$?
		[ "$st" -eq 1 ] && grep -q "^memtop: $opt /root/memtop-chaos-x: Permission denied" "$TMP/err" ||
			fail "unwritable $opt as uid 65534: exit $st: $(cat "$TMP/err")"
	done
fi
# Standard output that takes nothing: one line, exit 1.
n_cases=$((n_cases + 1))
"$MEMTOP" -b -- true >/dev/full 2>"$TMP/err"
st=$?
[ "$st" -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
	grep -q '^memtop: standard output: No space left' "$TMP/err" ||
	fail "stdout /dev/full: exit $st: $(cat "$TMP/err")"
[ "$failures" -eq 0 ] && ok "$n_cases bad inputs: right exit status, one line naming the option or path, no hang"
finish
