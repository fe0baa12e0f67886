//! Uncertainty in charts, on hyperfine's own export (five runs of each
//! gzip level, tests/fixtures/claims-hyperfine): interval whiskers sit at
//! the interval computed here from the runs, a strip chart draws one dot
//! per run with the median marked, whiskers past a set `max` grow the axis,
//! and a half-given interval is refused as bad input.

use super::*;
use serde_json::Value;

/// Bars with min–max whiskers, the same with a `max` the whiskers pass,
/// and a strip chart of every run.
const CHARTS: &str = r#"# Overview

```exhibit chart
{
  "title": "Median time with the range of the runs",
  "source": "data/gzip.json",
  "x": { "field": "command", "label": "Command" },
  "y": { "label": "Time (s)", "format": ".3" },
  "series": [
    { "field": "median", "name": "gzip", "low": "min(times)", "high": "max(times)" }
  ]
}
```

```exhibit chart
{
  "title": "Whiskers past the set maximum",
  "source": "data/gzip.json",
  "x": { "field": "command", "label": "Command" },
  "y": { "label": "Time (s)", "format": ".3", "max": 2 },
  "series": [
    { "field": "median", "name": "gzip", "low": "min(times)", "high": "max(times)" }
  ]
}
```

```exhibit chart
{
  "title": "Every run",
  "type": "strip",
  "source": "data/gzip.json",
  "x": { "field": "command", "label": "Command" },
  "y": { "label": "Time (s)", "format": ".3" },
  "series": [ { "field": "times", "name": "gzip" } ]
}
```

```exhibit chart
{
  "title": "Median and mean with their intervals",
  "type": "line",
  "source": "data/gzip.json",
  "x": { "field": "command", "label": "Command" },
  "y": { "label": "Time (s)", "format": ".3" },
  "series": [
    { "field": "median", "name": "Median", "low": "ci_low(times)", "high": "ci_high(times)" },
    { "field": "mean", "name": "Mean", "low": "p(10, times)", "high": "p(90, times)" }
  ]
}
```

```exhibit chart
{
  "title": "The runs as boxes",
  "type": "box",
  "source": "data/gzip.json",
  "x": { "field": "command", "label": "Command" },
  "y": { "label": "Time (s)", "format": ".3" },
  "series": [ { "field": "times", "name": "gzip" } ]
}
```
"#;

/// A sealed campaign `gzip-levels` holding hyperfine's export and `page`.
fn campaign(page: &str) -> PathBuf {
    let dir = fixture("claims-hyperfine");
    let _ = std::fs::remove_file(dir.join("manifest.json"));
    std::fs::write(dir.join("index.md"), page).unwrap();
    seal(&dir);
    dir
}

/// The campaign with the charts above; used by the browser checks too.
pub(super) fn spread_campaign() -> PathBuf {
    campaign(CHARTS)
}

/// The built page, and the campaign's folder in the site.
fn built() -> (String, PathBuf) {
    let dir = spread_campaign();
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let site = out.join("gzip-levels");
    (read(&site.join("index.html")), site)
}

fn built_page() -> String {
    built().0
}

/// Each command and its runs, read from the fixture here.
fn runs() -> Vec<(String, Vec<f64>)> {
    let text = read(&repo().join("tests/fixtures/claims-hyperfine/data/gzip.json"));
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let times = r["times"].as_array().unwrap();
            (
                r["command"].as_str().unwrap().to_string(),
                times.iter().map(|t| t.as_f64().unwrap()).collect(),
            )
        })
        .collect()
}

fn median(xs: &[f64]) -> f64 {
    percentile(xs, 50.0)
}

/// Percentile `q` by linear interpolation between closest ranks (numpy's
/// default), as the docs say `p()` computes it.
fn percentile(xs: &[f64], q: f64) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let h = (v.len() - 1) as f64 * q / 100.0;
    let (i, frac) = (h.floor() as usize, h - h.floor());
    v[i] + frac * (v[(i + 1).min(v.len() - 1)] - v[i])
}

fn lo_hi(xs: &[f64]) -> (f64, f64) {
    (
        xs.iter().copied().fold(f64::INFINITY, f64::min),
        xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    )
}

/// The chart figures of a page.
fn figures(html: &str) -> Vec<&str> {
    html.split("<figure class=\"block chart\"")
        .skip(1)
        .map(|f| &f[..f.find("</figure>").unwrap()])
        .collect()
}

