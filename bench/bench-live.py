#!/usr/bin/env python3
"""Live figures of memtop on this machine, with the faults source.

  bench-live.py [--quick] [--cpu-only] --memtop PATH --workload PATH

  collector CPU  memtop -b --json -e faults -c 1 on memtop-workload refault
                 mode (--interval-ms 0, one thread): the frames'
                 collector_cpu_us against their samples, for the
                 tracepoint variant (root) and the software event; then
                 the tracepoint again at about 100 K samples/s (192 pages
                 a round, --interval-ms 1).
  latency        the same runs with MEMTOP_DEBUG_LATENCY: every sample's
                 age when its frame was published (collector/live/lathist.h).
  losses         memtop launches the workload for a fixed number of faults
                 at full speed (1 and 2 threads; one inherited ring per CPU): lost
                 with the default ring, and with MEMTOP_RING_PAGES=2, where
                 samples + lost must still account for every fault.
  overhead       the workload's touches/s alone, under memtop (default
                 period) and under perf record of the same event, five runs
                 each, alternating; medians.

--cpu-only stops after the collector CPU runs, for A/B runs of two
binaries alternated.  --hot 64,1024,16384,262144 runs only the collector
CPU, tracepoint and software event, at each of those hot-page counts
(the region twice as large, at least 4096 pages): issue 15's working
sets.

--quick (meson test --benchmark) runs each part once, small; targets are
printed, not enforced.  A failed run or a loss count that does not add up
exits 1; no permission to sample exits 77.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HOT = 64
PAGES = 4096


def die(msg):
    print(f"bench-live: {msg}", file=sys.stderr)
    sys.exit(1)


def machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    u = os.uname()
    return (f"machine: {u.machine}, {model}, {os.cpu_count()} CPUs online, "
            f"kernel {u.release}")


def build_of(exe):
    """The meson build type of the build directory exe lies in."""
    d = os.path.dirname(os.path.abspath(exe))
    while d != "/":
        info = os.path.join(d, "meson-info", "intro-buildoptions.json")
        if os.path.exists(info):
            try:
                with open(info) as f:
                    opts = {o["name"]: o["value"] for o in json.load(f)}
            except (OSError, ValueError, KeyError):
                break
            san = opts.get("b_sanitize", "none")
            return (f"build: {opts.get('buildtype', '?')} "
                    f"(-O{opts.get('optimization', '?')}"
                    f"{'' if san == 'none' else ', sanitize=' + san}), "
                    f"{d}")
        d = os.path.dirname(d)
    return "build: unknown (not in a meson build directory)"


def load_frames(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def workload_args(wl, report, rounds=0, duration=0, extra=(), hot=HOT,
                  interval_ms=0):
    # Hot page j is region page j * (pages / hot): at least 2 apart.
    pages = max(PAGES, 2 * hot)
    args = [wl, "--mode", "refault", "--interval-ms", str(interval_ms),
            "--hot", str(hot), "--pages", str(pages), "--rounds", str(rounds),
            "--duration", str(duration), "--report", report, "--quiet"]
    return args + list(extra)


def run(cmd, env=None, timeout=600):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=timeout)
    if p.returncode != 0:
        die(f"{' '.join(cmd[:3])}... exited {p.returncode}: "
            f"{p.stderr.strip()[-400:]}")
    return p


def thread_rates(proc, secs, settle, out):
    """Wakeups/s (voluntary context switches: each is a sleep in
    epoll_wait ended by a wakeup) and syscalls/s (perf stat of
    raw_syscalls:sys_enter, when perf may) of memtop's collector thread
    (named memtop-collect), over secs seconds settle seconds into the
    run."""
    tid = None
    deadline = time.monotonic() + 5
    while tid is None and time.monotonic() < deadline:
        time.sleep(0.05)
        try:
            for t in os.listdir(f"/proc/{proc.pid}/task"):
                with open(f"/proc/{proc.pid}/task/{t}/comm") as f:
                    if f.read().strip() == "memtop-collect":
                        tid = int(t)
        except OSError:
            return
    if tid is None:
        return
    time.sleep(settle)

    def switches():
        with open(f"/proc/{proc.pid}/task/{tid}/status") as f:
            for line in f:
                if line.startswith("voluntary_ctxt_switches"):
                    return int(line.split()[1])
        return 0
    try:
        v0, t0 = switches(), time.monotonic()
        perf = shutil.which("perf")
        syscalls = None
        if perf:
            p = subprocess.run([perf, "stat", "-x,", "-e",
                                "raw_syscalls:sys_enter", "-t", str(tid),
                                "--", "sleep", str(secs)],
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
            for line in p.stderr.splitlines():
                w = line.split(",")
                if len(w) > 2 and "sys_enter" in w[2] and w[0].isdigit():
                    syscalls = int(w[0])
        else:
            time.sleep(secs)
        v1, t1 = switches(), time.monotonic()
    except OSError:
        return
    out["wakeups"] = (v1 - v0) / (t1 - t0)
    if syscalls is not None:
        out["syscalls"] = syscalls / (t1 - t0)


def env_with(**kw):
    env = dict(os.environ)
    env.update(kw)
    return env


def percentile(hist, q):
    """hist: sorted [(latency_ms, count)]; smallest L with >= q of samples."""
    total = sum(c for _, c in hist)
    want = q * total
    seen = 0
    for lat, c in hist:
        seen += c
        if seen >= want:
            return lat
    return hist[-1][0] if hist else 0


def collector_cpu(a, tmp, variant, env_extra, hot=HOT, interval_ms=0):
    frames_path = os.path.join(tmp, f"cpu-{variant}.jsonl")
    lat_path = os.path.join(tmp, f"lat-{variant}.txt")
    report = os.path.join(tmp, f"cpu-{variant}-report.json")
    env = env_with(MEMTOP_DEBUG_LATENCY=lat_path, **env_extra)
    cmd = ([a.memtop, "-b", "--json", "-e", "faults", "-c", "1",
            "-d", str(a.delay), "-o", frames_path, "--"] +
           workload_args(a.workload, report, duration=a.duration, hot=hot,
                         interval_ms=interval_ms))
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    rates = {}
    # --quick runs last 2 s: measure 1 s of them.
    settle = 1 if a.duration > 4 else 0.3
    probe = threading.Thread(target=thread_rates,
                             args=(proc, max(1, a.duration - 3), settle,
                                   rates))
    probe.start()
    _, err = proc.communicate(timeout=600)
    probe.join()
    if proc.returncode != 0:
        die(f"{' '.join(cmd[:3])}... exited {proc.returncode}: "
            f"{err.strip()[-400:]}")
    frames = load_frames(frames_path)
    # The first frame holds the start-up, the final one a partial interval.
    mid = [f for f in frames[1:] if not f["final"]] or frames
    samples = sum(f["totals"]["samples"] for f in mid)
    cpu_us = sum(f["collector_cpu_us"] for f in mid)
    secs = sum(f["interval"] for f in mid)
    if samples == 0:
        die(f"{variant}: no samples in {len(frames)} frames")
    print(f"  {variant:10s} events {','.join(frames[-1]['events'])}: "
          f"{samples / secs / 1e3:6.1f} K samples/s, collector "
          f"{cpu_us * 1e3 / samples:5.1f} ns/sample, "
          f"{cpu_us / (secs * 1e6) * 100:5.2f} % of a core "
          f"({len(mid)} frames)  target <= 50 ns, <= 1 % at 100 K/s")
    print(f"  {variant:10s} collector thread: "
          + (f"{rates['wakeups']:.0f} wakeups/s" if "wakeups" in rates
             else "wakeups not measured")
          + (f", {rates['syscalls']:.0f} syscalls/s" if "syscalls" in rates
             else ", syscalls not measured (perf stat missing or refused)"))
    hist = {}
    for line in open(lat_path):
        w = line.split()
        for pair in w[w.index("lat_ms") + 1:]:
            lat, c = pair.split(":")
            hist[int(lat)] = hist.get(int(lat), 0) + int(c)
    h = sorted(hist.items())
    target = a.delay * 1000 + 150
    print(f"  {variant:10s} latency sample -> frame: p50 "
          f"{percentile(h, 0.5)} ms, p99 {percentile(h, 0.99)} ms, max "
          f"{h[-1][0] if h else 0} ms over {sum(c for _, c in h)} samples"
          f"  target p99 <= {target:.0f} ms (interval + 150)")


def losses(a, tmp, name, env_extra, threads):
    """memtop launches a fixed number of faults at full speed (inherited
    channels: every thread sampled from its first instruction)."""
    frames_path = os.path.join(tmp, f"loss-{name}.jsonl")
    report = os.path.join(tmp, f"loss-{name}-report.json")
    run([a.memtop, "-b", "--json", "-e", "faults", "-c", "1", "-d", "0.25",
         "-o", frames_path, "--"] +
        workload_args(a.workload, report, rounds=a.loss_rounds,
                      extra=["--threads", str(threads)]),
        env=env_with(**env_extra))
    frames = load_frames(frames_path)
    rep = json.load(open(report))
    cum = frames[-1]["cumulative"]
    seen = (cum["samples"] + cum["lost"] + cum["unattributed"] +
            cum["untracked"])
    return {"faults": rep["faults"], "rate": rep["faults"] / rep["run_s"] /
            threads, "cum": cum, "extra": seen - rep["faults"],
            "lossy": [f["seq"] for f in frames if f["totals"]["lost"]]}


def loss_checks(a, tmp):
    ok = True
    for threads in a.loss_threads:
        d = losses(a, tmp, f"default-{threads}", {}, threads)
        t = losses(a, tmp, f"tiny-{threads}", {"MEMTOP_RING_PAGES": "2"},
                   threads)
        print(f"  {threads} thread(s), default ring: "
              f"{d['rate'] / 1e3:6.1f} K faults/s per thread, "
              f"{d['faults']} faults, lost {d['cum']['lost']} (frames "
              f"{d['lossy']}), samples {d['cum']['samples']} (+{d['extra']}"
              f" faults off the hot pages)  target lost = 0 at 250 K/s per"
              f" thread")
        print(f"  {threads} thread(s), 2-page ring:  "
              f"{t['rate'] / 1e3:6.1f} K faults/s per thread, "
              f"lost {t['cum']['lost']}, samples {t['cum']['samples']}, "
              f"samples + lost - faults = {t['extra']} (default ring: "
              f"{d['extra']})")
        # Faults off the hot pages (exec, the loader, thread stacks, the
        # report) are the same few in both runs: every lost sample must be
        # counted, so samples + lost - faults must agree.
        if t["cum"]["lost"] == 0:
            print("  note: the 2-page ring lost nothing; the count check "
                  "proves nothing this time")
        if t["extra"] < 0 or abs(t["extra"] - d["extra"]) > 16:
            print(f"bench-live: losses do not add up: 2-page ring "
                  f"{t['extra']}, default {d['extra']}", file=sys.stderr)
            ok = False
    return ok


def overhead(a, tmp, event):
    report = os.path.join(tmp, "ovh-report.json")
    rates = {"alone": [], "memtop": [], "perf record": []}
    perf = shutil.which("perf")
    for _ in range(a.reps):
        wl = workload_args(a.workload, report, rounds=a.ovh_rounds)
        run(wl)
        rates["alone"].append(json.load(open(report))["touches_per_s"])
        run([a.memtop, "-b", "--json", "-o", os.devnull, "--"] + wl)
        rates["memtop"].append(json.load(open(report))["touches_per_s"])
        if perf:
            p = subprocess.run([perf, "record", "-q", "-e", event, "-c",
                                "1", "-o", os.path.join(tmp, "perf.data"),
                                "--"] + wl, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
            if p.returncode == 0:
                rates["perf record"].append(
                    json.load(open(report))["touches_per_s"])
    alone = statistics.median(rates["alone"])
    for k, v in rates.items():
        if not v:
            print(f"  {k:11s}: not run (perf missing or refused)")
            continue
        m = statistics.median(v)
        extra = (1 / m - 1 / alone) * 1e6
        print(f"  {k:11s}: {m / 1e3:7.1f} K touches/s median of {len(v)}"
              f" ({', '.join(f'{x / 1e3:.0f}' for x in v)}), "
              + ("" if k == "alone" else
                 f"{(1 - m / alone) * 100:5.1f} % slower, "
                 f"+{extra:.2f} us a touch (= a sample)"))


def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--memtop", required=True)
    ap.add_argument("--workload", required=True)
    ap.add_argument("--cpu-only", action="store_true",
                    help="only the collector CPU runs (for A/B runs)")
    ap.add_argument("--hot", default="",
                    help="comma list of hot-page counts: the collector CPU "
                         "runs (tracepoint and software event) at each, "
                         "instead of the default 64 (issue 15: 64,1024,"
                         "16384,262144)")
    a = ap.parse_args()
    paranoid = int(open("/proc/sys/kernel/perf_event_paranoid").read())
    if os.geteuid() != 0 and paranoid > 2:
        print(f"SKIP: perf_event_paranoid={paranoid}")
        sys.exit(77)
    if a.quick:
        a.delay, a.duration, a.loss_rounds, a.loss_threads = 0.5, 2, 1000, [1]
        a.ovh_rounds, a.reps = 500, 1
    else:
        a.delay, a.duration, a.loss_rounds, a.loss_threads = 1, 11, 40000, [1, 2]
        a.ovh_rounds, a.reps = 20000, 5
    print("memtop live benchmark" + (" (--quick: short runs; targets apply "
                                     "to the full run)" if a.quick else ""))
    print(machine())
    print(build_of(a.memtop))
    print(f"workload: memtop-workload --mode refault --interval-ms 0 "
          f"--hot {a.hot or HOT} --pages {PAGES} (or twice the hot pages)")
    with tempfile.TemporaryDirectory(prefix="memtop-bench-live.") as tmp:
        print(f"\n== collector CPU and latency (-e faults -c 1 -d "
              f"{a.delay}) ==")
        if a.hot:
            for h in (int(x) for x in a.hot.split(",")):
                collector_cpu(a, tmp, f"tp-{h}", {}, hot=h)
                collector_cpu(a, tmp, f"sw-{h}",
                              {"MEMTOP_FAULTS_NO_TRACEPOINT": "1"}, hot=h)
            sys.exit(0)
        collector_cpu(a, tmp, "tracepoint", {})
        collector_cpu(a, tmp, "software", {"MEMTOP_FAULTS_NO_TRACEPOINT": "1"})
        # About 100 K faults/s: 192 pages a round, 1 ms apart.
        collector_cpu(a, tmp, "tp-100k", {}, hot=192, interval_ms=1)
        if a.cpu_only:
            sys.exit(0)
        event = load_frames(os.path.join(tmp, "cpu-tracepoint.jsonl"))[-1]
        event = event["events"][0]
        print(f"\n== losses ({a.loss_rounds} rounds x {HOT} faults) ==")
        ok = loss_checks(a, tmp)
        print(f"\n== overhead on the workload ({a.ovh_rounds} rounds x {HOT}"
              f" touches; memtop default period, perf record -e {event} "
              f"-c 1) ==")
        overhead(a, tmp, event)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
