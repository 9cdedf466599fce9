#!/usr/bin/env python3
"""Compares `memtop --dry-run --json` output with a hand-written expected
file: same source, same events in the same order, and for each event
exactly the expected fields (sample_type compared as a set of flag names).
The output's `note` is free text and only has to be a string.

usage: dryrun-compare.py EXPECTED.json ACTUAL.json
Exit 0 when equal, 1 with one line per difference otherwise.
"""
import json
import sys

FIELDS = ("name", "pmu", "type", "config", "config1", "config2",
          "precise_ip", "sample_type", "sample_period", "exclude_kernel",
          "leader", "role")


def main():
    with open(sys.argv[1]) as f:
        want = json.load(f)
    with open(sys.argv[2]) as f:
        text = f.read()
    lines = text.splitlines()
    if len(lines) != 1:
        print(f"expected one JSON line, got {len(lines)}")
        return 1
    got = json.loads(lines[0])
    diffs = []
    if got.get("source") != want["source"]:
        diffs.append(f"source: {got.get('source')!r} != {want['source']!r}")
    if not isinstance(got.get("note"), str):
        diffs.append("note: missing or not a string")
    gev, wev = got.get("events", []), want["events"]
    if len(gev) != len(wev):
        diffs.append(f"{len(gev)} events, expected {len(wev)}: "
                     f"{[e.get('name') for e in gev]}")
    for i, (g, w) in enumerate(zip(gev, wev)):
        if set(g) != set(FIELDS):
            diffs.append(f"event {i}: fields {sorted(g)}")
        for k in FIELDS:
            gv, wv = g.get(k), w.get(k)
            if k == "sample_type":
                same = isinstance(gv, list) and len(gv) == len(set(gv)) \
                    and set(gv) == set(wv)
            else:
                # bool is an int in Python: compare types too.
                same = gv == wv and type(gv) is type(wv)
            if not same:
                diffs.append(f"event {i} ({w['name']}): {k} = {gv!r}, "
                             f"expected {wv!r}")
    for d in diffs:
        print(d)
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
