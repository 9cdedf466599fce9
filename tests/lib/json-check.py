#!/usr/bin/env python3
"""Checks memtop JSON Lines output for shell tests.

Usage: json-check.py [--frames N] [--final] [FILE]   (stdin without FILE)

Every line must be one strict-UTF-8 JSON object with the keys man/memtop.1
(JSON FIELDS) lists first, in that order, and every frame must satisfy the
sums frame.h promises.  --frames N requires exactly N lines; --final requires the last
frame to be final.  No frame but the last may be final.  Exit 0 when all
holds, else 1 with one line per problem on stderr.
"""
import json
import sys

SPEC_KEYS = ["memtop", "seq", "time", "interval", "final", "source",
             "events", "period", "targets", "totals", "cumulative",
             "pages", "nodes", "cpus", "threads", "matrix"]


def check_frame(n, o, problems):
    def fail(msg):
        problems.append("line %d: %s" % (n, msg))

    keys = list(o)
    if keys[:len(SPEC_KEYS)] != SPEC_KEYS:
        fail("key order %s" % keys[:len(SPEC_KEYS)])
        return
    t = o["totals"]
    if t["samples"] != t["loads"] + t["stores"] + t["other"]:
        fail("totals.samples != loads + stores + other")
    if sum(c["samples"] for c in o["cpus"]) + o.get("cpu_unknown", 0) \
            != t["samples"]:
        fail("sum(cpus) + cpu_unknown != totals.samples")
    if sum(th["samples"] for th in o["threads"]) != t["samples"]:
        fail("sum(threads) != totals.samples")
    nn = len(o["nodes"])
    if len(o["matrix"]) != nn or any(len(r) != nn for r in o["matrix"]):
        fail("matrix is not %d x %d" % (nn, nn))
    msum = sum(map(sum, o["matrix"])) + sum(o.get("matrix_unknown", [])) \
        + o.get("cpu_unknown", 0)
    if msum != t["samples"]:
        fail("matrix sum %d != totals.samples %d" % (msum, t["samples"]))
    mem = sum(x["mem_samples"] for x in o["nodes"]) + o.get("mem_unknown", 0)
    if mem != t["samples"]:
        fail("sum(nodes.mem_samples) + mem_unknown != totals.samples")
    procs = o.get("processes")
    if procs is None:
        fail("no processes")
        procs = []
    if sum(p["samples"] for p in procs) + o.get("processes_untracked", 0) \
            != t["samples"]:
        fail("sum(processes) + processes_untracked != totals.samples")
    for p in procs:
        if p["samples"] != p["loads"] + p["stores"] + p["other"]:
            fail("process %d: samples != loads + stores + other" % p["pid"])
    if not o.get("processes_untracked", 0):
        for j, x in enumerate(o["nodes"]):
            if sum(p["nodes"][j] for p in procs) != x["mem_samples"]:
                fail("node %s: sum(processes.nodes) != mem_samples" % x["node"])
        for k in ("local", "remote"):
            if sum(p[k] for p in procs) != sum(x[k] for x in o["nodes"]):
                fail("sum(processes.%s) != sum(nodes.%s)" % (k, k))
    for p in o["pages"]:
        if not p["addr"].startswith("0x"):
            fail("page addr %r" % p["addr"])
        if not 0.0 <= p["share"] <= 1.0:
            fail("page share %r" % p["share"])


def main(argv):
    frames = None
    want_final = False
    path = None
    args = iter(argv[1:])
    for a in args:
        if a == "--frames":
            frames = int(next(args))
        elif a == "--final":
            want_final = True
        else:
            path = a
    data = open(path, "rb").read() if path else sys.stdin.buffer.read()
    problems = []
    objs = []
    if data and not data.endswith(b"\n"):
        problems.append("output does not end with a newline")
    for n, line in enumerate(data.splitlines(), 1):
        try:
            o = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            problems.append("line %d: not JSON: %s" % (n, e))
            continue
        if not isinstance(o, dict):
            problems.append("line %d: not an object" % n)
            continue
        objs.append(o)
        check_frame(n, o, problems)
    if frames is not None and len(objs) != frames:
        problems.append("%d frames, expected %d" % (len(objs), frames))
    for i, o in enumerate(objs[:-1]):
        if o.get("final"):
            problems.append("line %d: final frame before the last" % (i + 1))
    if want_final and not (objs and objs[-1].get("final")):
        problems.append("last frame is not final")
    for p in problems:
        print("json-check: " + p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
