#!/usr/bin/env bash
# Benchmark: two exhibit binaries (say the last commit's and a change's)
# building the same campaign folder, runs alternating on tmpfs, so both
# meet the same machine noise. For each: median wall and CPU time (user +
# system) with their spread, peak resident memory, and the mean time of
# each stage (EXHIBIT_TIMINGS=1: wall/CPU ms). Then whether the two sites
# are byte-identical (issue 21: "the output of every workload is
# byte-identical before and after"); exit 1 if they are not.
#   benches/ab.sh BASE NEW CAMPAIGNS [RUNS]      (RUNS default 11)
# A baseline binary: git worktree add /tmp/base <commit> &&
#   (cd /tmp/base && CARGO_TARGET_DIR=/tmp/base-target cargo build --release)
# Needs python3 and GNU time.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: benches/ab.sh BASE NEW CAMPAIGNS [RUNS]" >&2; exit 2; }
base=$1 new=$2 camp=$3 runs=${4:-11}
for b in "$base" "$new"; do
  [ -x "$b" ] || { echo "$b: not an executable" >&2; exit 2; }
done
[ -d "$camp" ] || { echo "$camp: not a folder" >&2; exit 2; }
case $runs in ''|*[!0-9]*|0) echo "RUNS must be a whole number of 1 or more, not '$runs'" >&2; exit 2 ;; esac
work=$(mktemp -d /dev/shm/exhibit-ab.XXXXXX)
trap 'rm -rf "$work"' EXIT
python3 - "$base" "$new" "$camp" "$runs" "$work" <<'PY'
import os, re, shutil, statistics, subprocess, sys
base, new, camp, runs, work = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
env = dict(os.environ, EXHIBIT_TIMINGS="1")
bins = [("base", base), ("new", new)]
stats = {name: {"wall": [], "cpu": [], "peak": [], "stages": {}} for name, _ in bins}

def build(name, binary, out):
    shutil.rmtree(out, ignore_errors=True)
    timing = os.path.join(work, "time")
    p = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", "-o", timing, binary, "build", camp,
                        "-o", out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"{name} ({binary}) failed with exit {p.returncode}:\n{p.stderr[-2000:]}")
    wall, user, system, peak = map(float, open(timing).read().split()[-4:])
    s = stats[name]
    s["wall"].append(wall); s["cpu"].append(user + system); s["peak"].append(peak / 1024)
    for m in re.finditer(r"^timing: (\S+)\s+([\d.]+) ms\s+cpu\s+([\d.]+) ms", p.stderr, re.M):
        s["stages"].setdefault(m[1], []).append((float(m[2]), float(m[3])))

for _ in range(runs):
    for name, binary in bins:
        build(name, binary, os.path.join(work, name))
print(f"{camp}: {runs} builds each, alternating")
for name, binary in bins:
    s = stats[name]
    w, c = sorted(s["wall"]), sorted(s["cpu"])
    print(f"  {name:4} wall {statistics.median(w):.3f} s ({w[0]:.3f}-{w[-1]:.3f}), "
          f"cpu {statistics.median(c):.3f} s ({c[0]:.3f}-{c[-1]:.3f}), peak {max(s['peak']):.1f} MB  [{binary}]")
    stages = "  ".join(f"{k} {statistics.mean(x[0] for x in v):.1f}/{statistics.mean(x[1] for x in v):.0f}"
                       for k, v in s["stages"].items())
    if stages:
        print(f"       stages, mean wall/cpu ms: {stages}")
ratio = statistics.median(stats["new"]["wall"]) / statistics.median(stats["base"]["wall"])
print(f"  new/base wall {ratio:.3f}")
same = subprocess.run(["diff", "-r", "-q", os.path.join(work, "base"), os.path.join(work, "new")],
                      stdout=subprocess.PIPE, text=True)
if same.returncode != 0:
    print("  sites DIFFER:\n" + same.stdout[:2000])
    sys.exit(1)
print("  sites byte-identical")
PY
