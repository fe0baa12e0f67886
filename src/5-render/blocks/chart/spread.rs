//! Uncertainty in charts: interval whiskers on bars and lines (a series'
//! `low` and `high`, field names or expressions such as `ci_low(times)`),
//! and strip charts, which draw every per-run value of a list field as a
//! dot with the median marked.
//!
//! Whiskers, dots and median marks are written here as SVG elements with
//! classes, so the stylesheet colours them for light, dark and print, and
//! so a reader (or a test) can find them. Dots are placed without
//! randomness: sorted by value, each takes the nearest free offset from
//! its slot's centre, so the same data always give the same drawing.

use super::{
    at_record, escape, plottable, series_value, ChartSpec, ChartType, Data, Expr, Format, Limits,
    Plot, Problem, Ref, Scalar, SeriesSpec, PALETTE,
};
use crate::expr::{median, percentile, EvalError};
use serde_json::Value;

/// Radius of a strip chart's dot, in SVG units.
const DOT_R: f64 = 4.0;

/// The spec's spread fields make sense together: both ends or neither,
/// each a valid expression, and none on a strip chart (its dots are the
/// spread).
pub(super) fn check(spec: &ChartSpec) -> Result<(), String> {
    for s in &spec.series {
        if s.field.contains('(') {
            Expr::parse(&s.field)
                .map_err(|why| format!("chart `{}`: series `{}`: {why}", spec.title, s.name))?;
        }
        match (&s.low, &s.high) {
            (None, None) => {}
            (Some(low), Some(high)) => {
                if spec.chart_type.per_run() {
                    return Err(format!(
                        "chart `{}`: series `{}`: a strip chart or box plot draws the runs' spread itself, so it takes no `low` or `high`",
                        spec.title, s.name
                    ));
                }
                for (end, e) in [("low", low), ("high", high)] {
                    Expr::parse(e).map_err(|why| {
                        format!("chart `{}`: series `{}` {end}: {why}", spec.title, s.name)
                    })?;
                }
            }
            _ => {
                return Err(format!(
                "chart `{}`: series `{}` names one end of its interval: give both `low` and `high`",
                spec.title, s.name
            ))
            }
        }
    }
    Ok(())
}

/// Every whisker end and sample: the axis must hold them.
pub(super) fn extent(data: &Data) -> impl Iterator<Item = f64> + Clone + '_ {
    let ends = data
        .intervals
        .iter()
        .flatten()
        .flatten()
        .flat_map(|(a, b)| [*a, *b]);
    ends.chain(data.samples.iter().flatten().flatten().copied())
}

/// The spec's limits, without any a whisker or sample passes: the axis
/// grows to hold the spread rather than cut a whisker short.
pub(super) fn limits(spec: &ChartSpec, data: &Data) -> Limits {
    let lo = extent(data).fold(f64::INFINITY, f64::min);
    let hi = extent(data).fold(f64::NEG_INFINITY, f64::max);
    Limits {
        min: spec.y.min.filter(|m| *m <= lo),
        max: spec.y.max.filter(|m| *m >= hi),
    }
}

/// One record's numbers for one series, and what its download row holds.
pub(super) struct Cell {
    pub(super) value: Option<f64>,
    pub(super) interval: Option<(f64, f64)>,
    pub(super) samples: Vec<f64>,
    pub(super) export: Vec<Scalar>,
}

/// The download's columns: the category, then each series' value and
/// its interval's ends, or a strip chart's median and runs.
pub(super) fn columns(spec: &ChartSpec) -> Vec<String> {
    let mut cols = vec![spec.x.label.clone()];
    for s in &spec.series {
        if spec.chart_type.per_run() {
            cols.push(format!("{} median", s.name));
            cols.push(format!("{} runs", s.name));
        } else {
            cols.push(s.name.clone());
            if s.low.is_some() {
                cols.push(format!("{} low", s.name));
                cols.push(format!("{} high", s.name));
            }
        }
    }
    cols
}

