#!/usr/bin/env python3
"""Checks memtop's names against what names-test reports.

  names-check.py FRAMES REPORT [--stripped-exe] [--lib-prefix PATH]

FRAMES: memtop -b --json output; REPORT: names-test --report.  Each page
the program touched must be in the final frame with the expected region
and symbol; code sites must name the touching functions; line heat must
add up to the page's samples.  --stripped-exe: the executable has no
symbol table, so its pages have no symbol and its function no name.
Exit 1 with every mismatch listed.
"""
import json
import sys

args = sys.argv[1:]
stripped = "--stripped-exe" in args
lib_prefix = None
if "--lib-prefix" in args:
    lib_prefix = args[args.index("--lib-prefix") + 1]
frames = [json.loads(l) for l in open(args[0])]
report = json.load(open(args[1]))
exe = report["exe"]
final = frames[-1]
errors = []


def err(msg):
    errors.append(msg)


if not final["final"]:
    err("last frame is not final")
pages = {}
for f in frames:
    for p in f["pages"]:
        if p["pid"] == report["pid"]:
            pages[p["addr"]] = p          # the latest frame's view wins
for w in report["pages"]:
    what, addr = w["what"], w["addr"]
    p = pages.get(addr)
    if p is None:
        err(f"{what}: page {addr} not in any frame")
        continue
    region, symbol = p["region"], p["symbol"]
    want_symbol = w["symbol"]
    if what.startswith("exe"):
        if stripped:
            want_symbol = None
        if not (region or "").startswith(exe):
            err(f"{what}: region {region!r} does not name {exe}")
        if what == "exe-data" and not (region or "").startswith(exe + "+0x"):
            err(f"{what}: region {region!r} is not {exe}+0xOFF")
    elif what == "lib-data":
        lib = lib_prefix or ""
        if not (region or "").startswith(lib) or "libnames-lib.so+0x" not in (region or ""):
            err(f"{what}: region {region!r} is not {lib}...libnames-lib.so+0xOFF")
    elif region != w["region"]:
        err(f"{what}: region {region!r}, expected {w['region']!r}")
    if symbol != want_symbol:
        err(f"{what}: symbol {symbol!r}, expected {want_symbol!r}")
    # Code sites: the page's faults came from names_touch (executable) or
    # names_lib_touch (library).
    sites = p.get("sites", [])
    if not sites:
        err(f"{what}: no code sites")
    else:
        fn = "names_lib_touch" if what == "lib-data" else "names_touch"
        s0 = sites[0]["symbol"]
        if what != "lib-data" and stripped:
            if s0 is not None:
                err(f"{what}: site {s0!r} in a stripped executable")
        elif not (s0 or "").startswith(fn + "+0x"):
            err(f"{what}: site {s0!r}, expected {fn}+0x...")
        got = sum(s["samples"] for s in sites) + p["sites_other"]
        if got != p["total"]:
            err(f"{what}: sites {got} != page total {p['total']}")
    if "lines" in p:
        if len(p["lines"]) != 64 or sum(p["lines"]) != p["total"]:
            err(f"{what}: lines {p['lines']} do not add up to {p['total']}")
        # names_touch writes the first byte of the page.
        if p["lines"][0] == 0:
            err(f"{what}: line 0 has no sample")
# The code view: names_touch of the executable (or its unnamed module).
code = [c for c in final["code_sites"] if c["pid"] == report["pid"]]
want_fn = None if stripped else "names_touch"
if not any(c["function"] == want_fn and c["module"] == exe for c in code):
    err(f"code_sites: no {want_fn!r} in {exe}: {code}")
lib_fn = [c for c in code if c["function"] == "names_lib_touch"]
if not lib_fn or not lib_fn[0]["module"].endswith("libnames-lib.so"):
    err(f"code_sites: no names_lib_touch in libnames-lib.so: {code}")
if final["granularity"] != 4096:
    err(f"granularity {final['granularity']}")
if not any("lines" in p for p in final["pages"]):
    err("no page carries line heat")
for e in errors:
    print("mismatch:", e)
if errors:
    sys.exit(1)
print(f"ok: {len(report['pages'])} pages named as expected"
      f"{' (stripped executable)' if stripped else ''}")
