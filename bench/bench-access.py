#!/usr/bin/env python3
"""Cost of the no-PMU access modes (issue 19), on this machine.

  bench-access.py [--quick] --memtop PATH --clusters PATH

  rearm   the target's slowdown under -e faults --rearm: rounds/s of
          tests/numa/access-clusters (a write set of --pages pages written
          in place, no pause) alone, under memtop -e faults without
          --rearm, and under --rearm -d 0.5; medians of 3 runs (1 with
          --quick), plus memtop's re-arm time per interval from the frames'
          notes.  Needs a kernel with soft-dirty.
  damon   memtop's CPU (collector_cpu_us) and its kdamond's (the note)
          per second under -e damon -d 1 on the same workload.  Needs
          DAMON's sysfs interface free (no other kdamond) and root.

A part that cannot run here prints why and is skipped; figures are
printed, not enforced.  A failed run exits 1.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile


def cpu_model():
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def rate(report):
    with open(report, encoding="utf-8") as f:
        for line in f:
            if line.startswith("RATE "):
                return float(line.split()[1])
    raise RuntimeError("no RATE line in " + report)


def run_workload(args, tmp, pages, secs, memtop_args=None):
    report = os.path.join(tmp, "ac.txt")
    work = [args.clusters, "--pages", str(pages), "--pause-us", "0",
            "--secs", str(secs), "--report", report]
    frames = []
    if memtop_args is None:
        subprocess.run(work, check=True)
    else:
        out = subprocess.run([args.memtop, "-b", "--json"] + memtop_args +
                             ["--"] + work, check=True,
                             stdout=subprocess.PIPE, text=True).stdout
        frames = [json.loads(ln) for ln in out.splitlines() if ln]
    return rate(report), frames


def list_events(args):
    return subprocess.run([args.memtop, "--list-events"],
                          stdout=subprocess.PIPE, text=True).stdout


def bench_rearm(args, tmp, runs, secs):
    status = [ln for ln in list_events(args).splitlines()
              if ln.startswith("soft-dirty")]
    if not status or " works" not in status[0]:
        print("rearm: skipped: %s" % (status[0] if status else
                                      "no soft-dirty line"))
        return
    pages = 4096
    res = {"alone": [], "faults": [], "rearm": []}
    cost = []
    for _ in range(runs):
        res["alone"].append(run_workload(args, tmp, pages, secs)[0])
        res["faults"].append(run_workload(args, tmp, pages, secs,
                                          ["-e", "faults", "-d", "0.5"])[0])
        r, frames = run_workload(args, tmp, pages, secs,
                                 ["-e", "faults", "--rearm", "-d", "0.5"])
        res["rearm"].append(r)
        for f in frames[1:-1]:
            m = re.search(r"re-arm cost (\d+) us", f.get("source_note", ""))
            if m:
                cost.append(int(m.group(1)))
    med = {k: statistics.median(v) for k, v in res.items()}
    print("rearm: %d-page write set, rounds/s alone %.0f, under -e faults "
          "%.0f, under --rearm -d 0.5 %.0f: slowdown x%.2f (x%.2f vs "
          "faults)" % (pages, med["alone"], med["faults"], med["rearm"],
                       med["alone"] / med["rearm"],
                       med["faults"] / med["rearm"]))
    if cost:
        print("rearm: memtop's re-arm time per interval: median %d us, max "
              "%d us" % (statistics.median(cost), max(cost)))


def bench_damon(args, tmp, secs):
    status = [ln for ln in list_events(args).splitlines()
              if ln.startswith("damon")]
    if not status or "works" not in status[0]:
        print("damon: skipped: %s" % (status[0] if status else "no line"))
        return
    _, frames = run_workload(args, tmp, 4096, secs, ["-e", "damon", "-d",
                                                     "1"])
    mid = frames[1:-1]
    if not mid:
        print("damon: no frames")
        return
    coll = sum(f["collector_cpu_us"] for f in mid) / 1e3
    wall = sum(f["interval"] for f in mid)
    kd = 0.0
    for f in mid:
        m = re.search(r"CPU ([0-9.]+) ms this interval",
                      f.get("source_note", ""))
        kd += float(m.group(1)) if m else 0.0
    print("damon: memtop collector %.2f ms/s, kdamond %.2f ms/s over %.1f s"
          % (coll / wall, kd / wall, wall))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--memtop", required=True)
    ap.add_argument("--clusters", required=True)
    args = ap.parse_args()
    print("cpu: %s" % cpu_model())
    runs, secs = (1, 3) if args.quick else (3, 6)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            bench_rearm(args, tmp, runs, secs)
            bench_damon(args, tmp, secs)
        except (subprocess.CalledProcessError, RuntimeError) as e:
            print("bench-access: %s" % e)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
