#!/bin/bash
# Self-test of memtop-workload, the generator the other tests trust as
# ground truth: its command line, its own report, and, where perf works,
# the kernel's view of the same run (perf stat totals, perf record -d
# addresses per page).  Exit 0 pass, 1 fail, 77 skip (perf part only; the
# perf-free checks run first and fail the test on their own).

set -u

W=${MEMTOP_WORKLOAD:-build-workload/tools/memtop-workload}
if [ ! -x "$W" ]; then
	echo "FAIL: workload binary '$W' not found (set MEMTOP_WORKLOAD)"
	exit 1
fi
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/workload-selftest.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

failures=0
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

HOT=16
ROUNDS=5
RUN=(--mode refault --hot "$HOT" --rounds "$ROUNDS" --threads 2
     --interval-ms 0 --duration 0 --quiet)

# Prints nothing and exits 0 when REPORT matches HOTFILE and every hot page
# took exactly EXPECT faults, split into reads + writes; else says why.
check_report() {
	python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
report, hotfile, expect = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = json.load(open(report))
hot = [int(l, 16) for l in open(hotfile) if l.strip()]
got = [int(h["addr"], 16) for h in d["hot"]]
bad = []
if got != hot:
    bad.append("report addresses differ from --print-hot")
if len(set(hot)) != len(hot) or any(a % 4096 for a in hot):
    bad.append("hot pages not distinct and page-aligned")
if any(b - a <= 4096 for a, b in zip(hot, hot[1:])):
    bad.append("hot pages adjacent or unordered")
for h in d["hot"]:
    if h["faults"] != expect:
        bad.append("%s: faults %d != %d" % (h["addr"], h["faults"], expect))
    if h["reads"] + h["writes"] != h["faults"]:
        bad.append("%s: reads+writes != faults" % h["addr"])
total = sum(h["faults"] for h in d["hot"])
if d["rusage_minflt"] < total:
    bad.append("rusage_minflt %d < hot faults %d" % (d["rusage_minflt"], total))
if d["rounds"] != expect * d["threads"]:
    bad.append("rounds %d != %d" % (d["rounds"], expect * d["threads"]))
print("; ".join(bad))
sys.exit(1 if bad else 0)
EOF
}

# 1. Command line.
"$W" --help >"$TMP/help" 2>&1 || fail "--help exited $?"
grep -q -- '--print-hot' "$TMP/help" || fail "--help does not list options"
for bad in "--bogus" "--pages" "--pages abc" "--pages 0" "--hot 0" \
	   "--hot 3000 --pages 4096" "--mode nope" "--write-ratio 1.5" \
	   "--skew -1" "--threads 0" "--cpus 1-0" "--cpus x" \
	   "--duration abc" "stray-argument" \
	   "--start-fd 3 --wait-signal"; do
	# shellcheck disable=SC2086
	"$W" $bad >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ "$rc" -eq 2 ] || fail "'$bad' exited $rc, want 2"
	[ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "'$bad': stderr not one line"
done

# 2. The generator's own ground truth.
"$W" "${RUN[@]}" --print-hot "$TMP/hot" --report "$TMP/report.json" ||
	fail "refault run exited $?"
[ "$(wc -l <"$TMP/hot")" -eq $HOT ] || fail "--print-hot: not $HOT lines"
why=$(check_report "$TMP/report.json" "$TMP/hot" $ROUNDS) ||
	fail "refault report: $why"

# Mixed reads and writes still make one fault per page per round.
"$W" "${RUN[@]}" --write-ratio 0.5 --print-hot "$TMP/hot-rw" \
	--report "$TMP/report-rw.json" || fail "write-ratio run exited $?"
why=$(check_report "$TMP/report-rw.json" "$TMP/hot-rw" $ROUNDS) ||
	fail "write-ratio 0.5 report: $why"
python3 - "$TMP/report-rw.json" <<'EOF' ||
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if sum(h["reads"] for h in d["hot"]) and
         sum(h["writes"] for h in d["hot"]) else 1)
EOF
	fail "write-ratio 0.5 did no reads or no writes"

# Late workers own their share of the hot set and do the same rounds.
"$W" "${RUN[@]}" --late-threads 1 --late-delay 0.2 --print-hot "$TMP/hot-late" \
	--report "$TMP/report-late.json" || fail "late-thread run exited $?"
