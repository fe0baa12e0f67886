#!/usr/bin/env bash
# Benchmark: whole-process `exhibit build` of the sample campaign, release
# mode, output on tmpfs. Reports median wall time over RUNS builds and the
# peak resident memory of the largest run (GNU time's %M).
#   benches/build.sh [RUNS]        (default 30)
#   EXHIBIT=/abs/path/to/exhibit benches/build.sh   (skip the cargo build)
# Targets (earlier issue: build; issue 21 sets none for this case): median
# under 50 ms wall, peak under 30 MB.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-30}
bin=${EXHIBIT:-$PWD/target/release/exhibit}
if [ -z "${EXHIBIT:-}" ]; then
  cargo build --release --quiet
fi
out=$(mktemp -d /dev/shm/exhibit-bench.XXXXXX)
trap 'rm -rf "$out"' EXIT
"$bin" build sample-artifacts -o "$out/site" >/dev/null   # warm the page cache
python3 - "$bin" "$out/site" "$runs" <<'PY'
import statistics, subprocess, sys, time
binary, site, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
walls, peaks = [], []
for _ in range(runs):
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", binary, "build", "sample-artifacts", "-o", site],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
    walls.append(time.perf_counter() - t0)
    peaks.append(int(p.stderr.strip().splitlines()[-1]))
med = statistics.median(walls) * 1000
print(f"exhibit build sample-artifacts: median {med:.1f} ms over {runs} runs "
      f"(min {min(walls)*1000:.1f}, max {max(walls)*1000:.1f}); peak RSS {max(peaks)/1024:.1f} MB")
print(f"earlier issue's targets: wall < 50 ms: {'PASS' if med < 50 else 'FAIL'}; "
      f"peak < 30 MB: {'PASS' if max(peaks)/1024 < 30 else 'FAIL'}")
PY
