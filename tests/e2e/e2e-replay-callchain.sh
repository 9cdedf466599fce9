#!/bin/bash
# memtop -i of perf captures whose samples carry fields of variable size
# (issue 13): `perf record -e page-faults -c 1 -d` of the workload with
#   -g                     CALLCHAIN (frame pointers)
#   --call-graph dwarf     REGS_USER and STACK_USER (4 KiB of stack each)
#   --intr-regs            REGS_INTR
#   -b / -j any            BRANCH_STACK, where the machine has an LBR
# Each replays with 0 lost and every sample counted: the final frame's
# per-page totals equal `perf script -F addr` page for page, and the hot
# pages carry the workload's own fault counts.  The byte-swapped copy
# (perfdata-tool swap, read back by perf itself first) replays the same.
# With -g, a hot page's code site is "called from" the frame perf script
# shows after the faulting ip; with --call-graph dwarf, from the frame
# perf's own unwinding of the user stack shows there.  A capture in which the kernel itself
# lost samples (perf report --stats shows LOST) skips its exact checks.
. "$(dirname "$0")/../lib/lib.sh"
need_python
: "${MEMTOP_PERFDATA_TOOL:=$MEMTOP_BUILDDIR/tests/perfdata-tool}"
TOOL=$MEMTOP_PERFDATA_TOOL
CHECK="$MEMTOP_SRCDIR/tests/lib/perfdata-check.py"
[ -x "$TOOL" ] || skip "perfdata-tool not built ($TOOL)"
command -v perf >/dev/null || skip "perf not installed (Debian package linux-perf)"

WL=("$MEMTOP_WORKLOAD" --mode refault --rounds 5 --hot 16 --threads 1
    --duration 0 --quiet --interval-ms 1)

# replay NAME FILE REPORT: the checks above on one capture.
replay_checks() {
	local name=$1 file=$2 report=$3
	"$MEMTOP" -i "$file" -b --json -s total -k 100000 -d 100 \
		>"$TMP/$name.jsonl" 2>"$TMP/$name.err" ||
		{ fail "$name: memtop -i exited $?: $(cat "$TMP/$name.err")"; return 1; }
	python3 "$FRAMETOOL" check "$TMP/$name.jsonl" >/dev/null || fail "$name: frame invariants"
	perf script -i "$file" -F addr >"$TMP/$name.addrs" 2>"$TMP/$name.perr" ||
		{ fail "$name: perf script failed: $(head -1 "$TMP/$name.perr")"; return 1; }
	python3 "$CHECK" addrs "$TMP/$name.jsonl" "$TMP/$name.addrs" &&
		ok "$name: memtop -i equals perf script page for page" ||
		fail "$name: per-page totals differ from perf script"
	python3 - "$TMP/$name.jsonl" "$report" "$name" <<'PY' || fail "$name: lost, samples or hot pages"
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
f = frames[-1]
c = f["cumulative"]
assert c["lost"] == 0, f"lost {c['lost']}"
assert c["unattributed"] == 0, f"unattributed {c['unattributed']}"
hot = {int(h["addr"], 16): h["faults"] for h in json.load(open(sys.argv[2]))["hot"]}
got = {int(p["addr"], 16): p["total"] for p in f["pages"]}
bad = {hex(a): (got.get(a), n) for a, n in hot.items() if got.get(a) != n}
assert not bad, bad
print(f"ok: {sys.argv[3]}: 0 lost, {c['samples']} samples, {len(hot)} hot pages x 5 faults as the workload counted")
PY
}

# capture NAME PERF-OPTIONS...: records, then checks the file and its
# byte-swapped copy.
capture() {
	local name=$1
	shift
	if ! perf record -q -o "$TMP/$name.data" -e page-faults -c 1 -d "$@" \
		-- "${WL[@]}" --report "$TMP/$name.report" >/dev/null 2>"$TMP/$name.rec.err"; then
		skip_part "$name: perf record $* cannot run here: $(head -n 1 "$TMP/$name.rec.err")"
		return
	fi
	perf report -i "$TMP/$name.data" --stats 2>/dev/null |
		grep -qE '^ *LOST(_SAMPLES)? events: *[1-9]' &&
		{ skip_part "$name: the kernel lost samples while perf recorded (loaded machine)"; return; }
	replay_checks "$name" "$TMP/$name.data" "$TMP/$name.report" || return
	"$TOOL" swap "$TMP/$name.data" "$TMP/$name.sw.data" ||
		{ fail "$name: perfdata-tool swap failed"; return; }
	# perf reads the swapped copy the same: the swap is checked against
	# perf's own before memtop reads it.
	perf script -i "$TMP/$name.data" -F tid,ip,addr >"$TMP/$name.a" 2>/dev/null
	perf script -i "$TMP/$name.sw.data" -F tid,ip,addr >"$TMP/$name.b" 2>/dev/null
	cmp -s "$TMP/$name.a" "$TMP/$name.b" && [ -s "$TMP/$name.a" ] ||
		{ fail "$name: perf reads the swapped copy differently"; return; }
	replay_checks "$name-swapped" "$TMP/$name.sw.data" "$TMP/$name.report"
}