pub(super) fn read_cell(
    spec: &ChartSpec,
    s: &SeriesSpec,
    rec: &Value,
    label: &str,
) -> Result<Cell, Problem> {
    if spec.chart_type.per_run() {
        return strip_cell(spec, s, rec, label);
    }
    let (value, shown) = series_value(spec, s, rec, label)?;
    let mut cell = Cell {
        value,
        interval: None,
        samples: Vec::new(),
        export: vec![shown],
    };
    if let (Some(low), Some(high)) = (&s.low, &s.high) {
        let lo = end(spec, s, low, rec, label)?;
        let hi = end(spec, s, high, rec, label)?;
        if let (Some(l), Some(h)) = (&lo, &hi) {
            let (l, h) = (l.0, h.0);
            if l > h {
                return Err(Problem::Here(format!(
                    "chart `{}`: record {label}: series `{}` interval runs from {l} (`{low}`) down to {h} (`{high}`): `low` must not be above `high`",
                    spec.title, s.name
                )));
            }
            cell.interval = value.map(|_| (l, h));
        }
        for e in [lo, hi] {
            cell.export.push(e.map_or(Scalar::Null, |e| e.1));
        }
    }
    Ok(cell)
}

/// One end of an interval: `None` where the data hold null (a failed cell).
fn end(
    spec: &ChartSpec,
    s: &SeriesSpec,
    expr: &str,
    rec: &Value,
    label: &str,
) -> Result<Option<(f64, Scalar)>, Problem> {
    let e = Expr::parse(expr).map_err(Problem::Here)?;
    match e.eval(rec) {
        Ok(Scalar::Null) | Err(EvalError::Null(_)) => Ok(None),
        Ok(v) => Ok(Some((plottable(spec, s, expr, &v, label)?, v))),
        Err(e) => Err(at_record(label, e)),
    }
}

/// A strip chart's cell: every run of the list field (nulls, failed runs,
/// left out) and their median.
fn strip_cell(spec: &ChartSpec, s: &SeriesSpec, rec: &Value, label: &str) -> Result<Cell, Problem> {
    let runs = match Expr::Value(Ref::new(&s.field)).eval_list(rec) {
        Ok(runs) => runs,
        Err(EvalError::Missing(_)) => Vec::new(),
        Err(e) => return Err(at_record(label, e)),
    };
    let mut samples = Vec::new();
    for v in runs.iter().filter(|v| **v != Scalar::Null) {
        samples.push(plottable(spec, s, &s.field, v, label)?);
    }
    let value = (!samples.is_empty()).then(|| median(&samples));
    let shown: Vec<String> = runs.iter().map(|v| v.to_string()).collect();
    Ok(Cell {
        value,
        interval: None,
        export: vec![
            value.map_or(Scalar::Null, Scalar::computed),
            Scalar::Text(shown.join(" ")),
        ],
        samples,
    })
}

/// Where a value label may go: above `top`, or (lines) below `bottom`.
#[derive(Clone, Copy)]
pub(super) struct Reach {
    pub(super) x: f64,
    pub(super) top: f64,
    pub(super) bottom: f64,
}