/// The wide drawing of a figure, parsed, with the axis mapping read from
/// its tick labels (a tick's baseline is 0.35 em below its value's y).
struct Drawing<'a> {
    doc: roxmltree::Document<'a>,
    /// y = a + b * value
    a: f64,
    b: f64,
}

impl<'a> Drawing<'a> {
    fn of(fig: &'a str) -> Drawing<'a> {
        let svg = svgs(fig)[0];
        assert!(svg.contains("chart-wide"), "{svg}");
        let doc = roxmltree::Document::parse(svg).unwrap();
        let ticks: Vec<(f64, f64)> = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("chart-tick"))
            .map(|n| {
                let f: f64 = n.attribute("font-size").unwrap().parse().unwrap();
                let y: f64 = n.attribute("y").unwrap().parse().unwrap();
                let v: f64 = n.text().unwrap().replace(',', "").parse().unwrap();
                (v, y - f * 0.35)
            })
            .collect();
        let ((v0, y0), (v1, y1)) = (ticks[0], ticks[ticks.len() - 1]);
        let b = (y1 - y0) / (v1 - v0);
        Drawing {
            a: y0 - b * v0,
            b,
            doc,
        }
    }

    fn y(&self, v: f64) -> f64 {
        self.a + self.b * v
    }

    fn top_tick(&self) -> f64 {
        self.classed("chart-tick")
            .map(|n| n.text().unwrap().replace(',', "").parse::<f64>().unwrap())
            .fold(f64::NEG_INFINITY, f64::max)
    }

