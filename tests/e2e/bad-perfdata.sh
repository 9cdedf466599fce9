#!/bin/bash
# memtop -i on truncated, corrupt and hostile files (e): each variant the
# test makes from good captures (a real perf recording, memtop's own and a
# synthetic one) must end with exit status 1 and one line on stderr that
# names the file, within seconds and without a large allocation: never a
# crash, a hang or an out-of-memory kill.
. "$(dirname "$0")/../lib/lib.sh"
need_python
: "${MEMTOP_PERFDATA_TOOL:=$MEMTOP_BUILDDIR/tests/perfdata-tool}"
CORPUS="$MEMTOP_SRCDIR/tests/fuzz/corpus/perfdata"
[ -x "$MEMTOP_PERFDATA_TOOL" ] || skip "perfdata-tool not built"

"$MEMTOP_PERFDATA_TOOL" gen "$TMP/synth.data" --samples 2000 --pages 64 ||
	fail "gen failed"
mkdir "$TMP/dir.data"

python3 - "$MEMTOP" "$TMP" "$CORPUS/perf-faults.data" "$CORPUS/memtop-sw.data" \
	"$CORPUS/perf-pipe.data" "$CORPUS/perf-zstd.data" "$TMP/synth.data" <<'PY' || fail "bad inputs"
import os, resource, struct, subprocess, sys, time

memtop, tmp, sources = sys.argv[1], sys.argv[2], sys.argv[3:]
RSS_LIMIT_KB = 256 * 1024


def record_ends(data, pos):
    """Offsets where a pipe-mode stream could validly end."""
    ends = set()
    while pos + 8 <= len(data):
        size = struct.unpack_from("<H", data, pos + 6)[0]
        if size < 8:
            break
        pos += size
        ends.add(pos)
    return ends


def variants(name, data):
    n = len(data)
    pipe = struct.unpack_from("<Q", data, 8)[0] == 16
    # A pipe cut between two records is a shorter valid stream.
    valid = record_ends(data, 16) if pipe else set()
    for cut in sorted({0, 7, 8, 15, 16, 24, 100, 103, 104, 105, 200,
                       n // 3, n // 2, n - 100, n - 9, n - 8, n - 1}):
        if 0 <= cut < n and cut not in valid:
            yield f"{name}-trunc{cut}", data[:cut]

    def poke(fmt, off, *v):
        b = bytearray(data)
        struct.pack_into(fmt, b, off, *v)
        return bytes(b)
    yield f"{name}-magic", b"GARBAGE!" + data[8:]
    yield f"{name}-v1", b"PERFFILE" + data[8:]
    yield f"{name}-hsize", poke("<Q", 8, 4096)
    if pipe:
        # The first record (an attr): size 0, size past the end.
        yield f"{name}-rec0", poke("<H", 16 + 6, 0)
        yield f"{name}-recbig", poke("<H", 16 + 6, 0xfff8)
        yield f"{name}-attrsize", poke("<I", 16 + 8 + 4, 0x7fffffff)
        return
    data_off = struct.unpack_from("<Q", data, 40)[0]
    yield f"{name}-attrsize0", poke("<Q", 16, 0)
    yield f"{name}-attrsbig", poke("<Q", 32, 1 << 62)
    yield f"{name}-attrsoff", poke("<Q", 24, (1 << 64) - 16)
    yield f"{name}-dataoff", poke("<Q", 40, 1 << 63)
    yield f"{name}-datasize0", poke("<Q", 48, 0)
    yield f"{name}-datasize", poke("<Q", 48, (1 << 64) - 1)
    yield f"{name}-features", poke("<QQQQ", 72, *(4 * [(1 << 64) - 1]))
    yield f"{name}-rec0", poke("<H", data_off + 6, 0)
    yield f"{name}-recbig", poke("<H", data_off + 6, 0xfff8)


def run(path):
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.monotonic()
    try:
        p = subprocess.run([memtop, "-i", path, "-b", "--json"],
                           capture_output=True, timeout=20)
    except subprocess.TimeoutExpired:
        return f"hangs (> 20 s)"
    took = time.monotonic() - t0
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    err = p.stderr.decode(errors="replace")
    if p.returncode != 1:
        return f"exit {p.returncode}, stderr {err[:200]!r}"
    if err.count("\n") != 1 or not err.startswith("memtop: ") or \
       os.path.basename(path) not in err:
        return f"stderr is not one line naming the file: {err[:300]!r}"
    if rss > RSS_LIMIT_KB and rss > before:
        return f"max RSS {rss} KiB"
    return None


bad = 0
count = 0
cases = [(f"{tmp}/dir.data", "a directory"), ("/dev/null", "empty"),
         (f"{tmp}/missing.data", "missing")]
with open(f"{tmp}/random.data", "wb") as fh:
    fh.write(os.urandom(4096))
cases.append((f"{tmp}/random.data", "random bytes"))
for src in sources:
    data = open(src, "rb").read()
    for name, blob in variants(os.path.basename(src).split(".")[0], data):
        path = f"{tmp}/{name}.data"
        with open(path, "wb") as fh:
            fh.write(blob)
        cases.append((path, name))
for path, name in cases:
    count += 1
    why = run(path)
    if why:
        print(f"FAIL: {name}: {why}")
        bad += 1
if bad:
    sys.exit(f"{bad} of {count} bad inputs mishandled")
print(f"ok: {count} bad inputs: exit 1, one line on stderr, bounded time and memory")
PY
# An example of the message.
"$MEMTOP" -i "$TMP/dir.data" -b 2>&1 | sed 's/^/  /'
finish