/// Whiskers with caps for every value that has an interval. Each is an
/// obstacle for value labels, and stretches its point's reach so the
/// label goes past the cap, not through it.
pub(super) fn whiskers(
    plot: &Plot,
    kind: ChartType,
    points: &mut [Vec<Option<Reach>>],
    shapes: &mut Vec<super::Box2>,
) -> String {
    let (fr, axis, data) = (plot.fr, plot.axis, plot.data);
    let n = data.categories.len();
    let bar = fr.spacing(n) * 0.8 / data.values.len() as f64;
    let cap = match kind {
        ChartType::Bar => (bar * 0.3).clamp(2.0, 8.0),
        _ => 6.0,
    };
    // Lines share an x per category: several series' whiskers stand
    // side by side, a cap's width apart, instead of on top of each other.
    let with = data
        .intervals
        .iter()
        .filter(|iv| iv.iter().any(Option::is_some))
        .count();
    let step = if kind == ChartType::Bar || with < 2 {
        0.0
    } else {
        2.0 * cap + 2.0
    };
    let mut out = String::new();
    for (s, series) in points.iter_mut().enumerate() {
        let dx = (s as f64 - (data.values.len() - 1) as f64 / 2.0) * step;
        for (p, iv) in series.iter_mut().zip(&data.intervals[s]) {
            let (Some(p), Some((lo, hi))) = (p.as_mut(), iv) else {
                continue;
            };
            let x = p.x + dx;
            let (y_hi, y_lo) = (fr.py(axis, *hi), fr.py(axis, *lo));
            // Bars' whiskers cross a coloured bar: the text colour stands
            // out on every bar; lines' take their series' colour.
            let paint = match kind {
                ChartType::Bar => "class=\"chart-whisker\" stroke=\"#222222\"".to_string(),
                _ => format!("class=\"chart-whisker series\" stroke=\"{}\"", hex(s)),
            };
            out.push_str(&format!(
                "<path {paint} fill=\"none\" stroke-width=\"1.5\" d=\"M{x:.1} {y_hi:.1}V{y_lo:.1}M{a:.1} {y_hi:.1}H{b:.1}M{a:.1} {y_lo:.1}H{b:.1}\"/>\n",
                a = x - cap,
                b = x + cap,
            ));
            shapes.push(super::Box2 {
                x0: x - cap,
                y0: y_hi - 1.0,
                x1: x + cap,
                y1: y_lo + 1.0,
            });
            p.top = p.top.min(y_hi - 1.0);
            p.bottom = p.bottom.max(y_lo + 1.0);
        }
    }
    out
}

