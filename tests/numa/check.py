#!/usr/bin/env python3
"""Checks one scenario's output from the two-node test guest.

  check.py SCENARIO FILE

FILE holds what the guest printed for SCENARIO (tests/numa/scenarios.sh):
JSON frames, one per line, for the memtop scenarios; text for `topology`.
Node 0 = CPU 0, node 1 = CPU 1.  Prints the measured figures; exits 1 with
the reason on the first failed assertion.
"""
import json
import os
import subprocess
import sys

HOT = 32            # hot pages of every workload scenario
ROUNDS = 100        # refault rounds of `remote` and `local`
PAIR_ROUNDS = 400   # of each workload of `crossed` and `uncrossed`


def frames_of(path):
    frames = []
    for line in open(path, errors="replace"):
        if line.startswith("{"):
            frames.append(json.loads(line))
    assert frames, "no JSON frames in the guest output"
    return frames


def frame_invariants(path):
    """tests/lib/frametool.py check over the frames alone."""
    tool = os.path.join(os.path.dirname(__file__), "..", "lib", "frametool.py")
    only = path + ".jsonl"
    with open(only, "w") as fh:
        for line in open(path, errors="replace"):
            if line.startswith("{"):
                fh.write(line)
    subprocess.run([sys.executable, tool, "check", only], check=True)


def node_row(frame, node):
    for n in frame["nodes"]:
        if n["node"] == node:
            return n
    raise AssertionError(f"frame {frame['seq']}: no node {node}")


def steady(frames):
    """Frames of the workload's steady phase: not the first (start-up
    faults of the loader and libc) and not the final one (exit)."""
    return [f for f in frames[1:] if not f["final"]]


def local_share(frames):
    local = sum(n["local"] for f in frames for n in f["nodes"])
    known = sum(sum(map(sum, f["matrix"])) for f in frames)
    return local / known if known else None, known


def check_imbalance(frames):
    for f in frames:
        mem = [n["mem_samples"] for n in f["nodes"]]
        total = sum(mem)
        assert "imbalance" in f, "frame has no imbalance"
        if total == 0:
            assert f["imbalance"] is None, f["imbalance"]
            continue
        want = max(mem) / total * len(mem)
        assert abs(f["imbalance"] - want) < 0.002, (f["imbalance"], want)


def check_placement(path, cpu_node, mem_node):
    frame_invariants(path)
    frames = frames_of(path)
    final = frames[-1]
    assert final["final"] and final.get("exit_status") == 0, \
        f"final frame: {final.get('final')}, exit {final.get('exit_status')}"
    assert len(final["nodes"]) == 2, f"nodes: {final['nodes']}"
    mem = sum(node_row(f, mem_node)["mem_samples"] for f in frames)
    cpu = sum(node_row(f, cpu_node)["cpu_samples"] for f in frames)
    cell = sum(f["matrix"][cpu_node][mem_node] for f in frames)
    unknown = sum(f["matrix_unknown"][cpu_node] for f in frames)
    faults = HOT * ROUNDS
    # A page asked about in the instant between its drop and its refault
    # has no node then: its samples stay unknown (never guessed) until the
    # next interval's query.  Rare; bounded here at 5 %.
    assert cell + unknown >= faults and cell >= faults * 0.95, \
        f"matrix[{cpu_node}][{mem_node}] = {cell}, unknown {unknown}, " \
        f"for {faults} hot-page faults"
    assert mem >= faults * 0.95 and cpu >= faults, \
        f"memory side node {mem_node}: {mem}, CPU side node {cpu_node}: {cpu}"
    st = steady(frames)
    assert st, "no steady-state frame (workload too short?)"
    share, known = local_share(st)
    assert known >= faults // 2, f"only {known} samples in steady frames"
    # Hot pages: the pages listed on mem_node, each remote or local as
    # placed, in every steady frame.
    for f in st:
        hot = [p for p in f["pages"] if p["node"] == mem_node]
        assert len(hot) >= HOT, f"frame {f['seq']}: {len(hot)} pages on " \
            f"node {mem_node}: {f['pages'][:3]}"
    check_imbalance(frames)
    every, _ = local_share(frames)
    print(f"ok: matrix[{cpu_node}][{mem_node}] = {cell} samples "
          f"({faults} hot-page faults, {unknown} samples of unknown node); "
          f"memory side node {mem_node}: {mem}, "
          f"CPU side node {cpu_node}: {cpu}; local {100 * share:.1f} % in "
          f"steady frames ({known} samples), {100 * every:.1f} % overall; "
          f"imbalance {st[-1]['imbalance']}")
    return share