    fn classed(&self, class: &'a str) -> impl Iterator<Item = roxmltree::Node<'_, 'a>> + '_ {
        self.doc
            .descendants()
            .filter(move |n| n.attribute("class") == Some(class))
    }

    /// Category names with their x.
    fn categories(&self) -> Vec<(String, f64)> {
        self.classed("chart-category")
            .map(|n| {
                let x: f64 = n.attribute("x").unwrap().parse().unwrap();
                (n.text().unwrap().to_string(), x)
            })
            .collect()
    }

    /// The category whose name sits nearest `x`.
    fn category_at(&self, x: f64) -> String {
        let mut cats = self.categories();
        cats.sort_by(|p, q| (p.1 - x).abs().total_cmp(&(q.1 - x).abs()));
        cats[0].0.clone()
    }
}

/// The numbers of a path's `d`, in order.
fn path_numbers(d: &str) -> Vec<f64> {
    d.split(|c: char| c.is_ascii_alphabetic() || c == ' ')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect()
}

#[test]
fn whiskers_sit_at_the_interval_the_runs_give() {
    let (html, site) = built();
    let fig = figures(&html)[0];
    let runs = runs();
    // The data table lists each interval as low–high.
    for (cmd, times) in &runs {
        let (lo, hi) = lo_hi(times);
        let row = format!(
            "<tr><th scope=\"row\">{cmd}</th><td class=\"num\">{:.3}</td><td class=\"num\">{lo:.3}–{hi:.3}</td></tr>",
            median(times)
        );
        assert!(fig.contains(&row), "{row} not in the data table:\n{fig}");
    }
    // Each whisker spans the axis positions of min and max.
    let d = Drawing::of(fig);
    let whiskers: Vec<Vec<f64>> = d
        .classed("chart-whisker")
        .map(|n| path_numbers(n.attribute("d").unwrap()))
        .collect();
    assert_eq!(whiskers.len(), runs.len());
    for w in &whiskers {
        // M x y_hi V y_lo M a y_hi H b M a y_lo H b
        let (x, y_hi, y_lo) = (w[0], w[1], w[2]);
        let (_, times) = runs.iter().find(|(c, _)| *c == d.category_at(x)).unwrap();
        let (lo, hi) = lo_hi(times);
        assert!((d.y(hi) - y_hi).abs() < 0.2, "high {hi}: {w:?}");
        assert!((d.y(lo) - y_lo).abs() < 0.2, "low {lo}: {w:?}");
        assert!(w[3] < x && w[5] > x, "a cap either side: {w:?}");
    }
    assert!(
        fig.contains("Whiskers mark each value&#39;s interval (gzip: min(times) to max(times))")
    );
    // The download holds both ends, unformatted.
    let at = fig.find(".csv\"").expect("a CSV download");
    let href = &fig[fig[..at].rfind('"').unwrap() + 1..at + 4];
    let csv = read(&site.join(href));
    assert!(
        csv.starts_with("Command,gzip,gzip low,gzip high\r\n"),
        "{csv}"
    );
    // Exports round computed values to 12 significant digits.
    for (cmd, times) in &runs {
        let (lo, hi) = lo_hi(times);
        let line = csv
            .lines()
            .find(|l| l.starts_with(&format!("{cmd},")))
            .unwrap();
        let got: Vec<f64> = line
            .split(',')
            .skip(1)
            .map(|v| v.parse().unwrap())
            .collect();
        for (g, want) in got.iter().zip([median(times), lo, hi]) {
            assert!((g - want).abs() < 1e-9, "{cmd}: {line}");
        }
    }
}

#[test]
fn strip_chart_draws_one_dot_per_run_and_marks_the_median() {
    let html = built_page();
    let fig = figures(&html)[2];
    let d = Drawing::of(fig);
    let runs = runs();
    let mut dots: Vec<(String, f64)> = d
        .classed("chart-run")
        .map(|n| {
            let x: f64 = n.attribute("cx").unwrap().parse().unwrap();
            let y: f64 = n.attribute("cy").unwrap().parse().unwrap();
            (d.category_at(x), y)
        })
        .collect();
    let medians: Vec<(String, f64)> = d
        .classed("chart-median")
        .map(|n| {
            let p = path_numbers(n.attribute("d").unwrap());
            (d.category_at((p[0] + p[2]) / 2.0), p[1])
        })
        .collect();
    for (cmd, times) in &runs {
        let mut ys: Vec<f64> = dots
            .iter()
            .filter(|(c, _)| c == cmd)
            .map(|(_, y)| *y)
            .collect();
        assert_eq!(ys.len(), times.len(), "{cmd}: one dot per run");
        // Every run at its own height.
        let mut want: Vec<f64> = times.iter().map(|t| d.y(*t)).collect();
        ys.sort_by(f64::total_cmp);
        want.sort_by(f64::total_cmp);
        for (y, w) in ys.iter().zip(&want) {
            assert!((y - w).abs() < 0.2, "{cmd}: dot at {y}, run at {w}");
        }
        let m: Vec<f64> = medians
            .iter()
            .filter(|(c, _)| c == cmd)
            .map(|(_, y)| *y)
            .collect();
        assert_eq!(m.len(), 1, "{cmd}: one median mark");
        assert!((m[0] - d.y(median(times))).abs() < 0.2, "{cmd}: median");
        // The data table lists every run.
        let listed: Vec<String> = times.iter().map(|t| format!("{t:.3}")).collect();
        assert!(fig.contains(&listed.join("; ")), "{cmd}: {listed:?}");
    }
    dots.retain(|(c, _)| !runs.iter().any(|(r, _)| r == c));
    assert!(dots.is_empty());
    let n: usize = runs.iter().map(|(_, t)| t.len()).sum();
    assert!(
        fig.contains(&format!("Each dot is one run ({n} in all)")),
        "{fig}"
    );
    // The narrow drawing has every dot too.
    assert_eq!(svgs(fig)[1].matches("class=\"chart-run\"").count(), n);
}

#[test]
fn whiskers_past_the_set_maximum_grow_the_axis() {
    let html = built_page();
    let fig = figures(&html)[1];
    let top = runs()
        .iter()
        .map(|(_, t)| lo_hi(t).1)
        .fold(f64::NEG_INFINITY, f64::max);
    assert!(top > 2.0, "the fixture's slowest run passes the set max");
    for svg in svgs(fig) {
        let d = Drawing::of_any(svg);
        assert!(
            d.top_tick() >= top,
            "axis ends at {} below {top}",
            d.top_tick()
        );
    }
    assert!(
        fig.contains("reaches past the chart&#39;s set maximum of 2"),
        "{fig}"
    );
}

impl<'a> Drawing<'a> {
    /// Either drawing: only its ticks are read.
    fn of_any(svg: &'a str) -> Drawing<'a> {
        Drawing {
            doc: roxmltree::Document::parse(svg).unwrap(),
            a: 0.0,
            b: 0.0,
        }
    }
}

#[test]
fn line_whiskers_stand_apart_and_labels_avoid_them() {
    let html = built_page();
    let fig = figures(&html)[3];
    let d = Drawing::of(fig);
    let paths: Vec<Vec<f64>> = d
        .classed("chart-whisker series")
        .map(|n| path_numbers(n.attribute("d").unwrap()))
        .collect();
    assert_eq!(paths.len(), 6, "two series, three categories");
    for (i, p) in paths.iter().enumerate() {
        for q in &paths[i + 1..] {
            assert!(
                (p[0] - q[0]).abs() >= 1.0,
                "two whiskers on one x: {p:?} {q:?}"
            );
        }
    }
    // No value label's box (as the chart estimates text) crosses a whisker.
    for t in d.classed("chart-value") {
        let x: f64 = t.attribute("x").unwrap().parse().unwrap();
        let y: f64 = t.attribute("y").unwrap().parse().unwrap();
        let f: f64 = t.attribute("font-size").unwrap().parse().unwrap();
        let half = t.text().unwrap().chars().count() as f64 * 0.64 * f / 2.0;
        for p in &paths {
            let (wx, top, bottom) = (p[0], p[1], p[2]);
            let crosses = (wx - x).abs() < half && y > top && y - f < bottom;
            assert!(!crosses, "label {:?} over a whisker {p:?}", t.text());
        }
    }
}

/// A build refused as bad input: exit 2, no panic, no page; its message.
fn refused(page: &str) -> String {
    let dir = campaign(page);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!out.join("gzip-levels/index.html").exists());
    err
}

#[test]
fn half_an_interval_or_one_upside_down_is_refused() {
    let one_end = CHARTS.replacen(", \"high\": \"max(times)\"", "", 1);
    let err = refused(&one_end);
    assert!(err.contains("index.md:3:1"), "{err}");
    assert!(err.contains("give both `low` and `high`"), "{err}");

    let upside_down = CHARTS.replacen(
        "\"low\": \"min(times)\", \"high\": \"max(times)\"",
        "\"low\": \"max(times)\", \"high\": \"min(times)\"",
        1,
    );
    let err = refused(&upside_down);
    assert!(err.contains("index.md"), "{err}");
    assert!(err.contains("must not be above `high`"), "{err}");

    let strip_with_ends = CHARTS.replacen(
        "{ \"field\": \"times\", \"name\": \"gzip\" }",
        "{ \"field\": \"times\", \"name\": \"gzip\", \"low\": \"min(times)\", \"high\": \"max(times)\" }",
        1,
    );
    let err = refused(&strip_with_ends);
    assert!(err.contains("draws the runs' spread itself"), "{err}");
}

#[test]
fn box_plot_spans_the_quartiles_with_whiskers_to_the_extremes() {
    let html = built_page();
    let fig = figures(&html)[4];
    let d = Drawing::of(fig);
    let runs = runs();
    let boxes: Vec<_> = d.classed("chart-box").collect();
    assert_eq!(boxes.len(), runs.len());
    for b in boxes {
        let num = |a: &str| b.attribute(a).unwrap().parse::<f64>().unwrap();
        let (x, y, h) = (num("x") + num("width") / 2.0, num("y"), num("height"));
        let cat = d.category_at(x);
        let (_, times) = runs.iter().find(|(c, _)| *c == cat).unwrap();
        assert!((y - d.y(percentile(times, 75.0))).abs() < 0.2, "{cat}: q3");
        assert!(
            (y + h - d.y(percentile(times, 25.0))).abs() < 0.25,
            "{cat}: q1"
        );
    }
    for w in d.classed("chart-whisker series") {
        let p = path_numbers(w.attribute("d").unwrap());
        let (_, times) = runs
            .iter()
            .find(|(c, _)| *c == d.category_at(p[0]))
            .unwrap();
        let (lo, hi) = lo_hi(times);
        // M x y_hi V y_q3 M x y_q1 V y_lo ...
        assert!(
            (p[1] - d.y(hi)).abs() < 0.2 && (p[5] - d.y(lo)).abs() < 0.2,
            "{p:?}"
        );
    }
    for (cmd, times) in &runs {
        let q = format!(
            "{:.3}–{:.3}",
            percentile(times, 25.0),
            percentile(times, 75.0)
        );
        assert!(
            fig.contains(&format!("<th scope=\"row\">{cmd}</th>")),
            "{cmd}"
        );
        assert!(fig.contains(&q), "{cmd}: quartiles {q} in the data table");
    }
    assert!(
        fig.contains("whiskers reach the lowest and highest run"),
        "{fig}"
    );
}
