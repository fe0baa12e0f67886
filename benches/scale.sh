#!/usr/bin/env bash
# Benchmark: speed at scale, side by side with Hugo, everything on tmpfs
# (/dev/shm: this machine's disk makes file-creation cost noisy).
#   (a) 1,000 pages of prose and a 20 x 6 Markdown table each: the same
#       Markdown for Hugo (minimal layouts) and as a campaign for exhibit.
#       Targets (issue 21, "Speed v2", whose own workload is the shared one
#       of benches/side-by-side.sh): exhibit wall <= 0.20 of Hugo's, peak
#       memory < 48 MB. Earlier issue's (speed at scale): <= 0.25, < 64 MB.
#   (b) 10,000 such pages. Targets (issue 21): <= 0.20 of Hugo's, peak
#       < 150 MB. Earlier issue's: <= 0.25 of Hugo's, peak < 300 MB.
#   (c) the generated campaign with tables and charts (1,000 pages, 1,000
#       charts, 8 MB of logs): wall time, memory, stage times, and a perf
#       profile's top entries when perf is installed.
#   (d) 1 GB of logs (one line in 64 with a private address) inside a
#       campaign build, one build: end-to-end GB/s (target, issue 21:
#       >= 0.5) and GB/s of each stage that reads them (verify, input scan,
#       redacting copy, output rescan). benches/logs.sh runs this case on
#       its own, several times, with bytes read per artifact byte.
# Runs alternate between the tools; the median of RUNS is reported, with
# the spread (min-max) of the runs.
# Both build into an empty folder; exhibit over its last site is shown too.
#   benches/scale.sh [RUNS]                       (default 5; 3 for (b))
#   EXHIBIT=/abs/path/to/exhibit benches/scale.sh (skip the cargo build)
# Needs: hugo (Debian package `hugo`), python3, GNU time; perf optional.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
bin=${EXHIBIT:-$PWD/target/release/exhibit}
if [ -z "${EXHIBIT:-}" ]; then
  cargo build --release --quiet
fi
command -v hugo >/dev/null || { echo "hugo is needed: apt-get install hugo" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "GNU time is needed: apt-get install time" >&2; exit 2; }
work=$(mktemp -d /dev/shm/exhibit-scale-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
gen=benches/gen-campaign.py

hugo_site() { # DIR PAGES: the same pages as Markdown, minimal layouts
  python3 "$gen" "$1" --pages "$2" --markdown-only
  mkdir -p "$1/layouts/_default"
  printf 'baseURL = "http://example.org/"\ntitle = "bench"\ndisableKinds = ["taxonomy", "term", "RSS", "sitemap", "robotsTXT", "404"]\n' >"$1/config.toml"
  echo '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{{ .Title }}</title></head><body><h1>{{ .Title }}</h1>{{ .Content }}</body></html>' >"$1/layouts/_default/single.html"
  echo '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{{ .Title }}</title></head><body><ul>{{ range .Pages }}<li><a href="{{ .RelPermalink }}">{{ .Title }}</a></li>{{ end }}</ul></body></html>' >"$1/layouts/_default/list.html"
}

measure() { # OUTFILE CMD...: append "seconds maxrss_kib" of one run
  local out=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" >/dev/null 2>"$work/stderr.txt" ||
    { cat "$work/stderr.txt" >&2; exit 1; }
  tail -1 "$work/time.txt" >>"$out"
}

compare() { # NAME PAGES RUNS MEM_LIMIT_MB OLD_MEM_LIMIT_MB
  local name=$1 pages=$2 n=$3 limit=$4 old=$5
  python3 "$gen" "$work/$name/campaign" --pages "$pages" --plain --artifact-mb 0 >/dev/null
  hugo_site "$work/$name/hugo" "$pages"
  : >"$work/$name.exhibit"; : >"$work/$name.hugo"; : >"$work/$name.again"
  # Both tools build into an empty output folder. exhibit's rebuild over
  # its previous site (which it must remove after the swap) is timed too.
  for _ in $(seq "$n"); do
    rm -rf "$work/$name/hugo-out" "$work/$name/exhibit-out"
    measure "$work/$name.hugo" hugo -s "$work/$name/hugo" -d "$work/$name/hugo-out" --quiet
    measure "$work/$name.exhibit" "$bin" build "$work/$name/campaign" -o "$work/$name/exhibit-out"
    measure "$work/$name.again" "$bin" build "$work/$name/campaign" -o "$work/$name/exhibit-out"
  done
  python3 - "$name" "$pages" "$work/$name.exhibit" "$work/$name.hugo" "$limit" "$work/$name.again" "$old" <<'PY'
import statistics, sys
name, pages, ex, hu, limit, again = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6]
old = int(sys.argv[7])
def load(p):
    rows = [tuple(map(float, l.split())) for l in open(p) if l.strip()]
    w = [r[0] for r in rows]
    return statistics.median(w), max(r[1] for r in rows) / 1024, f"{min(w):.3f}-{max(w):.3f}"
(et, em, es), (ht, hm, hs), (at, am, as_) = load(ex), load(hu), load(again)
ratio = et / ht
ok = lambda b: "PASS" if b else "FAIL"
print(f"  {pages:>6} pages   exhibit {et:6.3f} s ({es}) {em:6.1f} MB   hugo {ht:6.3f} s ({hs}) {hm:7.1f} MB"
      f"   ratio {ratio:.3f}")
print(f"  {'':>6}         issue 21: ratio <= 0.20: {ok(ratio <= 0.20)}, memory < {limit} MB: {ok(em < limit)};"
      f" earlier issue: ratio <= 0.25 and memory < {old} MB: {ok(ratio <= 0.25 and em < old)}")
print(f"  {'':>6}         exhibit over its previous site {at:6.3f} s ({as_}) {am:6.1f} MB   ratio {at / ht:.3f}")
PY
}