/// Series `s`'s colour as SVG writes it.
fn hex(s: usize) -> String {
    let c = PALETTE[s];
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// The pixel span of series `s` in category `i`, from `from` to `to` of
/// its share of the group (as bars are laid out).
fn slot(plot: &Plot, s: usize, i: usize, from: f64, to: f64) -> (f64, f64) {
    let n = plot.data.categories.len();
    let width = 0.8 / plot.data.values.len() as f64;
    let at = |k: f64| plot.fr.px(i as f64 + 0.1 + (s as f64 + k) * width, n);
    (at(from), at(to))
}

/// Series `s` of a strip chart: a dot per run, filled for the first,
/// third and fifth series and hollow for the others (apart in greyscale),
/// and a line across the slot at each median.
pub(super) fn strip(plot: &Plot, s: usize) -> Result<String, Box<dyn std::error::Error>> {
    let (fr, axis, data) = (plot.fr, plot.axis, plot.data);
    let color = hex(s);
    let paint = if s % 2 == 0 {
        format!("fill=\"{color}\"")
    } else {
        format!("fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"")
    };
    let mut out = String::new();
    for (i, runs) in data.samples[s].iter().enumerate() {
        let (x0, x1) = slot(plot, s, i, 0.0, 0.92);
        let mid = (x0 + x1) / 2.0;
        let Some(m) = data.values[s][i] else {
            plot.missing(mid)?;
            continue;
        };
        // The median first, so the dots stay whole on top of it.
        let y = fr.py(axis, m);
        out.push_str(&format!(
            "<path class=\"chart-median\" stroke=\"#222222\" fill=\"none\" stroke-width=\"2.5\" d=\"M{x0:.1} {y:.1}H{x1:.1}\"/>\n"
        ));
        let ys: Vec<f64> = runs.iter().map(|v| fr.py(axis, *v)).collect();
        for (x, y) in dodge(&ys, mid, (x1 - x0) / 2.0) {
            out.push_str(&format!(
                "<circle class=\"chart-run\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{DOT_R}\" {paint}/>\n"
            ));
        }
    }
    Ok(out)
}

/// The 25th percentile, median and 75th percentile, by `p()`'s method.
fn quartiles(runs: &[f64]) -> Option<(f64, f64, f64)> {
    let q = |p| percentile(runs, p).ok();
    Some((q(25.0)?, q(50.0)?, q(75.0)?))
}

/// Series `s` as box plots: a box from the 25th to the 75th percentile,
/// a line at the median, whiskers with caps to the lowest and highest run.
pub(super) fn boxes(plot: &Plot, s: usize) -> Result<String, Box<dyn std::error::Error>> {
    let (fr, axis, data) = (plot.fr, plot.axis, plot.data);
    let color = hex(s);
    let mut out = String::new();
    for (i, runs) in data.samples[s].iter().enumerate() {
        let (x0, x1) = slot(plot, s, i, 0.15, 0.77);
        let mid = (x0 + x1) / 2.0;
        let Some((q1, m, q3)) = quartiles(runs) else {
            plot.missing(mid)?;
            continue;
        };
        let (lo, hi) = runs
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(*v), b.max(*v))
            });
        let [y_lo, y_q1, y_m, y_q3, y_hi] = [lo, q1, m, q3, hi].map(|v| fr.py(axis, v));
        let cap = (x1 - x0) / 4.0;
        out.push_str(&format!(
            "<path class=\"chart-whisker series\" stroke=\"{color}\" fill=\"none\" stroke-width=\"1.5\" d=\"M{mid:.1} {y_hi:.1}V{y_q3:.1}M{mid:.1} {y_q1:.1}V{y_lo:.1}M{a:.1} {y_hi:.1}H{b:.1}M{a:.1} {y_lo:.1}H{b:.1}\"/>\n",
            a = mid - cap,
            b = mid + cap,
        ));
        out.push_str(&format!(
            "<rect class=\"chart-box\" x=\"{x0:.1}\" y=\"{y_q3:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{color}\" fill-opacity=\"0.35\" stroke=\"{color}\" stroke-width=\"1.5\"/>\n",
            x1 - x0,
            (y_q1 - y_q3).max(0.0),
        ));
        out.push_str(&format!(
            "<path class=\"chart-median\" stroke=\"#222222\" fill=\"none\" stroke-width=\"2.5\" d=\"M{x0:.1} {y_m:.1}H{x1:.1}\"/>\n"
        ));
    }
    Ok(out)
}

/// Dots at heights `ys` around `mid`: sorted by height, each takes the
/// first of the offsets 0, +d, −d, +2d, ... that keeps it clear of the
/// dots already placed, within `half` of the centre (or the centre, when
/// the slot is full: the data table still lists the run).
fn dodge(ys: &[f64], mid: f64, half: f64) -> Vec<(f64, f64)> {
    let mut order: Vec<f64> = ys.to_vec();
    order.sort_by(f64::total_cmp);
    let step = DOT_R * 2.0 + 1.0;
    let max_k = ((half - DOT_R) / step).floor().max(0.0) as i32;
    let mut placed: Vec<(f64, f64)> = Vec::new();
    for y in order {
        let free = (0..=max_k)
            .flat_map(|k| if k == 0 { vec![0] } else { vec![k, -k] })
            .map(|k| mid + f64::from(k) * step)
            .find(|x| {
                placed
                    .iter()
                    .all(|(px, py)| (px - x).hypot(py - y) >= DOT_R * 2.0)
            });
        placed.push((free.unwrap_or(mid), y));
    }
    placed
}

