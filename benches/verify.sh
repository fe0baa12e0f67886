#!/usr/bin/env bash
# Benchmark: `exhibit verify` against GNU `sha256sum -c` and
# `openssl dgst -sha256`, side by side in one run, on data this script
# generates on tmpfs (same seed, same bytes):
#   (a) one 1 GiB file
#   (b) 10,000 files of 4-64 KiB (about 350 MB)
# Every tool checks the same SHA256SUMS (written by coreutils); openssl only
# hashes, as the fastest single-stream baseline. The bare loop
# (examples/bare_hash.rs) is the floor: every file read and hashed on every
# core with exhibit's own SHA-256 crate and buffer size, and none of
# verify's checks; exhibit's time over it is what its checks cost. Wall
# time is the median of RUNS runs, the tools taking turns run by run (load
# on the machine hits them alike), with the spread (min-max); memory is
# the peak RSS over them (GNU time's %M).
#   benches/verify.sh [RUNS]     (default 3)
#   EXHIBIT=/abs/path/to/exhibit benches/verify.sh   (skip the cargo build)
#   BARE_HASH=/abs/path/to/bare_hash                  (skip building the bare loop)
# Targets (issue 21, "Speed v2"): (b) exhibit/sha256sum -c <= 0.15, exhibit
# peak memory under 40 MB. Earlier issue's targets (hash audit), still
# printed: (b) exhibit/sha256sum <= 0.2; (a) exhibit/openssl <= 1.1; peak
# memory under 40 MB in (a).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
bin=${EXHIBIT:-$PWD/target/release/exhibit}
if [ -z "${EXHIBIT:-}" ]; then
  cargo build --release --quiet
fi
bare=${BARE_HASH:-$PWD/target/release/examples/bare_hash}
if [ -z "${BARE_HASH:-}" ]; then
  cargo build --release --quiet --example bare_hash
fi
work=$(mktemp -d /dev/shm/exhibit-verify.XXXXXX)
trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import os, random, sys
work = sys.argv[1]
rng = random.Random(20260908)
os.makedirs(f"{work}/one")
with open(f"{work}/one/big.bin", "wb") as f:
    for _ in range(64):
        f.write(rng.randbytes(16 << 20))
os.makedirs(f"{work}/many")
for i in range(10_000):
    d = f"{work}/many/d{i // 500:02d}"
    os.makedirs(d, exist_ok=True)
    with open(f"{d}/f{i:05d}.bin", "wb") as f:
        f.write(rng.randbytes(rng.randint(4, 64) * 1024))
PY
for set in one many; do
  (cd "$work/$set" && find . -type f -printf '%P\n' | sort | xargs -d '\n' sha256sum > "$work/$set.sums" && mv "$work/$set.sums" SHA256SUMS)
done
python3 - "$bin" "$work" "$runs" "$bare" <<'PY'
import statistics, subprocess, sys, time
binary, work, runs, bare = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]

def once(cmd, cwd):
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", "sh", "-c", cmd], cwd=cwd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"failed: {cmd}\n{p.stderr}")
    return wall, int(p.stderr.strip().splitlines()[-1])

def measure(tools, cwd):
    """Each tool once per round, RUNS rounds; per tool the median wall,
    min, max and the peak RSS in MB."""
    walls = {t: [] for t in tools}
    peaks = {t: 0 for t in tools}
    for _ in range(runs):
        for tool, cmd in tools.items():
            wall, kb = once(cmd, cwd)
            walls[tool].append(wall)
            peaks[tool] = max(peaks[tool], kb)
    return {t: (statistics.median(w), min(w), max(w), peaks[t] / 1024) for t, w in walls.items()}

rows, mems = {}, {}
for name, d, size in [("a", "one", 1 << 30), ("b", "many", None)]:
    cwd = f"{work}/{d}"
    if size is None:
        size = sum(int(l.split()[0]) for l in subprocess.run(
            "find . -type f ! -name SHA256SUMS -printf '%s\\n'", shell=True, cwd=cwd,
            capture_output=True, text=True).stdout.split())
    tools = {
        "exhibit verify": f"{binary} verify .",
        "sha256sum -c": "sha256sum --quiet -c SHA256SUMS",
        "openssl dgst": "find . -type f ! -name SHA256SUMS -print0 | xargs -0 openssl dgst -sha256",
        "bare loop": f"{bare} .",
    }
    print(f"({name}) {d}: {size / 1e6:,.0f} MB")
    for tool, (wall, lo, hi, mem) in measure(tools, cwd).items():
        rows[(name, tool)] = wall
        mems[(name, tool)] = mem
        print(f"  {tool:<16} {wall:7.3f} s ({lo:.3f}-{hi:.3f})  {size / wall / 1e9:5.2f} GB/s  peak {mem:6.1f} MB")
ra = rows[("a", "exhibit verify")] / rows[("a", "openssl dgst")]
rb = rows[("b", "exhibit verify")] / rows[("b", "sha256sum -c")]
ok = lambda b: "PASS" if b else "FAIL"
mb, ma = mems[("b", "exhibit verify")], mems[("a", "exhibit verify")]
print(f"issue 21: (b) exhibit/sha256sum -c {rb:.3f} (target <= 0.15: {ok(rb <= 0.15)}); "
      f"exhibit peak {mb:.1f} MB (target < 40: {ok(mb < 40)})")
fb = rows[("b", "bare loop")]
print(f"floor (information): (b) the bare loop, no checks, {fb:.3f} s = {fb / rows[('b', 'sha256sum -c')]:.3f} x "
      f"sha256sum -c; exhibit verify {rows[('b', 'exhibit verify')] / fb:.2f} x the bare loop")
print(f"earlier issue: (b) exhibit/sha256sum {rb:.3f} (target <= 0.2: {ok(rb <= 0.2)}); "
      f"(a) exhibit/openssl {ra:.3f} (target <= 1.1: {ok(ra <= 1.1)}); (a) exhibit peak {ma:.1f} MB (< 40: {ok(ma < 40)})")
PY
