#!/usr/bin/env python3
"""What --heap-objects costs (issue 18), on a malloc-heavy program.

tests/objects/heap-test --bench N times N malloc(64) + free pairs; it runs
alone, under memtop without --heap-objects, with --heap-objects=1 (every
allocation recorded) and with --heap-objects (sampled above 5 %).  Printed
per run: the target's ns per pair and its extra ns per allocation over the
run alone, the allocations per second the target made, memtop's CPU (the
collector thread's, from the frames' collector_cpu_us, per second of the
run), the cost memtop measured at start and what its header said.
--quick: fewer pairs.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "bench_live", os.path.join(HERE, "bench-live.py"))
live = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(live)


def bench_line(text):
    for line in text.splitlines():
        w = line.split()
        if len(w) == 3 and w[0] == "bench":
            return int(w[1]), float(w[2])
    live.die(f"no bench line in: {text[-300:]}")


def run_one(memtop, target, pairs, heap, tmp):
    cmd = [target, "--bench", str(pairs)]
    if memtop is None:
        p = live.run(cmd)
        return bench_line(p.stdout), None
    out = os.path.join(tmp, "frames.jsonl")
    log = os.path.join(tmp, "log")
    args = [memtop, "-b", "--json", "-e", "faults", "-d", "0.5", "-k", "5",
            "-o", out, "--log", log]
    if heap is not None:
        args.append("--heap-objects" + (f"={heap}" if heap else ""))
    p = live.run(args + ["--"] + cmd)
    frames = live.load_frames(out)
    cal = [l.split("heap objects: ", 1)[1].strip() for l in open(log)
           if "heap objects: malloc + free" in l][-1:]
    os.unlink(log)
    return bench_line(p.stdout), (frames, cal)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--memtop", required=True)
    ap.add_argument("--target", required=True, help="tests/objects/heap-test")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--pairs", type=int, default=0)
    a = ap.parse_args()
    print("bench-heap:", live.machine())
    print("bench-heap:", live.build_of(a.memtop))
    pairs = a.pairs or (20000 if a.quick else 200000)
    with tempfile.TemporaryDirectory() as tmp:
        (_, alone), _ = run_one(None, a.target, pairs, None, tmp)
        print(f"alone: {pairs} malloc(64) + free pairs, {alone:.1f} ns each")
        for name, heap in (("memtop, no --heap-objects", None),
                           ("--heap-objects=1 (every allocation)", 1),
                           ("--heap-objects (automatic)", 0)):
            (_, ns), (frames, cal) = run_one(a.memtop, a.target, pairs,
                                             heap, tmp)
            secs = sum(f["interval"] for f in frames) or 1e-9
            cpu = sum(f["collector_cpu_us"] for f in frames) / 1e6
            rate = 1e9 / ns
            notes = [f["source_note"].split("heap objects: ", 1)[1]
                     for f in frames if "heap objects: " in f["source_note"]]
            print(f"{name}: {ns:.1f} ns a pair, +{ns - alone:.1f} ns an "
                  f"allocation; {rate:.0f} allocations/s; memtop "
                  + (f"{100 * cpu / secs:.1f} % CPU over {secs:.1f} s"
                     if secs > 0.2 else "CPU: the run ended before a frame"))
            if cal:
                print(f"  measured at start: {cal[0]}")
            if notes:
                busiest = max(notes, key=lambda n: float(
                    n.split(" allocations/s")[0] or 0)
                    if n.split(" allocations/s")[0].replace(".", "")
                    .isdigit() else 0)
                print(f"  header at the busiest frame: {busiest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
