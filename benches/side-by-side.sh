#!/usr/bin/env bash
# Benchmark: the shared side-by-side workload (../shared/perf/side-by-side.sh:
# the same Markdown, ~2 KB of prose with links and a 20 x 6 table per page,
# built by Hugo, by Zola when ZOLA names its binary, and by exhibit, on
# tmpfs, runs alternating), then each size's ratio against issue 21's
# targets: <= 0.20 x Hugo at 1,000 and 10,000 pages, peak RSS < 48 MB at
# 1,000 and < 150 MB at 10,000.
#   benches/side-by-side.sh [N...]          (default 1000 10000; RUNS=5)
#   EXHIBIT=/abs/exhibit ZOLA=/abs/zola benches/side-by-side.sh 1000
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${EXHIBIT:-$PWD/target/release/exhibit}
[ -n "${EXHIBIT:-}" ] || cargo build --release --quiet
script=${SIDE_BY_SIDE:-$PWD/../shared/perf/side-by-side.sh}
[ -f "$script" ] || { echo "side-by-side.sh not found at $script (set SIDE_BY_SIDE)" >&2; exit 2; }
command -v hugo >/dev/null || { echo "hugo is not installed (apt-get install hugo)" >&2; exit 2; }
[ $# -gt 0 ] || set -- 1000 10000
bash "$script" "$bin" "$@" | tee /dev/stderr | python3 -c '
import re, sys
ok = lambda b: "PASS" if b else "FAIL"
for line in sys.stdin:
    m = re.match(r"N=(\d+): exhibit [\d.]+s (\d+)MB .* ex/hugo ([\d.]+)", line)
    if not m:
        continue
    n, mb, r = int(m[1]), int(m[2]), float(m[3])
    cap = 48 if n <= 1000 else 150
    print(f"N={n}: ex/hugo {r:.3f} (target <= 0.20: {ok(r <= 0.20)}); "
          f"peak {mb} MB (target < {cap}: {ok(mb < cap)})")
'
