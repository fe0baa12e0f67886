#!/usr/bin/env bash
# Benchmark: `exhibit verify` against GNU `sha256sum -c` and
# `openssl dgst -sha256`, side by side in one run, on data this script
# generates on tmpfs (same seed, same bytes):
#   (a) one 1 GiB file
#   (b) 10,000 files of 4-64 KiB (about 350 MB)
# Every tool checks the same SHA256SUMS (written by coreutils); openssl only
# hashes, as the fastest single-stream baseline. Wall time is the median of
# RUNS runs; memory is the peak RSS over them (GNU time's %M).
#   benches/verify.sh [RUNS]     (default 3)
# Targets (issue: hash audit): (b) exhibit/sha256sum <= 0.2;
# (a) exhibit/openssl <= 1.1; peak memory under 40 MB in both.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
cargo build --release --quiet
bin=$PWD/target/release/exhibit
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
python3 - "$bin" "$work" "$runs" <<'PY'
import statistics, subprocess, sys, time
binary, work, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])

def measure(cmd, cwd):
    walls, peak = [], 0
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "sh", "-c", cmd], cwd=cwd,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        walls.append(time.perf_counter() - t0)
        if p.returncode != 0:
            sys.exit(f"failed: {cmd}\n{p.stderr}")
        peak = max(peak, int(p.stderr.strip().splitlines()[-1]))
    return statistics.median(walls), peak / 1024

rows = {}
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
    }
    print(f"({name}) {d}: {size / 1e6:,.0f} MB")
    for tool, cmd in tools.items():
        wall, mem = measure(cmd, cwd)
        rows[(name, tool)] = wall
        print(f"  {tool:<16} {wall:7.3f} s  {size / wall / 1e9:5.2f} GB/s  peak {mem:6.1f} MB")
ra = rows[("a", "exhibit verify")] / rows[("a", "openssl dgst")]
rb = rows[("b", "exhibit verify")] / rows[("b", "sha256sum -c")]
print(f"ratio (a) exhibit/openssl:   {ra:.2f}  (target <= 1.1: {'PASS' if ra <= 1.1 else 'FAIL'})")
print(f"ratio (b) exhibit/sha256sum: {rb:.2f}  (target <= 0.2: {'PASS' if rb <= 0.2 else 'FAIL'})")
PY