def check_pair(path, want_local):
    """-a with two workloads (scenario crossed or uncrossed): each one's
    process row, summed over every frame, holds its hot-page faults and
    is remote-heavy (crossed) or local (uncrossed)."""
    frame_invariants(path)
    frames = frames_of(path)
    wpids = {}
    for line in open(path, errors="replace"):
        if line.startswith("WPID "):
            _, name, pid = line.split()
            wpids[name] = int(pid)
    assert set(wpids) == {"A", "B"}, f"WPID lines: {wpids}"
    assert frames[-1]["final"], "no final frame"
    lost = frames[-1]["cumulative"]["lost"]
    print(f"frames {len(frames)} at {[round(f['time'], 1) for f in frames]}, "
          f"lost {lost}, samples {frames[-1]['cumulative']['samples']}")
    for name, pid in sorted(wpids.items()):
        rows = [p for f in frames for p in f["processes"] if p["pid"] == pid]
        assert rows, f"{name} (pid {pid}): no process row"
        local = sum(p["local"] for p in rows)
        remote = sum(p["remote"] for p in rows)
        samples = sum(p["samples"] for p in rows)
        faults = HOT * PAIR_ROUNDS
        # Under TCG a whole machine's frames come seconds apart and not
        # every fault of a process started after memtop is in its row
        # (70 % seen); the placement is what this checks.
        assert local + remote >= faults // 2, \
            f"{name}: {samples} samples, {local} local + {remote} remote " \
            f"for {faults} hot-page faults"
        share = local / (local + remote)
        # 0.2 % and 99.8 % in a plain build; a sanitizer build's
        # workload also faults its own shadow memory, which the binding
        # does not cover: "remote-heavy" and "local" still hold at 10 %.
        if want_local:
            assert share >= 0.90, f"{name}: local share {share:.3f}"
        else:
            assert share <= 0.10, f"{name}: local share {share:.3f}"
        print(f"ok: {name} (pid {pid}): {samples} samples for {faults} "
              f"hot-page faults, {local} local, "
              f"{remote} remote ({100 * share:.1f} % local), "
              f"{len(rows)} frames with a row")

def check_remote(path):
    share = check_placement(path, 0, 1)
    assert share <= 0.02, f"local share {share:.3f} with memory on node 1"


def check_local(path):
    share = check_placement(path, 0, 0)
    assert share >= 0.98, f"local share {share:.3f} with memory on node 0"


def hot_pages(path):
    """The workload's hot page addresses ("HOT 0x..." lines), as pages[]
    writes them."""
    hot = {"0x%x" % int(line.split()[1], 16)
           for line in open(path, errors="replace")
           if line.startswith("HOT ")}
    assert len(hot) == HOT, f"{len(hot)} HOT lines in the guest output"
    return hot


def migrated(frames):
    m = {"moved": 0, "busy": 0, "denied": 0, "failed": 0}
    for f in frames:
        for k in m:
            m[k] += f["migrations"][k]
    return m


def first_migration(frames):
    for i, f in enumerate(frames):
        if f["migrations"]["moved"]:
            return i
    raise AssertionError(f"no frame reports moved pages: {migrated(frames)}")


def check_moved(frames, hot, before=()):
    """After the move no hot page is listed on node 1 again; each frame
    lists them on node 0, except that the node of a page the process has
    unmapped by the time the frame is built (its last frames) is null, and
    that a page whose move failed or was busy in a frame (the workload
    had it unmapped at that instant) stays where it was in that frame
    only: memtop retries it at the next frame.  A frame's moves are of
    the candidates of the frame before it (collector_emit: a listed page
    whose node was known and whose samples were remote-heavy there): a
    hot page that was none yet (first listed late, or its node or its
    samples' nodes unknown then) moves a frame later.  before: the frames
    before the first of frames."""
    def candidates(f):
        return {p["addr"] for p in f["pages"]
                if p["node"] is not None and p["remote"] > p["local"]}

    whole = 0
    cand = set()
    for f in before:
        cand |= candidates(f)
    for f in frames:
        on = {p["addr"]: p["node"] for p in f["pages"] if p["addr"] in hot}
        back = {a: n for a, n in on.items()
                if n not in (0, None) and a in cand}
        cand |= candidates(f)
        m = f["migrations"]
        retry = m["failed"] + m["busy"]
        assert len(back) <= retry, \
            f"frame {f['seq']}: hot pages elsewhere: {back} " \
            f"(moves failed or busy in that frame: {retry})"
        if len(on) >= HOT // 2 and set(on.values()) == {0}:
            whole += 1
    assert whole >= min(2, len(frames)), \
        f"only {whole} frame(s) list the hot pages on node 0"


