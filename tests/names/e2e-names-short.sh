#!/bin/bash
# Names of a process that lives less than one frame (issue 13): memtop
# launches tests/names/names-test with --linger-ms 0, which touches its
# .data, .bss, a library's .data, its heap, a shared and a private file
# mapping, and a mapping it unmaps at once, then exits within a few
# milliseconds, long before the first frame reads anything from /proc.
# Every page must be named exactly as names-check.py expects of the
# 1.5 s run in e2e-names.sh (the same oracle: the program's own report),
# from the kernel's MMAP2 records alone.  The mapping made and unmapped
# between two frames is named in the long run too (e2e-names.sh).
. "$(dirname "$0")/../lib/lib.sh"
need_perf
need_python
: "${MEMTOP_NAMES_TEST:=$MEMTOP_BUILDDIR/tests/names/names-test}"
CHECK="$MEMTOP_SRCDIR/tests/names/names-check.py"
[ -x "$MEMTOP_NAMES_TEST" ] || skip "names-test not built ($MEMTOP_NAMES_TEST)"

"$MEMTOP" -b --json -e faults -d 0.5 -s total -k 500 -o "$TMP/short.jsonl" \
	-- "$MEMTOP_NAMES_TEST" --report "$TMP/short-report.json" \
	--file "$TMP/short-data.bin" --linger-ms 0 --no-stack ||
	fail "memtop exited $?"
[ -s "$TMP/short-report.json" ] || fail "names-test wrote no report"
python3 "$FRAMETOOL" check "$TMP/short.jsonl" || fail "frame invariants"
lived=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["lived_us"])' \
	"$TMP/short-report.json")
nframes=$(wc -l < "$TMP/short.jsonl")
echo "names-test lived ${lived} us; $nframes frame(s)"
# One frame (the final one) holds everything: the process was gone
# before memtop named a page.
[ "$nframes" -eq 1 ] || skip_part "the run took more than one frame here (loaded machine)"
[ "$lived" -gt 0 ] && [ "$lived" -lt 50000 ] ||
	skip_part "names-test lived ${lived} us, not under 50 ms (loaded machine); names still checked"
python3 "$CHECK" "$TMP/short.jsonl" "$TMP/short-report.json" ||
	fail "short-lived: names"

# Nodes (issue 13, item 7): a process that lives 300 ms, gone long before
# the only frame (-d 2).  The pages it touched at its start were drained
# from the ring, and their nodes asked, while it lived (at least every
# 100 ms), so each has a node; on a one-node machine, node 0.  Asked
# even there (MEMTOP_ASK_NODES: memtop would otherwise put them on the
# one node without asking, man page "One node"): this is about the asking.
MEMTOP_ASK_NODES=1 \
"$MEMTOP" -b --json -e faults -d 2 -s total -k 500 -o "$TMP/nodes.jsonl" \
	-- "$MEMTOP_NAMES_TEST" --report "$TMP/nodes-report.json" \
	--file "$TMP/nodes-data.bin" --linger-ms 300 --no-stack ||
	fail "nodes: memtop exited $?"
python3 - "$TMP/nodes.jsonl" "$TMP/nodes-report.json" <<'PY' || fail "nodes of a short-lived process"
import glob, json, sys
frames = [json.loads(l) for l in open(sys.argv[1])]
report = json.load(open(sys.argv[2]))
final = frames[-1]
n_nodes = len(glob.glob("/sys/devices/system/node/node[0-9]*")) or 1
pages = {p["addr"]: p for p in final["pages"] if p["pid"] == report["pid"]}
if report["lived_us"] < 250000 or final["cumulative"]["lost"]:
    print("# SKIP nodes: the run was not as planned (lived "
          f"{report['lived_us']} us, lost {final['cumulative']['lost']})")
    sys.exit(0)
# "gone" is unmapped at once: no node to ask for (man page, mem_unknown).
bad = [w["what"] for w in report["pages"] if w["what"] != "gone" and (
       pages.get(w["addr"], {}).get("node") is None
       or (n_nodes == 1 and pages[w["addr"]]["node"] != 0))]
assert not bad, f"pages without their node: {bad}"
assert final["node_resolution"]["queried"] > 0, "no page node was asked"
print(f"ok: nodes: {len(report['pages']) - 1} pages touched at its start have their node")
PY
finish