capture fp -g
# "called from": each hot page's code site (the workload is built with
# frame pointers) has as caller the user frame after the faulting ip in
# that page's samples' chains, as perf report -D dumps them.
if [ -s "$TMP/fp.jsonl" ]; then
	# perf's own dump of the records: each sample's data address and
	# its raw chain, context markers included.
	perf report -i "$TMP/fp.data" -D >"$TMP/fp.chains" 2>/dev/null
	python3 - "$TMP/fp.jsonl" "$TMP/fp.chains" "$TMP/fp.report" <<'PY' || fail "fp: code sites' callers differ from perf's call chains"
import json, re, sys
f = [json.loads(l) for l in open(sys.argv[1])][-1]
hot = {int(h["addr"], 16) for h in json.load(open(sys.argv[3]))["hot"]}
USER = (1 << 64) - 512			# PERF_CONTEXT_USER
samples, cur = [], None
for line in open(sys.argv[2]):
    m = re.search(r"PERF_RECORD_SAMPLE\(.*: (0x[0-9a-f]+) period: \d+ addr: (0x[0-9a-f]+)", line)
    if m:
        cur = [int(m.group(1), 16), int(m.group(2), 16), []]
        samples.append(cur)
        continue
    m = re.match(r"\.{5}\s+\d+: ([0-9a-f]+)$", line.strip())
    if m and cur:
        cur[2].append(int(m.group(1), 16))
want = {}
for ip, addr, chain in samples:
    if USER not in chain:
        continue
    user = chain[chain.index(USER) + 1:]
    if user and user[0] == ip:
        user = user[1:]			# a user ip: the frame past it
    if addr & ~0xfff in hot and user:
        want.setdefault(addr & ~0xfff, set()).add(user[0])
assert len(want) == len(hot), f"perf shows callers for {len(want)} of {len(hot)} hot pages"
bad = []
for p in f["pages"]:
    a = int(p["addr"], 16)
    if a not in hot:
        continue
    got = {int(s["caller"], 16) for s in p["sites"] if s["caller"]}
    if not got or not got <= want[a]:
        bad.append((hex(a), [hex(x) for x in got], [hex(x) for x in want[a]]))
assert not bad, bad
print(f"ok: fp: the {len(hot)} hot pages' code sites are called from the frame perf's chains show")
PY
fi
capture dwarf -m 16M --call-graph dwarf,4096
# "called from" with --call-graph dwarf: the samples carry the user
# stack, not the chain, and memtop walks each code site's first one with
# the capture's files.  The oracle is perf script's own unwinding: the
# frame after the faulting ip (inlined frames left out), which perf
# prints relative to its file and as the call (return address - 1).
if [ -s "$TMP/dwarf.jsonl" ]; then
	perf script -i "$TMP/dwarf.data" -F ip,addr,dso --show-mmap-events \
		>"$TMP/dwarf.script" 2>/dev/null
	python3 - "$TMP/dwarf.jsonl" "$TMP/dwarf.script" "$TMP/dwarf.report" <<'PY'
import json, re, sys
f = [json.loads(l) for l in open(sys.argv[1])][-1]
hot = {int(h["addr"], 16) for h in json.load(open(sys.argv[3]))["hot"]}
maps, want, cur = [], {}, None
for line in open(sys.argv[2]):
    m = re.search(r"PERF_RECORD_MMAP2 \d+/\d+: \[(0x[0-9a-f]+)\((0x[0-9a-f]+)\) @ (0x[0-9a-f]+|0) .*\]: \S+ (\S+)$", line)
    if m:
        maps.append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16), m.group(4)))
        continue
    m = re.match(r"^\s+([0-9a-f]+) \(", line)
    if m and not line.startswith("\t"):
        cur = [int(m.group(1), 16), []]
        continue
    m = re.match(r"^\t\s*([0-9a-f]+) \((\S+)\)$", line.rstrip())
    if m and cur and m.group(2) != "inlined":
        cur[1].append((int(m.group(1), 16), m.group(2)))
        if len(cur[1]) == 2 and cur[0] & ~0xfff in hot:
            want.setdefault(cur[0] & ~0xfff, set()).add(cur[1][1])
def rel(a):
    # the last mapping that covers a (later ones map over earlier)
    for start, size, pgoff, path in reversed(maps):
        if start <= a < start + size:
            return a - start + pgoff, path
    return None
if not want:
    sys.exit(77)
assert len(want) == len(hot), f"perf unwinds callers for {len(want)} of {len(hot)} hot pages"
bad = []
for p in f["pages"]:
    a = int(p["addr"], 16)
    if a not in hot:
        continue
    got = set()
    for s in p["sites"]:
        if s["caller"]:
            r = rel(int(s["caller"], 16))
            got.add((r[0] - 1, r[1]) if r else None)
    if not got or not got <= want[a]:
        bad.append((hex(a), got, want[a]))
assert not bad, bad
print(f"ok: dwarf: the {len(hot)} hot pages' code sites are called from the frame perf's own unwinding shows")
PY
	case $? in
	0) ;;
	77) skip_part "dwarf callers: this perf unwinds no user stack (built without libdw or libunwind)" ;;
	*) fail "dwarf: code sites' callers differ from perf's unwinding" ;;
	esac
fi
capture intr --intr-regs=ip,sp,ax
capture user-regs --user-regs=ip,sp
# Needs an LBR (or another branch-stack PMU): skipped where there is none.
capture branch -j any,u
finish
