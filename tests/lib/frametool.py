#!/usr/bin/env python3
"""Reads memtop JSON Lines frames and checks them.

  frametool.py check FRAMES            every frame's sums (docs/design.md, "Frame invariants")
  frametool.py pages FRAMES            final frame: "addr total loads stores other" per page
  frametool.py get FRAMES EXPR         evaluates EXPR with `f` = final frame, `frames` = all
Exit 1 with a message on the first violation.
"""
import json
import sys


def load(path):
    frames = []
    with open(path) as fh:
        for n, line in enumerate(fh, 1):
            try:
                frames.append(json.loads(line))
            except ValueError as e:
                sys.exit(f"{path}:{n}: not JSON: {e}: {line[:200]!r}")
    if not frames:
        sys.exit(f"{path}: no frames")
    return frames


def check_processes(f):
    """The process rows' sums (docs/design.md, "Frame invariants"); None
    when they hold."""
    s = f["totals"]["samples"]
    procs = f["processes"]
    for p in procs:
        if p["samples"] != p["loads"] + p["stores"] + p["other"]:
            return f"process {p['pid']}: samples != loads+stores+other"
        if not 0.0 <= p["share"] <= 1.0:
            return f"process {p['pid']}: share {p['share']}"
        if len(p["nodes"]) != len(f["nodes"]):
            return f"process {p['pid']}: {len(p['nodes'])} node counts"
    got = sum(p["samples"] for p in procs) + f["processes_untracked"]
    if got != s:
        return f"sum(processes) + processes_untracked {got} != samples {s}"
    if f["processes_untracked"]:
        return None
    for j, n in enumerate(f["nodes"]):
        mem = sum(p["nodes"][j] for p in procs)
        if mem != n["mem_samples"]:
            return f"node {n['node']}: processes' {mem} != mem_samples {n['mem_samples']}"
    for k in ("local", "remote"):
        a, b = sum(p[k] for p in procs), sum(n[k] for n in f["nodes"])
        if a != b:
            return f"sum(processes.{k}) {a} != sum(nodes.{k}) {b}"
    return None


def check(frames):
    required = ["memtop", "seq", "time", "interval", "final", "source",
                "events", "period", "targets", "totals", "cumulative",
                "pages", "nodes", "cpus", "threads", "matrix"]
    for f in frames:
        where = f"frame {f.get('seq')}"
        for k in required:
            if k not in f:
                sys.exit(f"{where}: missing key {k}")
        keys = list(f.keys())
        order = [keys.index(k) for k in required]
        if order != sorted(order):
            sys.exit(f"{where}: keys out of spec order: {keys}")
        for part in ("totals", "cumulative"):
            t = f[part]
            if t["samples"] != t["loads"] + t["stores"] + t["other"]:
                sys.exit(f"{where}: {part}: samples != loads+stores+other: {t}")
        s = f["totals"]["samples"]
        cpus = sum(c["samples"] for c in f["cpus"]) + f.get("cpu_unknown", 0)
        if cpus != s:
            sys.exit(f"{where}: per-CPU sum {cpus} != samples {s}")
        threads = sum(t["samples"] for t in f["threads"])
        if threads != s:
            sys.exit(f"{where}: per-thread sum {threads} != samples {s}")
        mat = sum(sum(r) for r in f["matrix"]) + \
            sum(f.get("matrix_unknown", [])) + f.get("cpu_unknown", 0)
        if mat != s:
            sys.exit(f"{where}: matrix sum {mat} != samples {s}")
        mem = sum(n["mem_samples"] for n in f["nodes"]) + f.get("mem_unknown", 0)
        if mem != s:
            sys.exit(f"{where}: memory-side sum {mem} != samples {s}")
        err = check_processes(f)
        if err:
            sys.exit(f"{where}: {err}")
        for p in f["pages"]:
            if p["samples"] != p["loads"] + p["stores"] + p.get("other", 0):
                sys.exit(f"{where}: page {p['addr']}: samples != parts")
            if p["total"] < p["samples"]:
                sys.exit(f"{where}: page {p['addr']}: total < samples")
    seqs = [f["seq"] for f in frames]
    if seqs != list(range(seqs[0], seqs[0] + len(seqs))):
        sys.exit(f"seq not consecutive: {seqs}")
    if not frames[-1]["final"] or any(f["final"] for f in frames[:-1]):
        sys.exit("exactly the last frame must be final")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    frames = load(sys.argv[2])
    if sys.argv[1] == "check":
        check(frames)
        print(f"ok: {len(frames)} frames")
    elif sys.argv[1] == "pages":
        for p in frames[-1]["pages"]:
            print(p["addr"], p["total"], p["loads"], p["stores"], p.get("other", 0))
    elif sys.argv[1] == "get":
        print(eval(sys.argv[3], {"f": frames[-1], "frames": frames}))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
