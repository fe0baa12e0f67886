#!/usr/bin/env bash
# Benchmark: two exhibit binaries (say the last commit's and a change's)
# building the same campaign folder, runs alternating on tmpfs, so both
# meet the same machine noise (each round the other one first). For each:
# median wall time (to the microsecond) and CPU time (user + system, from
# wait4) with their spread, peak resident memory, and the mean time of
# each stage (EXHIBIT_TIMINGS=1: wall/CPU ms); then the ratio of the
# medians, the median of each round's own ratio and in how many rounds
# the new binary was faster (this machine's speed drifts within minutes,
# more than most changes move it). Then whether the two sites
# are byte-identical (issue 21: "the output of every workload is
# byte-identical before and after"); exit 1 if they are not.
#   benches/ab.sh BASE NEW CAMPAIGNS [RUNS]      (RUNS default 11)
# A baseline binary: git worktree add /tmp/base <commit> &&
#   (cd /tmp/base && CARGO_TARGET_DIR=/tmp/base-target cargo build --release)
# Needs python3.
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
import os, re, shutil, statistics, subprocess, sys, time
base, new, camp, runs, work = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
env = dict(os.environ, EXHIBIT_TIMINGS="1")
bins = [("base", base), ("new", new)]
stats = {name: {"wall": [], "cpu": [], "peak": [], "stages": {}} for name, _ in bins}

def build(name, binary, out):
    shutil.rmtree(out, ignore_errors=True)
    # Wall time to the microsecond (GNU time's %e has 10 ms steps, as coarse
    # as the changes measured), CPU time and peak RSS from wait4.
    err_path = os.path.join(work, "stderr")
    with open(err_path, "w") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen([binary, "build", camp, "-o", out], stdout=subprocess.DEVNULL,
                             stderr=err, env=env)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
    stderr = open(err_path).read()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"{name} ({binary}) failed with exit {code}:\n{stderr[-2000:]}")
    s = stats[name]
    s["wall"].append(wall); s["cpu"].append(usage.ru_utime + usage.ru_stime)
    s["peak"].append(usage.ru_maxrss / 1024)
    for m in re.finditer(r"^timing: (\S+)\s+([\d.]+) ms\s+cpu\s+([\d.]+) ms", stderr, re.M):
        s["stages"].setdefault(m[1], []).append((float(m[2]), float(m[3])))

# Each round the other binary goes first, so neither always follows the other.
for i in range(runs):
    for name, binary in (bins if i % 2 == 0 else bins[::-1]):
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
pairs = [n / b for n, b in zip(stats["new"]["wall"], stats["base"]["wall"])]
print(f"  new/base wall {ratio:.3f} (median of the {runs} rounds' own ratios {statistics.median(pairs):.3f}; "
      f"new faster in {sum(r < 1 for r in pairs)} of {runs})")
same = subprocess.run(["diff", "-r", "-q", os.path.join(work, "base"), os.path.join(work, "new")],
                      stdout=subprocess.PIPE, text=True)
if same.returncode != 0:
    print("  sites DIFFER:\n" + same.stdout[:2000])
    sys.exit(1)
print("  sites byte-identical")
PY