why=$(check_report "$TMP/report-late.json" "$TMP/hot-late" $ROUNDS) ||
	fail "late-thread report: $why"

# Skewed rounds are deterministic and ranked.
for i in 1 2; do
	"$W" "${RUN[@]}" --rounds 100 --skew 1.0 --report "$TMP/skew$i.json" ||
		fail "skew run $i exited $?"
done
python3 - "$TMP/skew1.json" "$TMP/skew2.json" <<'EOF' ||
import json, sys
a, b = ([h["faults"] for h in json.load(open(p))["hot"]] for p in sys.argv[1:])
sys.exit(0 if a == b and a[0] == 100 and a[0] > a[1] > a[-1] else 1)
EOF
	fail "skew: runs differ or no ranking"

# SIGTERM ends an endless run promptly, still with a report.
"$W" --duration 0 --quiet --report "$TMP/term.json" &
pid=$!
sleep 0.3
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 143 ] || fail "SIGTERM: exit $rc, want 143"
grep -q '"exit_signal":15' "$TMP/term.json" 2>/dev/null ||
	fail "SIGTERM: no report"

if [ $failures -ne 0 ]; then
	echo "$failures check(s) failed"
	exit 1
fi

# 3. The kernel's view.  perf counts every fault of the run, so the total is
# at least hot*rounds; perf record -d with period 1 gives each fault's
# address, and each hot page must have exactly rounds of them.
if ! command -v perf >/dev/null; then
	echo "SKIP: perf not found (perf-free checks passed)"
	exit 77
fi
stat_skipped=
if perf stat -e page-faults -x, -o "$TMP/stat" -- true 2>/dev/null; then
	perf stat -e page-faults -x, -o "$TMP/stat" -- "$W" "${RUN[@]}" ||
		fail "perf stat run exited $?"
	n=$(awk -F, '$3 ~ /page-faults/ { print $1 }' "$TMP/stat")
	case "$n" in
	''|*[!0-9]*) fail "perf stat: unreadable count '$n'" ;;
	*) [ "$n" -ge $((HOT * ROUNDS)) ] ||
		fail "perf stat: $n faults < $((HOT * ROUNDS))" ;;
	esac
else
	echo "# SKIP perf stat part: perf stat -e page-faults does not work here"
	stat_skipped=" (perf stat part skipped)"
fi

if ! perf record -q -e page-faults -c 1 -d -o "$TMP/probe.data" -- true \
	>/dev/null 2>"$TMP/perf-err"; then
	echo "SKIP: perf record cannot record page-faults:" \
	     "$(head -n 1 "$TMP/perf-err")"
	exit 77
fi
perf record -q -e page-faults -c 1 -d -o "$TMP/perf.data" -- \
	"$W" "${RUN[@]}" --print-hot "$TMP/hot-perf" \
	--report "$TMP/report-perf.json" >/dev/null 2>&1 ||
	fail "perf record run exited $?"
perf script -F addr -i "$TMP/perf.data" >"$TMP/addrs" 2>/dev/null ||
	fail "perf script failed"
why=$(python3 - "$TMP/addrs" "$TMP/hot-perf" "$TMP/report-perf.json" \
	$ROUNDS <<'EOF'
import collections, json, sys
addrs, hotfile, report, rounds = sys.argv[1:4] + [int(sys.argv[4])]
per_page = collections.Counter()
for line in open(addrs):
    f = line.split()
    if f:
        per_page[int(f[0], 16) & ~4095] += 1
hot = [int(l, 16) for l in open(hotfile) if l.strip()]
faults = {int(h["addr"], 16): h["faults"]
          for h in json.load(open(report))["hot"]}
bad = ["0x%x: perf %d, report %d, want %d"
       % (a, per_page[a], faults.get(a, -1), rounds)
       for a in hot if per_page[a] != rounds or faults.get(a) != rounds]
print("; ".join(bad))
sys.exit(1 if bad or not hot else 0)
EOF
) || fail "perf record per-page counts: $why"

if [ $failures -ne 0 ]; then
	echo "$failures check(s) failed"
	exit 1
fi
echo "PASS: workload self-test ($HOT hot pages x $ROUNDS rounds, perf agrees)$stat_skipped"
exit 0