def check_migrate(path):
    """Shared memory on node 1 refaulted from CPU 0: the hot pages move to
    node 0 and the refaults after that land there, locally."""
    frame_invariants(path)
    frames = frames_of(path)
    assert frames[-1].get("exit_status") == 0, frames[-1].get("exit_status")
    i = first_migration(frames)
    hot = hot_pages(path)
    # Before the move every hot page seen was remote-heavy on node 1, and
    # most were seen: a slow, sanitized start under TCG may not have
    # faulted every page by the time the first frame asks for the move.
    # A page listed before its node was read (node null, or all its
    # samples of unknown node: a loaded machine) says nothing about where
    # it was.
    seen = {p["addr"] for f in frames[:i] for p in f["pages"]
            if p["node"] is not None and p["local"] + p["remote"]} & hot
    remote = {p["addr"] for f in frames[:i] for p in f["pages"]
              if p["node"] == 1 and p["remote"] > p["local"]}
    rows = {a: [(f["seq"], p["node"], p["local"], p["remote"])
                for f in frames[:i] for p in f["pages"] if p["addr"] == a]
            for a in seen - remote}
    assert seen <= remote, \
        f"before frame {frames[i]['seq']}: hot pages never remote on " \
        f"node 1 (seq, node, local, remote): {rows}"
    assert 2 * len(seen) >= len(hot), \
        f"before frame {frames[i]['seq']}: only {len(seen)} of {len(hot)} hot pages seen"
    # Other remote-heavy pages (the loader's and libc's page cache, mapped
    # by other processes too) may be denied: only the hot ones must move,
    # and the checks below follow those alone.
    total = migrated(frames)
    assert total["moved"] >= HOT, total
    after = [f for f in frames[i:] if f["totals"]["samples"]]
    assert len(after) >= 2, "too few frames after the migration"
    check_moved(after, hot, frames[:i])
    late = after[1:]
    mem0 = sum(node_row(f, 0)["mem_samples"] for f in late)
    mem1 = sum(node_row(f, 1)["mem_samples"] for f in late)
    share, known = local_share(late)
    assert mem0 >= HOT and mem1 <= mem0 // 20, (mem0, mem1)
    assert share >= 0.95, f"local share {share:.3f} after migration"
    print(f"ok: frame {frames[i]['seq']} reports {total}; afterwards hot "
          f"pages on node 0, memory side node 0: {mem0}, node 1: {mem1}, "
          f"local {100 * share:.1f} %; before: local "
          f"{100 * local_share(frames[:i])[0]:.1f} %")


def check_migrate_private(path):
    """Private pages touched once: after the move, frames list them on
    node 0 (the node is re-read for every listed page)."""
    frame_invariants(path)
    frames = frames_of(path)
    i = first_migration(frames)
    hot = hot_pages(path)
    # Every hot page was listed remote-heavy on node 1 in a frame before
    # the last frame that reports moves (a page whose node was still
    # unknown in the first frame, as on a loaded machine, is moved a
    # frame later).
    last = max(j for j, f in enumerate(frames) if f["migrations"]["moved"])
    remote = {p["addr"] for f in frames[:last] for p in f["pages"]
              if p["node"] == 1 and p["remote"] > p["local"]}
    assert hot <= remote, f"hot pages not remote before the move: " \
        f"{hot - remote}"
    total = migrated(frames)
    assert total["moved"] >= HOT, total
    later = [f for f in frames[i:] if not f["final"]]
    assert later, "no frame after the migration"
    check_moved(later, hot, frames[:i])
    print(f"ok: {len(hot)} private hot pages moved ({total}); "
          f"{len(later)} later frame(s) list them on node 0")


def check_topology(path):
    text = open(path, errors="replace").read()
    for want in ("node0 cpus=0 blocks=4", "node1 cpus=1 blocks=4",
                 "block_size_bytes=8000000"):
        assert want in text, f"missing '{want}' in:\n{text}"
    assert "physnode live: ok" in text, text
    print("ok: " + "; ".join(l for l in text.splitlines() if l.strip()))


CHECKS = {
    "topology": check_topology,
    "remote": check_remote,
    "local": check_local,
    "migrate": check_migrate,
    "migrate_private": check_migrate_private,
    "crossed": lambda path: check_pair(path, False),
    "uncrossed": lambda path: check_pair(path, True),
}

if __name__ == "__main__":
    name, path = sys.argv[1], sys.argv[2]
    try:
        CHECKS[name](path)
    except Exception as e:  # any surprise in the output is a failure

        print(f"FAIL: {name}: {type(e).__name__}: {e}")
        sys.exit(1)