/// What the description adds about the spread.
pub(super) fn describe(spec: &ChartSpec, data: &Data) -> String {
    let mut out = String::new();
    let runs = data.samples.iter().flatten().map(Vec::len).sum::<usize>();
    match spec.chart_type {
        ChartType::Strip => out.push_str(&format!(
            " Each dot is one run ({runs} in all); a line across each group marks its median."
        )),
        ChartType::Box => out.push_str(&format!(
            " Each box runs from the 25th to the 75th percentile of its runs ({runs} in all; percentiles as p(25, …) and p(75, …) compute them), a line across it marks the median, and whiskers reach the lowest and highest run."
        )),
        _ => {}
    }
    let named: Vec<String> = spec
        .series
        .iter()
        .filter_map(|s| match (&s.low, &s.high) {
            (Some(l), Some(h)) => Some(format!("{}: {l} to {h}", s.name)),
            _ => None,
        })
        .collect();
    if !named.is_empty() {
        out.push_str(&format!(
            " Whiskers mark each value's interval ({}).",
            named.join("; ")
        ));
    }
    let grown = limits(spec, data);
    if let Some(m) = spec.y.max.filter(|_| grown.max.is_none()) {
        out.push_str(&format!(
            " The y axis reaches past the chart's set maximum of {} to hold every whisker and run.",
            super::num(m)
        ));
    }
    out
}

/// The data table's header cells for one series.
pub(super) fn headers(spec: &ChartSpec, s: &SeriesSpec) -> String {
    let th = |t: &str| format!("<th scope=\"col\" class=\"num\">{}</th>", escape(t));
    match (spec.chart_type, &s.low) {
        (ChartType::Strip, _) => {
            th(&format!("{} median", s.name)) + &th(&format!("{}, every run", s.name))
        }
        (ChartType::Box, _) => {
            th(&format!("{} median", s.name))
                + &th(&format!("{} quartiles", s.name))
                + &th(&format!("{}, every run", s.name))
        }
        (_, Some(_)) => th(&s.name) + &th(&format!("{} interval", s.name)),
        _ => th(&s.name),
    }
}

/// The data table's cells for series `s` at category `i`: the value, and
/// its interval as `low–high` or every run in the data's order.
pub(super) fn cells(spec: &ChartSpec, data: &Data, s: usize, i: usize, fmt: &Format) -> String {
    let td = |t: &str| format!("<td class=\"num\">{}</td>", escape(t));
    let missing = "<td class=\"num missing\">missing</td>";
    let mut out = match data.values[s][i] {
        Some(v) => td(&fmt.apply(v)),
        None => missing.to_string(),
    };
    if spec.chart_type == ChartType::Box {
        out.push_str(&match quartiles(&data.samples[s][i]) {
            Some((q1, _, q3)) => td(&format!("{}–{}", fmt.apply(q1), fmt.apply(q3))),
            None => missing.to_string(),
        });
    }
    if spec.chart_type.per_run() {
        let runs: Vec<String> = data.samples[s][i].iter().map(|v| fmt.apply(*v)).collect();
        out.push_str(&td(&runs.join("; ")));
    } else if spec.series[s].low.is_some() {
        out.push_str(&match data.intervals[s][i] {
            Some((l, h)) => td(&format!("{}–{}", fmt.apply(l), fmt.apply(h))),
            None => missing.to_string(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dodged_dots_never_overlap_and_stay_in_their_slot() {
        let ys = [100.0, 101.0, 102.0, 150.0, 100.5];
        let dots = dodge(&ys, 50.0, 30.0);
        assert_eq!(dots.len(), ys.len());
        for (i, a) in dots.iter().enumerate() {
            assert!((a.0 - 50.0).abs() <= 30.0 - DOT_R);
            for b in &dots[i + 1..] {
                assert!((a.0 - b.0).hypot(a.1 - b.1) >= DOT_R * 2.0, "{a:?} {b:?}");
            }
        }
        // The lone dot far from the others sits on the centre.
        assert!(dots.contains(&(50.0, 150.0)));
        assert_eq!(dots, dodge(&ys, 50.0, 30.0));
    }
}
