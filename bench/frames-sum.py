#!/usr/bin/env python3
"""frames-sum.py FRAMES [REPORT]: a memtop -a run's frames in one line.

The frames after the first and before the last: samples/s, lost,
throttled, the collector's CPU a sample and share of a core, the CPUs
with samples; then the run's cumulative counts beside the workload's own
fault count (memtop-workload --report) and the workload's process row.
"""
import json
import sys

frames = [json.loads(line) for line in open(sys.argv[1])]
report = json.load(open(sys.argv[2])) if len(sys.argv) > 2 else {}
mid = [f for f in frames if not f.get("final")][1:]
if not mid:
    sys.exit("frames-sum: fewer than two frames")
secs = sum(f["interval"] for f in mid)
samples = sum(f["totals"]["samples"] for f in mid)
lost = sum(f["totals"]["lost"] for f in mid)
throttled = sum(f["totals"]["throttled"] for f in mid)
cpu_us = sum(f["collector_cpu_us"] for f in mid)
cpus = max(sum(1 for c in f["cpus"] if c["samples"]) for f in mid)
print(f"  {len(mid)} frames over {secs:.1f} s: {samples / secs / 1e3:.0f} K "
      f"samples/s, lost {lost}, throttled {throttled}, collector "
      f"{cpu_us / secs / 1e4:.1f} % of a core, "
      f"{cpu_us * 1e3 / max(samples, 1):.0f} ns a sample, CPUs with samples "
      f"{cpus} of {len(mid[0]['cpus'])}")
cum = frames[-1]["cumulative"]
print(f"  cumulative: samples {cum['samples']}, lost {cum['lost']}, "
      f"throttled {cum['throttled']}, unattributed {cum['unattributed']}; "
      f"workload pid {report.get('pid')}: {report.get('faults')} faults in "
      f"{report.get('run_s')} s")
for p in frames[-1].get("processes", []):
    if report.get("pid") and p.get("pid") == report["pid"]:
        print(f"  workload row: samples {p['samples']}, local {p['local']}, "
              f"remote {p['remote']}")
