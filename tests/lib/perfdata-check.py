#!/usr/bin/env python3
"""Compares memtop's replay/record frames with other views of a capture.

  perfdata-check.py addrs FRAMES ADDRS
      final frame's per-page totals (summed over pids) == the addresses
      of ADDRS (`perf script -F addr`, one hex address a line) counted per
      4 KiB page, page for page; address 0 lines == unattributed
  perfdata-check.py frames A B
      the final frames of A and B have the same per-page totals, per
      (pid, page), and the same cumulative samples
  perfdata-check.py truth FRAMES TRUTH NODES
      a synthetic capture (perfdata-tool gen --truth): NODES nodes, and
      per page the totals, loads, stores and memory node of TRUTH
  perfdata-check.py samples FRAMES
      prints the final frame's cumulative samples + unattributed (every
      SAMPLE record that was decoded)
Exit 1 with a message on the first difference.
"""
import collections
import json
import sys


def final(path):
    with open(path) as fh:
        frames = [json.loads(line) for line in fh]
    if not frames or not frames[-1]["final"]:
        sys.exit(f"{path}: no final frame")
    return frames[-1]


def page_totals(f, by_pid):
    tot = collections.Counter()
    for p in f["pages"]:
        key = (p["pid"], int(p["addr"], 16)) if by_pid else int(p["addr"], 16)
        tot[key] += p["total"]
    return tot


def diff(name_a, a, name_b, b):
    bad = [k for k in set(a) | set(b) if a.get(k, 0) != b.get(k, 0)]
    for k in sorted(bad, key=str)[:10]:
        print(f"page {k}: {name_a} {a.get(k, 0)}, {name_b} {b.get(k, 0)}")
    if bad:
        sys.exit(f"{len(bad)} of {len(set(a) | set(b))} pages differ")
    return len(a)


def cmd_addrs(frames, addrs):
    f = final(frames)
    seen = collections.Counter()
    zero = 0
    with open(addrs) as fh:
        for line in fh:
            if not line.strip():
                continue
            a = int(line.split()[0], 16)
            if a == 0:
                zero += 1
            else:
                seen[a >> 12 << 12] += 1
    if len(f["pages"]) >= f.get("top_k", 10**9) and len(f["pages"]) < len(seen):
        sys.exit("the frame lists fewer pages than the capture has")
    n = diff("memtop", page_totals(f, False), "perf script", seen)
    unattr = f["cumulative"]["unattributed"]
    if unattr != zero:
        sys.exit(f"unattributed {unattr}, perf shows {zero} samples at 0")
    print(f"ok: {n} pages, {sum(seen.values())} samples agree")


def cmd_frames(a, b):
    fa, fb = final(a), final(b)
    n = diff(a, page_totals(fa, True), b, page_totals(fb, True))
    ca, cb = fa["cumulative"]["samples"], fb["cumulative"]["samples"]
    if ca != cb:
        sys.exit(f"cumulative samples {ca} != {cb}")
    print(f"ok: {n} pages, {ca} samples agree")


def cmd_truth(frames, truth, nodes):
    f = final(frames)
    if len(f["nodes"]) != nodes:
        sys.exit(f"{len(f['nodes'])} nodes, want {nodes}")
    want = {}
    with open(truth) as fh:
        for line in fh:
            pid, addr, total, loads, stores, node = line.split()
            want[(int(pid), int(addr, 16))] = (int(total), int(loads),
                                                int(stores), int(node))
    got = {}
    for p in f["pages"]:
        node = -1 if p["node"] is None else p["node"]
        got[(p["pid"], int(p["addr"], 16))] = (p["total"], None, None, node)
    diff("memtop", {k: v[0] for k, v in got.items()}, "truth",
         {k: v[0] for k, v in want.items()})
    bad = [k for k in want if got[k][3] != want[k][3]]
    if bad:
        sys.exit(f"{len(bad)} pages on the wrong node, e.g. {bad[0]}: "
                 f"{got[bad[0]][3]} != {want[bad[0]][3]}")
    loads = sum(v[1] for v in want.values())
    stores = sum(v[2] for v in want.values())
    cum = f["cumulative"]
    if (cum["loads"], cum["stores"]) != (loads, stores):
        sys.exit(f"loads/stores {cum['loads']}/{cum['stores']}, "
                 f"want {loads}/{stores}")
    print(f"ok: {nodes} nodes, {len(want)} pages with their nodes, "
          f"{loads} loads, {stores} stores")


def main():
    args = sys.argv[1:]
    if args[:1] == ["addrs"] and len(args) == 3:
        cmd_addrs(args[1], args[2])
    elif args[:1] == ["frames"] and len(args) == 3:
        cmd_frames(args[1], args[2])
    elif args[:1] == ["truth"] and len(args) == 4:
        cmd_truth(args[1], args[2], int(args[3]))
    elif args[:1] == ["samples"] and len(args) == 2:
        c = final(args[1])["cumulative"]
        print(c["samples"] + c["unattributed"])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