echo "speed at scale; 2 CPUs, load average $(cut -d' ' -f1 /proc/loadavg); $(hugo version | cut -d' ' -f1-2)"
echo "(a), (b) prose and a Markdown table per page, median of the runs:"
compare p1k 1000 "$runs" 48 64
compare p10k 10000 "$(( runs < 3 ? runs : 3 ))" 150 300

echo "(c) 1,000 pages, each with a table and a chart (1,000 charts), 8 MB of logs:"
python3 "$gen" "$work/charts" --pages 1000 --records 12 --artifact-mb 8 --seed 7 >/dev/null
: >"$work/charts.times"
for _ in $(seq "$runs"); do
  measure "$work/charts.times" "$bin" build "$work/charts" -o "$work/charts-out"
done
python3 - "$work/charts.times" <<'PY'
import statistics, sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
w = [r[0] for r in rows]
print(f"  wall {statistics.median(w):.3f} s (median; {min(w):.3f}-{max(w):.3f}), peak {max(r[1] for r in rows) / 1024:.1f} MB")
PY
EXHIBIT_TIMINGS=1 "$bin" build "$work/charts" -o "$work/charts-out" 2>&1 >/dev/null | sed -n 's/^timing: /  stage /p'
if command -v perf >/dev/null; then
  perf record -q -F 2000 -g -o "$work/perf.data" "$bin" build "$work/charts" -o "$work/charts-out" >/dev/null 2>&1 || true
  echo "  profile, top entries by own time (perf):"
  perf report -i "$work/perf.data" --no-children --sort symbol --stdio -g none 2>/dev/null |
    grep -E '^ +[0-9.]+%' | head -15 | sed -E 's/ +\[\.\] / /; s/^ +/    /' | cut -c1-110 || true
fi

echo "(d) 1 GB of logs inside a campaign build, one line in 64 with a private address:"
python3 "$gen" "$work/gb" --pages 10 --records 12 --artifact-mb 1024 --leaks --seed 9 >/dev/null
EXHIBIT_TIMINGS=1 /usr/bin/time -f "%e %M" -o "$work/time.txt" "$bin" build "$work/gb" -o "$work/gb-out" 2>"$work/gb.stages" >/dev/null
python3 - "$work/gb.stages" "$work/time.txt" "$work/gb" <<'PY'
import os, sys
stages = {l.split()[1]: float(l.split()[2]) for l in open(sys.argv[1]) if l.startswith("timing:")}
wall, rss = open(sys.argv[2]).read().split()[-2:]
size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(os.path.join(sys.argv[3], "artifacts")) for f in fs)
gb = size / 1e9
rate = gb / float(wall)
print(f"  {gb:.2f} GB of logs; build {float(wall):.2f} s, peak {int(rss) / 1024:.1f} MB")
print(f"  end to end {rate:.3f} GB/s (issue 21 target >= 0.5: {'PASS' if rate >= 0.5 else 'FAIL'}; one build)")
for stage, what in [("verify", "verify (SHA-256, both cores)"), ("scan", "input scan for private values"),
                    ("copy", "redacting copy"), ("rescan", "output rescan")]:
    ms = stages.get(stage)
    if ms:
        print(f"  {what:34} {ms / 1000:6.2f} s  {gb / (ms / 1000):5.2f} GB/s")
print("  all stages: " + ", ".join(f"{k} {v / 1000:.3f} s" for k, v in stages.items()))
print("  compare: benches/logs.sh (this case alone, bytes read per byte), benches/verify.sh (hash audit alone) and benches/scan.sh (exhibit scan against ripgrep)")
PY
