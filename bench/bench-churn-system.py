#!/usr/bin/env python3
"""Short-lived processes under -a (issue 12, "Scale"): memtop -a watches the
whole machine for --seconds (30; --quick 6) while tests/chaos/churn forks a
child (which faults a few pages in a thread of its own, then exits) every
wave, as fast as this machine lets it (the issue's shape: 2 000 a second,
a `make -j`).  Every 0.5 s memtop's descriptors (/proc/PID/fd) and VmRSS
are read.  The same churn runs alone first, for a third of the time: the
rate this machine reaches without memtop.  Printed: both rates, descriptors (first, min,
max, last: flat means max - min small and last == first), RSS (first
after 2 s, max, last), frames written and whether every frame's sums hold
(tests/lib/frametool.py check), and the CPU model.

Exit status 1 when a frame's sums break or descriptors grow by more than
16; the rest is a figure.  Needs root (or CAP_PERFMON)."""
import json
import os
import subprocess
import sys
import tempfile
import time

args = sys.argv[1:]


def opt(name, default):
    return args[args.index(name) + 1] if name in args else default


quick = "--quick" in args
seconds = float(opt("--seconds", "6" if quick else "30"))
memtop = opt("--memtop", "build-dev/ui/memtop")
churn = opt("--churn", "build-dev/tests/chaos/churn")
frametool = opt("--frametool", os.path.join(os.path.dirname(__file__), "..",
                                            "tests", "lib", "frametool.py"))


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def fds(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


print(f"bench-churn-system: {cpu_model()}, {os.cpu_count()} CPUs, "
      f"{seconds:.0f} s")
if os.geteuid() != 0:
    print("SKIP: needs root for memtop -a")
    sys.exit(77)
tmp = tempfile.mkdtemp(prefix="memtop-churn-")
alone = os.path.join(tmp, "alone.json")
subprocess.run([churn, "--duration", str(max(2.0, seconds / 3)), "--batch",
                "1", "--fork-every", "1", "--pages", "2", "--report", alone],
               check=True)
with open(alone) as f:
    rep = json.load(f)
rate_alone = rep["forks"] / rep["seconds"] if rep["seconds"] else 0
frames = os.path.join(tmp, "frames.jsonl")
report = os.path.join(tmp, "churn.json")
env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
# Ended by SIGTERM after the churn, as a user's Ctrl-C: a final frame.
m = subprocess.Popen([memtop, "-a", "-b", "--json", "-d", "1", "-e", "faults",
                      "-k", "50", "-o", frames, "--log",
                      os.path.join(tmp, "memtop.log")], env=env)
time.sleep(1.0)
c = subprocess.Popen([churn, "--duration", str(seconds), "--batch", "1",
                      "--fork-every", "1", "--pages", "2", "--report",
                      report])
series = []
t0 = time.monotonic()
while c.poll() is None:
    series.append((time.monotonic() - t0, fds(m.pid), rss_kb(m.pid)))
    time.sleep(0.5)
time.sleep(1.0)
series.append((time.monotonic() - t0, fds(m.pid), rss_kb(m.pid)))
m.terminate()
try:
    m.wait(timeout=30)
except subprocess.TimeoutExpired:
    m.kill()
    m.wait()
    print("  memtop did not end 30 s after SIGTERM")
print(f"  memtop exit  {m.returncode}")
with open(report) as f:
    rep = json.load(f)
fd_vals = [s[1] for s in series if s[1] is not None]
rss_vals = [s[2] for s in series if s[2] is not None and s[0] >= 2.0]
rate = rep["forks"] / rep["seconds"] if rep["seconds"] else 0
check = subprocess.run([sys.executable, frametool, "check", frames],
                       capture_output=True, text=True)
n_frames = sum(1 for _ in open(frames))
print(f"  churn        {rep['forks']} processes in {rep['seconds']:.1f} s: "
      f"{rate:.0f} a second under memtop -a, {rate_alone:.0f} a second "
      f"alone (the issue's shape: 2000), {rep['threads']} threads")
print(f"  descriptors  first {fd_vals[0]}, min {min(fd_vals)}, "
      f"max {max(fd_vals)}, last {fd_vals[-1]}")
if rss_vals:
    print(f"  RSS          first {rss_vals[0] / 1024:.1f} MiB (after 2 s), "
          f"max {max(rss_vals) / 1024:.1f} MiB, last "
          f"{rss_vals[-1] / 1024:.1f} MiB")
print(f"  frames       {n_frames}, sums "
      f"{'hold' if check.returncode == 0 else 'BROKEN'}")
if check.returncode != 0:
    print(check.stdout[-2000:], check.stderr[-2000:])
bad = check.returncode != 0 or max(fd_vals) - min(fd_vals) > 16
sys.exit(1 if bad else 0)
