#!/usr/bin/env bash
# Benchmark: the shared side-by-side workload (../shared/perf/side-by-side.sh:
# the same Markdown, ~2 KB of prose with links and a 20 x 6 table per page,
# built by Hugo, by Zola when ZOLA names its binary, and by exhibit, on
# tmpfs, runs alternating), then each size's ratio against issue 21's
# targets ("Speed v2"): <= 0.20 x Hugo at 1,000 and 10,000 pages, peak RSS
# < 48 MB at 1,000 and < 150 MB at 10,000.
# The shared script prints medians only; for the spread (min-max of the
# runs) this wrapper puts a python3 shim first on PATH that copies the
# shared script's per-run time files when its summary step starts (after the
# timed runs, so the timed commands are not touched).
# Peak RSS comes from the shared script's line, rounded there to whole MB.
#   benches/side-by-side.sh [N...]          (default 1000 10000; RUNS=5)
#   EXHIBIT=/abs/exhibit ZOLA=/abs/zola benches/side-by-side.sh 1000
# Zola is not on crates.io or in Debian: its source (github.com/getzola/zola,
# 0.22.1 as in the issue) builds with `cargo build --release --locked`, its
# crates from crates.io (9 to 12 minutes on 2 cores, measured twice).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${EXHIBIT:-$PWD/target/release/exhibit}
[ -n "${EXHIBIT:-}" ] || cargo build --release --quiet
script=${SIDE_BY_SIDE:-$PWD/../shared/perf/side-by-side.sh}
[ -f "$script" ] || { echo "side-by-side.sh not found at $script (set SIDE_BY_SIDE)" >&2; exit 2; }
command -v hugo >/dev/null || { echo "hugo is not installed (apt-get install hugo)" >&2; exit 2; }
[ $# -gt 0 ] || set -- 1000 10000
shim=$(mktemp -d /dev/shm/sbs-shim.XXXXXX)
trap 'rm -rf "$shim"' EXIT
py=$(command -v python3)
cat >"$shim/python3" <<SH
#!/bin/sh
# The shared script's summary step is "python3 - N WORKDIR" with WORKDIR/t.ex.
if [ "\$#" -eq 3 ] && [ "\$1" = - ] && [ -f "\$3/t.ex" ]; then
  for t in ex hugo zola; do cp "\$3/t.\$t" "$shim/\$2.\$t" 2>/dev/null || true; done
fi
exec "$py" "\$@"
SH
chmod +x "$shim/python3"
PATH="$shim:$PATH" bash "$script" "$bin" "$@" | "$py" -c '
import os, re, sys
shim = sys.argv[1]
ok = lambda b: "PASS" if b else "FAIL"
def spread(n, tool):
    p = os.path.join(shim, f"{n}.{tool}")
    if not os.path.exists(p):
        return "spread n/a"
    r = [float(l.split()[0]) for l in open(p) if l.strip() and l[0].isdigit()]
    return f"{min(r):.3f}-{max(r):.3f}s over {len(r)} runs" if r else "spread n/a"
for line in sys.stdin:
    print(line, end="", flush=True)
    m = re.match(r"N=(\d+): exhibit [\d.]+s (\d+)MB .* ex/hugo ([\d.]+)", line)
    if not m:
        continue
    n, mb, r = int(m[1]), int(m[2]), float(m[3])
    cap = 48 if n <= 1000 else 150
    ex, hu = spread(n, "ex"), spread(n, "hugo")
    z = re.search(r"\| zola [\d.]+s \d+MB \| ex/zola ([\d.]+)", line)
    zola = (", zola " + spread(n, "zola")) if z else ""
    print(f"N={n}: spread exhibit {ex}, hugo {hu}{zola}")
    print(f"N={n}: ex/hugo {r:.3f} (target <= 0.20: {ok(r <= 0.20)}); "
          f"peak {mb} MB (target < {cap}: {ok(mb < cap)})")
    if z:
        # The issue gives this one as the rough equivalent of the Hugo target.
        print(f"N={n}: ex/zola {float(z[1]):.3f} (the equivalent the issue gives, about 0.5: "
              f"{ok(float(z[1]) <= 0.5)})")
' "$shim"
