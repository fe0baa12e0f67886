//! `chart` blocks: grouped bars or lines over equally spaced categories.
//! Shapes are drawn with plotters (SVG backend only, no system fonts); the
//! text is written here, so it carries classes the stylesheet colours for
//! light, dark and print, and so labels can be measured and kept apart.
//! Each chart is drawn twice, for a wide and a narrow box (the stylesheet
//! shows one), so text keeps a readable size on a phone instead of shrinking.
//! Uncertainty (interval whiskers, strip charts of per-run values) is in
//! [`spread`].

mod spread;

use super::export::{Download, Export};
use super::{at_record, Ctx, Problem};
use crate::data::Source;
use crate::expr::{EvalError, Expr, Format, Ref, Scalar};
use crate::html::escape;
use plotters::prelude::*;
use serde::Deserialize;
use std::sync::Arc;

/// Okabe-Ito: colour-blind safe, and alternating light and dark so two arms
/// stay apart in greyscale.
const PALETTE: [RGBColor; 6] = [
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0xD5, 0x5E, 0x00),
];
/// Grid and axis strokes; the stylesheet recolours them by these values
/// (`[stroke="#DDDDDD"]`) for the dark scheme.
const GRID: RGBColor = RGBColor(0xDD, 0xDD, 0xDD);
const AXIS: RGBColor = RGBColor(0x88, 0x88, 0x88);

#[derive(Debug, Deserialize, Default, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ChartType {
    #[default]
    Bar,
    Line,
    /// Every per-run value of a list field as a dot, the median marked.
    Strip,
    /// The same values as a box (quartiles), median and min–max whiskers.
    Box,
}

impl ChartType {
    /// Draws a list field's per-run values rather than one value a record.
    fn per_run(self) -> bool {
        matches!(self, ChartType::Strip | ChartType::Box)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChartSpec {
    pub(crate) title: String,
    #[serde(rename = "type", default)]
    pub(crate) chart_type: ChartType,
    pub(crate) source: String,
    #[serde(default)]
    pub(crate) pointer: Option<String>,
    /// The data file's format, when its content is ambiguous.
    #[serde(default)]
    pub(crate) format: Option<String>,
    pub(crate) x: XAxis,
    pub(crate) y: YAxis,
    pub(crate) series: Vec<SeriesSpec>,
    #[serde(default)]
    pub(crate) caption: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct XAxis {
    pub(crate) field: String,
    pub(crate) label: String,
    #[serde(default)]
    pub(crate) format: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct YAxis {
    pub(crate) label: String,
    #[serde(default)]
    pub(crate) min: Option<f64>,
    #[serde(default)]
    pub(crate) max: Option<f64>,
    /// Format of value labels and the data table.
    #[serde(default)]
    pub(crate) format: Option<String>,
    #[serde(default)]
    pub(crate) scale: Scale,
}

/// How values map to height: `"linear"` (the default) or `"log"` (base 10,
/// for values spanning decades; every value must be above zero).
#[derive(Debug, Deserialize, Default, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Scale {
    #[default]
    Linear,
    Log,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SeriesSpec {
    pub(crate) field: String,
    pub(crate) name: String,
    /// The interval's ends (field names or expressions per record, such
    /// as `ci_low(times)`), drawn as whiskers.
    #[serde(default)]
    pub(crate) low: Option<String>,
    #[serde(default)]
    pub(crate) high: Option<String>,
}

impl ChartSpec {
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.series.is_empty() {
            return Err("a chart needs at least one series".into());
        }
        if self.series.len() > PALETTE.len() {
            return Err(format!("a chart takes at most {} series", PALETTE.len()));
        }
        for f in [&self.x.format, &self.y.format].into_iter().flatten() {
            Format::parse(f)?;
        }
        spread::check(self)?;
        for (name, v) in [("min", self.y.min), ("max", self.y.max)] {
            if let Some(v) = v.filter(|v| !within_axis(*v)) {
                return Err(format!(
                    "chart y range: {name} {} is beyond the ±{MAX_AXIS:e} a chart can lay out",
                    num(v)
                ));
            }
        }
        if let (Some(lo), Some(hi)) = (self.y.min, self.y.max) {
            if lo >= hi {
                return Err(format!(
                    "chart y range: min {} is not below max {}",
                    num(lo),
                    num(hi)
                ));
            }
            check_span(lo, hi)?;
        }
        match (self.y.scale, self.y.min) {
            (Scale::Log, _) => {
                if let Some(v) = [self.y.min, self.y.max]
                    .into_iter()
                    .flatten()
                    .find(|v| *v <= 0.0)
                {
                    return Err(format!(
                        "chart `{}`: a log-scale y axis needs limits above zero, found {}",
                        self.title,
                        num(v)
                    ));
                }
            }
            // Bar length is the value: a bar cut off above zero misleads.
            (Scale::Linear, Some(m)) if m > 0.0 && self.chart_type == ChartType::Bar => {
                return Err(format!(
                    "chart `{}`: a bar chart's y axis starts at zero; drop `min` ({}) or draw a line chart",
                    self.title,
                    num(m)
                ));
            }
            _ => {}
        }
        Ok(())
    }
}

/// The largest magnitude a y axis may reach. Beyond it (and for ranges
/// whose width overflows) the tick layout loops for ever or draws nothing
/// readable; benchmark numbers stay far below it.
const MAX_AXIS: f64 = 1e18;

fn within_axis(v: f64) -> bool {
    v.is_finite() && v.abs() <= MAX_AXIS
}

/// A number for a message: huge and tiny ones in exponent form, not 300 digits.
fn num(v: f64) -> String {
    if v != 0.0 && !(1e-6..1e9).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// A range too narrow for its magnitude has ticks that all print the
/// same label, and a step that float arithmetic cannot advance.
fn check_span(lo: f64, hi: f64) -> Result<(), String> {
    if hi - lo < lo.abs().max(hi.abs()) * 1e-9 {
        return Err(format!(
            "chart y range: {} to {} is too narrow for its magnitude to lay out ticks",
            num(lo),
            num(hi)
        ));
    }
    Ok(())
}

/// The numbers a chart shows, taken from the records.
struct Data {
    categories: Vec<String>,
    /// values[series][category]; `None` where the record has no value
    /// (a failed cell): drawn as missing, not an error. A strip chart's
    /// value is the median of its samples.
    values: Vec<Vec<Option<f64>>>,
    /// intervals[series][category]: a whisker's (low, high), where the
    /// series names an interval and the record has both ends.
    intervals: Vec<Vec<Option<(f64, f64)>>>,
    /// samples[series][category]: a strip chart's per-run values, in the
    /// data's order; empty for other charts.
    samples: Vec<Vec<Vec<f64>>>,
    /// The x value and every series value of each record, unformatted.
    export: Export,
}

impl Data {
    /// Every number drawn: values, whisker ends and samples.
    fn present(&self) -> impl Iterator<Item = f64> + Clone + '_ {
        self.values
            .iter()
            .flatten()
            .flatten()
            .copied()
            .chain(spread::extent(self))
    }

    fn missing(&self) -> usize {
        self.values.iter().flatten().filter(|v| v.is_none()).count()
    }
}

/// The spec with the y label naming the series' unit, when a CSV header
/// gave every series field the same one (`power.draw [W]`) and the label
/// does not already hold it.
fn with_unit(spec: &ChartSpec, source: &Source) -> Option<ChartSpec> {
    let mut units = spec.series.iter().map(|s| source.unit(&s.field));
    let unit = units.next()??;
    if units.any(|u| u != Some(unit)) || spec.y.label.contains(unit) {
        return None;
    }
    let mut labelled = spec.clone();
    labelled.y.label = format!("{} ({unit})", spec.y.label);
    Some(labelled)
}

fn collect(spec: &ChartSpec, source: &Source) -> Result<Data, Problem> {
    let records = source.records(spec.pointer.as_deref())?;
    if records.items.is_empty() {
        return Err(Problem::Here(format!(
            "chart `{}` has no records to draw",
            spec.title
        )));
    }
    let x_fmt = spec.x.format.as_deref().map(Format::parse).transpose()?;
    let x = Expr::Value(Ref::new(&spec.x.field));
    let n = spec.series.len();
    let mut data = Data {
        categories: Vec::new(),
        values: vec![Vec::new(); n],
        intervals: vec![Vec::new(); n],
        samples: vec![Vec::new(); n],
        export: Export::new(spread::columns(spec)),
    };
    for (rec, label) in &records.items {
        data.categories.push(
            x.render(rec, x_fmt.as_ref())
                .map_err(|e| at_record(label, e))?
                .to_string(),
        );
        let mut row = vec![x.eval(rec).map_err(|e| at_record(label, e))?];
        for (i, s) in spec.series.iter().enumerate() {
            let cell = spread::read_cell(spec, s, rec, label)?;
            data.values[i].push(cell.value);
            data.intervals[i].push(cell.interval);
            data.samples[i].push(cell.samples);
            row.extend(cell.export);
        }
        data.export.rows.push(row);
    }
    for (s, series) in spec.series.iter().zip(&data.values) {
        if series.iter().all(Option::is_none) {
            return Err(Problem::Here(format!(
                "chart `{}`: series `{}` has no value in any record (field `{}`)",
                spec.title, s.name, s.field
            )));
        }
    }
    Ok(data)
}

/// One record's value of one series: a number, or `None` when the field
/// is absent or null. Text, and numbers the axis cannot take, are errors.
fn series_value(
    spec: &ChartSpec,
    s: &SeriesSpec,
    rec: &serde_json::Value,
    label: &str,
) -> Result<(Option<f64>, Scalar), Problem> {
    let v = match series_expr(s)?.eval(rec) {
        Ok(Scalar::Null) | Err(EvalError::Missing(_) | EvalError::Null(_)) => {
            return Ok((None, Scalar::Null))
        }
        Ok(v) => v,
        Err(e) => return Err(at_record(label, e)),
    };
    let n = plottable(spec, s, &s.field, &v, label)?;
    Ok((Some(n), v))
}

/// A series' value: a field (or pointer), or an expression such as
/// `median(times)` when it calls a function.
fn series_expr(s: &SeriesSpec) -> Result<Expr, Problem> {
    if s.field.contains('(') {
        Expr::parse(&s.field).map_err(Problem::Here)
    } else {
        Ok(Expr::Value(Ref::new(&s.field)))
    }
}

/// A value the axis can take: a number, within the layout's range, above
/// zero on a log scale. `what` names where it came from.
fn plottable(
    spec: &ChartSpec,
    s: &SeriesSpec,
    what: &str,
    v: &Scalar,
    label: &str,
) -> Result<f64, Problem> {
    let n = v.number().ok_or_else(|| {
        Problem::Here(format!(
            "record {label}: series `{}` needs a number in `{what}`, found {:?}",
            s.name,
            v.to_string()
        ))
    })?;
    if !within_axis(n) {
        return Err(Problem::Here(format!(
            "record {label}: series `{}` value {} in `{what}` is beyond the ±{MAX_AXIS:e} a chart can lay out",
            s.name,
            num(n),
        )));
    }
    if spec.y.scale == Scale::Log && n <= 0.0 {
        return Err(Problem::Here(format!(
            "chart `{}`: record {label}: series `{}` value {} in `{what}` cannot go on a log scale, which needs values above zero",
            spec.title,
            s.name,
            num(n),
        )));
    }
    Ok(n)
}

pub(super) fn render(
    spec: &ChartSpec,
    ctx: &Ctx,
) -> Result<(String, Arc<Source>, Vec<Download>), Problem> {
    let source = ctx.store.load_as(&spec.source, spec.format.as_deref())?;
    let labelled = with_unit(spec, &source);
    let spec = labelled.as_ref().unwrap_or(spec);
    let data = collect(spec, &source)?;
    let y_fmt = spec
        .y
        .format
        .as_deref()
        .map(Format::parse)
        .transpose()?
        .unwrap_or_default();
    let mut svgs = String::new();
    for layout in [&WIDE, &NARROW] {
        let axis = Axis::new(spec, &data, layout.ticks).map_err(Problem::Here)?;
        let svg = draw(spec, &data, &axis, &y_fmt, layout).map_err(|e| {
            Problem::Here(format!("chart `{}` could not be drawn: {e}", spec.title))
        })?;
        svgs.push_str(&annotate(&svg, spec, &data, &ctx.chart_id, layout));
    }

    let mut html = format!(
        "<figure class=\"block chart\" id=\"{}\"><figcaption><span class=\"chart-title\">{}</span>",
        ctx.chart_id,
        escape(&spec.title)
    );
    if let Some(c) = &spec.caption {
        html.push_str(&format!(
            " <span class=\"chart-caption\">{}</span>",
            escape(c)
        ));
    }
    html.push_str("</figcaption>");
    // The one legend, above the plot: it can never cover a bar or a label.
    html.push_str(&legend(spec));
    html.push_str("<div class=\"chart-frame\">");
    html.push_str(&svgs);
    html.push_str("</div>");
    html.push_str(&data_table(spec, &data, &y_fmt));
    let (links, downloads) = data.export.publish(&ctx.export_stem, "chart");
    html.push_str(&links);
    html.push_str(&ctx.source_note(&source));
    html.push_str("</figure>");
    Ok((html, source, downloads))
}

/// The y limits the spec sets, less any the whiskers or samples pass.
#[derive(Clone, Copy)]
struct Limits {
    min: Option<f64>,
    max: Option<f64>,
}

/// The y axis: its ends, its ticks and how a value maps to a height.
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    ticks: Vec<f64>,
}

impl Axis {
    fn new(spec: &ChartSpec, data: &Data, target: usize) -> Result<Axis, String> {
        let limits = spread::limits(spec, data);
        let axis = match spec.y.scale {
            Scale::Linear => Axis::linear(spec, limits, data, target),
            Scale::Log => Axis::log(limits, data, target),
        };
        // The range drawn, margins included, is checked again: values
        // inside the limit may still put the top of the axis past it.
        if !within_axis(axis.lo) || !within_axis(axis.hi) {
            return Err(format!(
                "chart `{}`: the y axis would run from {} to {}, beyond the ±{MAX_AXIS:e} a chart can lay out",
                spec.title,
                num(axis.lo),
                num(axis.hi)
            ));
        }
        check_span(axis.lo, axis.hi)?;
        Ok(axis)
    }

    /// Zero is on the axis unless `min` (line charts only) says otherwise;
    /// ends the spec leaves open round out to a whole tick step.
    fn linear(spec: &ChartSpec, limits: Limits, data: &Data, target: usize) -> Axis {
        let all = data.present();
        let dmax = all.clone().fold(f64::NEG_INFINITY, f64::max);
        let dmin = all.fold(f64::INFINITY, f64::min);
        // A strip chart's dots are positions, not lengths: no zero needed.
        let floor = match spec.chart_type {
            ChartType::Strip | ChartType::Box if dmin > 0.0 => {
                (dmin - (dmax - dmin) * 0.12).max(0.0)
            }
            _ => dmin.min(0.0),
        };
        let mut lo = limits.min.unwrap_or(floor);
        // Headroom over the tallest value keeps its label inside the plot.
        let mut hi = limits.max.unwrap_or(if dmax > lo {
            dmax + (dmax - lo) * 0.12
        } else {
            lo + 1.0
        });
        if hi <= lo {
            hi = lo + 1.0;
        }
        let step = nice_step((hi - lo) / target as f64);
        if limits.min.is_none() {
            lo = (lo / step).floor() * step;
        }
        if limits.max.is_none() {
            hi = (hi / step).ceil() * step;
        }
        let first = (lo / step).ceil() as i64;
        let last = (hi / step).floor() as i64;
        // A step from the range keeps this near `target` ticks; the cap
        // guards float edge cases.
        let ticks = (first..=last)
            .take(4 * target + 2)
            .map(|k| round_tick(k as f64 * step))
            .collect();
        Axis {
            lo,
            hi,
            log: false,
            ticks,
        }
    }

    /// Whole decades around the data, ticks at 1, 2 and 5 times each power
    /// of ten while few decades are shown, fewer decades when many are.
    fn log(limits: Limits, data: &Data, target: usize) -> Axis {
        let all = data.present();
        let dmax = all.clone().fold(f64::NEG_INFINITY, f64::max);
        let dmin = all.fold(f64::INFINITY, f64::min);
        let lo = limits.min.unwrap_or(10f64.powf(dmin.log10().floor()));
        let mut hi = limits.max.unwrap_or(10f64.powf(dmax.log10().ceil()));
        if hi <= lo * 1.000_001 {
            hi = lo * 10.0;
        }
        let (p0, p1) = (lo.log10().floor() as i64, hi.log10().ceil() as i64);
        let decades = (p1 - p0).max(1) as usize;
        let every = decades.div_ceil(target).max(1);
        let steps: &[f64] = if decades <= 2 {
            &[1.0, 2.0, 5.0]
        } else {
            &[1.0]
        };
        let mut ticks = Vec::new();
        for p in (p0..=p1).step_by(every) {
            for m in steps {
                let v = m * 10f64.powi(p as i32);
                if v >= lo * 0.999_999 && v <= hi * 1.000_001 {
                    ticks.push(v);
                }
            }
        }
        Axis {
            lo,
            hi,
            log: true,
            ticks,
        }
    }

    /// Where `v` sits between the bottom (0) and the top (1) of the axis.
    fn frac(&self, v: f64) -> f64 {
        let f = if self.log {
            (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        f.clamp(0.0, 1.0)
    }

    /// Where bars grow from: zero, or the bottom when zero is off the axis.
    fn base(&self) -> f64 {
        if self.log {
            self.lo
        } else {
            0f64.clamp(self.lo, self.hi)
        }
    }

    /// What a reader must be told: the axis is not a plain zero-based one.
    fn note(&self) -> Option<String> {
        if self.log {
            Some("Log scale: equal distances are equal ratios".into())
        } else if self.lo > 0.0 {
            Some(format!(
                "The y axis starts at {}, not zero",
                tick_label(self.lo)
            ))
        } else {
            None
        }
    }
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    let e = 10f64.powf(raw.log10().floor());
    let f = raw / e;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * e
}

fn tick_label(v: f64) -> String {
    Format {
        precision: None,
        ..Format::parse(",").unwrap_or_default()
    }
    .apply(round_tick(v))
}

/// Tick values like 19.999999 come out of float steps; show them clean.
fn round_tick(v: f64) -> f64 {
    let r = if v.abs() >= 1e-3 {
        (v * 1000.0).round() / 1000.0
    } else {
        v
    };
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

/// One of the two drawings of a chart. Sizes are SVG units; the narrow one
/// is drawn for a phone's column (about 340 CSS px), so its text renders
/// near its nominal size instead of being scaled down from the wide one.
struct Layout {
    width: f64,
    plot_h: f64,
    font: f64,
    ticks: usize,
    class: &'static str,
    id: &'static str,
}

const WIDE: Layout = Layout {
    width: 640.0,
    plot_h: 260.0,
    font: 14.0,
    ticks: 6,
    class: "chart-wide",
    id: "",
};
const NARROW: Layout = Layout {
    width: 340.0,
    plot_h: 220.0,
    font: 13.0,
    ticks: 4,
    class: "chart-narrow",
    id: "-narrow",
};
const PAD: f64 = 8.0;
/// Width of a character in ems, on the wide side: DejaVu Sans digits are
/// 0.636 em, so boxes estimated with this hold the text drawn.
const CHAR_W: f64 = 0.64;

fn text_w(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * CHAR_W * size
}

/// Words wrapped into lines of at most `width` units.
fn wrap(text: &str, width: f64, size: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(l) if text_w(l, size) + text_w(word, size) + CHAR_W * size <= width => {
                l.push(' ');
                l.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// Where the plot sits in the drawing, and how category names fit.
struct Frame {
    left: f64,
    right: f64,
    top: f64,
    /// How high a value label may reach: below the header.
    label_top: f64,
    bottom: f64,
    height: f64,
    /// The y axis title and any note on the axis, above the plot.
    header: Vec<(String, &'static str)>,
    x_title: Vec<String>,
    /// Category names rotated 45°, every `every`-th one shown, `depth` deep.
    rotate: bool,
    every: usize,
    depth: f64,
}

impl Frame {
    fn new(spec: &ChartSpec, data: &Data, axis: &Axis, l: &Layout) -> Frame {
        let f = l.font;
        let line_h = f * 1.3;
        let text_width = l.width - 2.0 * PAD;
        let mut header: Vec<(String, &'static str)> = wrap(&spec.y.label, text_width, f)
            .into_iter()
            .map(|t| (t, "chart-axis-title"))
            .collect();
        if let Some(note) = axis.note() {
            header.extend(
                wrap(&note, text_width, f)
                    .into_iter()
                    .map(|t| (t, "chart-note")),
            );
        }
        // Room over the plot for the label of a bar that reaches the top.
        let label_top = PAD + header.len() as f64 * line_h + f * 0.3;
        let top = label_top + f + 4.0;
        let ticks_w = axis
            .ticks
            .iter()
            .map(|t| text_w(&tick_label(*t), f))
            .fold(0.0, f64::max);
        let widest = data
            .categories
            .iter()
            .map(|c| text_w(c, f))
            .fold(0.0, f64::max);
        let n = data.categories.len() as f64;
        let mut left = PAD + ticks_w + 6.0;
        let right = l.width - PAD;
        let mut spacing = (right - left) / n;
        let rotate = widest + 6.0 > spacing;
        if rotate {
            // The first name, rotated, reaches left of its category.
            left = left.max(PAD + widest * 0.71 - spacing / 2.0);
            spacing = (right - left) / n;
        }
        let (every, depth) = if rotate {
            // Neighbouring rotated names sit `spacing * sin 45°` apart;
            // below about 1.4 em they read as one smear.
            let every = (f * 1.4 / (spacing * 0.71)).ceil().max(1.0) as usize;
            (every, widest * 0.71 + f)
        } else {
            (1, f * 1.2)
        };
        let x_title = wrap(&spec.x.label, text_width, f);
        let bottom = top + l.plot_h;
        let height = bottom + 6.0 + depth + 6.0 + x_title.len() as f64 * line_h + PAD;
        Frame {
            left,
            right,
            top,
            label_top,
            bottom,
            height: height.ceil(),
            header,
            x_title,
            rotate,
            every,
            depth,
        }
    }

    fn spacing(&self, n: usize) -> f64 {
        (self.right - self.left) / n as f64
    }

    /// Pixel x of a position in category units (category i spans i..i+1).
    fn px(&self, x: f64, n: usize) -> f64 {
        self.left + x * self.spacing(n)
    }

    fn py(&self, axis: &Axis, v: f64) -> f64 {
        self.bottom - axis.frac(v) * (self.bottom - self.top)
    }
}

fn draw(
    spec: &ChartSpec,
    data: &Data,
    axis: &Axis,
    y_fmt: &Format,
    l: &Layout,
) -> Result<(String, f64), Box<dyn std::error::Error>> {
    let frame = Frame::new(spec, data, axis, l);
    let mut buf = String::new();
    let mut points = Vec::new();
    // Bars and markers, which value labels must not cover either.
    let mut shapes = Vec::new();
    // Whiskers, dots and medians, written over the shapes.
    let mut marks = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (l.width as u32, frame.height as u32))
            .into_drawing_area();
        let plot = Plot {
            root: &root,
            fr: &frame,
            axis,
            data,
        };
        plot.grid()?;
        for s in 0..spec.series.len() {
            points.push(match spec.chart_type {
                ChartType::Bar => plot.bars(s, &mut shapes)?,
                ChartType::Line => plot.line(s, &mut shapes)?,
                ChartType::Strip => {
                    marks.push_str(&spread::strip(&plot, s)?);
                    Vec::new()
                }
                ChartType::Box => {
                    marks.push_str(&spread::boxes(&plot, s)?);
                    Vec::new()
                }
            });
        }
        marks.push_str(&spread::whiskers(
            &plot,
            spec.chart_type,
            &mut points,
            &mut shapes,
        ));
        root.present()?;
    }
    let open = buf.find('>').map_or(0, |i| i + 1);
    let body = buf[open..].trim_end().trim_end_matches("</svg>");
    let mut svg = body.trim_start_matches('\n').to_string();
    svg.push_str(&marks);
    svg.push_str(&axis_text(data, axis, &frame, l));
    let value_size = l.font - 1.0;
    let labels = Labels {
        kind: spec.chart_type,
        frame: &frame,
        size: value_size,
        format: y_fmt,
    };
    for (x, y, label) in labels.place(&points, data, shapes) {
        svg.push_str(&text(x, y, value_size, "middle", "chart-value", "", &label));
    }
    svg.push_str("</svg>");
    Ok((svg, frame.height))
}

type Root<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

fn pt(x: f64, y: f64) -> (i32, i32) {
    (x.round() as i32, y.round() as i32)
}

/// What the shapes are drawn on and from.
struct Plot<'a, 'b> {
    root: &'a Root<'b>,
    fr: &'a Frame,
    axis: &'a Axis,
    data: &'a Data,
}

type Drawn<T> = Result<T, Box<dyn std::error::Error>>;

/// Where a point's value label goes: the top of its bar (or whisker), or
/// around its marker.
type Point = Option<spread::Reach>;

impl Plot<'_, '_> {
    /// Gridlines at every tick, the value axis and the baseline.
    fn grid(&self) -> Drawn<()> {
        let (fr, axis) = (self.fr, self.axis);
        for t in &axis.ticks {
            let y = fr.py(axis, *t);
            self.root.draw(&PathElement::new(
                vec![pt(fr.left, y), pt(fr.right, y)],
                GRID,
            ))?;
        }
        let base = fr.py(axis, axis.base());
        let style = AXIS.stroke_width(1);
        let lines = [
            [pt(fr.left, fr.top), pt(fr.left, fr.bottom)],
            [pt(fr.left, base), pt(fr.right, base)],
        ];
        for l in lines {
            self.root.draw(&PathElement::new(l.to_vec(), style))?;
        }
        Ok(())
    }

    /// Series `s` as bars; the second, fourth and sixth striped.
    fn bars(&self, s: usize, shapes: &mut Vec<Box2>) -> Drawn<Vec<Point>> {
        let (fr, axis, n) = (self.fr, self.axis, self.data.categories.len());
        let width = 0.8 / self.data.values.len() as f64;
        let color = PALETTE[s];
        let base = fr.py(axis, axis.base());
        let mut points = Vec::new();
        for (i, v) in self.data.values[s].iter().enumerate() {
            let x0 = fr.px(i as f64 + 0.1 + s as f64 * width, n);
            let x1 = fr.px(i as f64 + 0.1 + (s as f64 + 0.92) * width, n);
            let Some(v) = v else {
                self.missing((x0 + x1) / 2.0)?;
                points.push(None);
                continue;
            };
            let (y0, y1) = (fr.py(axis, *v).min(base), fr.py(axis, *v).max(base));
            let (a, b) = (pt(x0, y0), pt(x1, y1));
            self.root.draw(&Rectangle::new([a, b], color.filled()))?;
            shapes.push(Box2 { x0, y0, x1, y1 });
            if s % 2 == 1 {
                // Diagonal stripes keep the second arm apart from the first
                // in greyscale and for every colour vision.
                for stripe in hatch(a, b) {
                    self.root.draw(&stripe)?;
                }
            }
            points.push(Some(spread::Reach {
                x: (x0 + x1) / 2.0,
                top: y0,
                bottom: y0,
            }));
        }
        Ok(points)
    }

    /// Series `s` as a line with markers (circles, or triangles for every
    /// second series), broken where a value is missing.
    fn line(&self, s: usize, shapes: &mut Vec<Box2>) -> Drawn<Vec<Point>> {
        let (fr, axis, n) = (self.fr, self.axis, self.data.categories.len());
        let color = PALETTE[s];
        let points: Vec<Option<(f64, f64)>> = self.data.values[s]
            .iter()
            .enumerate()
            .map(|(i, v)| v.map(|v| (fr.px(i as f64 + 0.5, n), fr.py(axis, v))))
            .collect();
        for run in points.split(Option::is_none) {
            let path: Vec<(i32, i32)> = run.iter().flatten().map(|(x, y)| pt(*x, *y)).collect();
            self.root
                .draw(&PathElement::new(path, color.stroke_width(3)))?;
        }
        for (i, p) in points.iter().enumerate() {
            let Some((x, y)) = *p else {
                self.missing(fr.px(i as f64 + 0.5, n))?;
                continue;
            };
            shapes.push(Box2 {
                x0: x - 5.0,
                y0: y - 5.0,
                x1: x + 5.0,
                y1: y + 5.0,
            });
            if s % 2 == 0 {
                self.root.draw(&Circle::new(pt(x, y), 5, color.filled()))?;
            } else {
                self.root
                    .draw(&TriangleMarker::new(pt(x, y), 6, color.filled()))?;
            }
        }
        let reach = |(x, y): (f64, f64)| spread::Reach {
            x,
            top: y,
            bottom: y,
        };
        Ok(points.into_iter().map(|p| p.map(reach)).collect())
    }

    /// A cross on the baseline where a record has no value.
    fn missing(&self, x: f64) -> Drawn<()> {
        let base = self.fr.py(self.axis, self.axis.base());
        self.root
            .draw(&Cross::new(pt(x, base - 7.0), 4, AXIS.stroke_width(2)))?;
        Ok(())
    }
}

/// White diagonal stripes across the pixel box `tl`..`br`, 6 px apart.
fn hatch(tl: (i32, i32), br: (i32, i32)) -> Vec<PathElement<(i32, i32)>> {
    let style = ShapeStyle::from(&WHITE).stroke_width(2);
    let mut lines = Vec::new();
    // Lines x + y = c, clipped to the box.
    let mut c = tl.0 + tl.1 + 4;
    while c < br.0 + br.1 {
        let start = (tl.0.max(c - br.1), 0);
        let end = (br.0.min(c - tl.1), 0);
        if start.0 < end.0 {
            lines.push(PathElement::new(
                vec![(start.0, c - start.0), (end.0, c - end.0)],
                style,
            ));
        }
        c += 6;
    }
    lines
}

/// An SVG text element; `y` is its baseline.
fn text(x: f64, y: f64, size: f64, anchor: &str, class: &str, extra: &str, s: &str) -> String {
    format!(
        "<text class=\"{class}\" x=\"{x:.1}\" y=\"{y:.1}\" font-size=\"{size}\" text-anchor=\"{anchor}\"{extra}>{}</text>\n",
        escape(s)
    )
}

/// Axis titles above and below the plot, tick values, category names.
fn axis_text(data: &Data, axis: &Axis, fr: &Frame, l: &Layout) -> String {
    let f = l.font;
    let line_h = f * 1.3;
    let mut out = String::new();
    for (i, (t, class)) in fr.header.iter().enumerate() {
        out.push_str(&text(
            PAD,
            PAD + f + i as f64 * line_h,
            f,
            "start",
            class,
            "",
            t,
        ));
    }
    for t in &axis.ticks {
        let y = fr.py(axis, *t) + f * 0.35;
        out.push_str(&text(
            fr.left - 6.0,
            y,
            f,
            "end",
            "chart-tick",
            "",
            &tick_label(*t),
        ));
    }
    let n = data.categories.len();
    for (i, c) in data.categories.iter().enumerate().step_by(fr.every) {
        let x = fr.px(i as f64 + 0.5, n);
        if fr.rotate {
            let y = fr.bottom + 6.0 + f * 0.7;
            let turn = format!(" transform=\"rotate(-45 {x:.1} {y:.1})\"");
            out.push_str(&text(x, y, f, "end", "chart-category", &turn, c));
        } else {
            out.push_str(&text(
                x,
                fr.bottom + 6.0 + f,
                f,
                "middle",
                "chart-category",
                "",
                c,
            ));
        }
    }
    let mid = (fr.left + fr.right) / 2.0;
    for (i, t) in fr.x_title.iter().enumerate() {
        let y = fr.bottom + 6.0 + fr.depth + 6.0 + f + i as f64 * line_h;
        out.push_str(&text(mid, y, f, "middle", "chart-axis-title", "", t));
    }
    out
}

/// A label's box, from its centre x and baseline y.
#[derive(Clone, Copy)]
struct Box2 {
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
}

impl Box2 {
    fn of(x: f64, y: f64, s: &str, size: f64) -> Box2 {
        let w = text_w(s, size) + 2.0;
        Box2 {
            x0: x - w / 2.0,
            y0: y - size * 0.95,
            x1: x + w / 2.0,
            y1: y + size * 0.3,
        }
    }

    fn hits(&self, o: &Box2) -> bool {
        self.x0 < o.x1 && o.x0 < self.x1 && self.y0 < o.y1 && o.y0 < self.y1
    }
}

/// How value labels are set: font size, format, and the plot they stay in.
struct Labels<'a> {
    kind: ChartType,
    frame: &'a Frame,
    size: f64,
    format: &'a Format,
}

impl Labels<'_> {
    /// Value labels that never overprint: each goes above its bar or point,
    /// or (lines) below it, at the first place inside the plot free of every
    /// label placed so far and of every bar and marker; a label with no
    /// free place is left out (the data
    /// table has every value).
    fn place(
        &self,
        points: &[Vec<Point>],
        data: &Data,
        mut taken: Vec<Box2>,
    ) -> Vec<(f64, f64, String)> {
        let mut placed = Vec::new();
        if points.iter().flatten().flatten().count() > 24 {
            return placed;
        }
        for (series, values) in points.iter().zip(&data.values) {
            for (p, v) in series.iter().zip(values) {
                let (Some(r), Some(v)) = (p, v) else {
                    continue;
                };
                let label = self.format.apply(*v);
                let tries = match self.kind {
                    ChartType::Bar => vec![r.top - 4.0],
                    _ => vec![r.top - 9.0, r.bottom + 9.0 + self.size],
                };
                let free = tries.into_iter().find(|y| {
                    let b = Box2::of(r.x, *y, &label, self.size);
                    self.inside(&b) && !taken.iter().any(|t| t.hits(&b))
                });
                if let Some(y) = free {
                    taken.push(Box2::of(r.x, y, &label, self.size));
                    placed.push((r.x, y, label));
                }
            }
        }
        placed
    }

    fn inside(&self, b: &Box2) -> bool {
        let fr = self.frame;
        b.y0 >= fr.label_top && b.y1 <= fr.bottom && b.x0 >= fr.left && b.x1 <= fr.right + PAD
    }
}

/// Give the SVG its box (a viewBox, no fixed size: the stylesheet sizes
/// it), an accessible name and a description.
fn annotate(
    drawn: &(String, f64),
    spec: &ChartSpec,
    data: &Data,
    chart: &str,
    l: &Layout,
) -> String {
    let (svg, height) = drawn;
    let names: Vec<&str> = spec.series.iter().map(|s| s.name.as_str()).collect();
    let kind = match spec.chart_type {
        ChartType::Bar => "Grouped bar chart",
        ChartType::Line => "Line chart",
        ChartType::Strip => "Strip chart",
        ChartType::Box => "Box plot",
    };
    let scale = match spec.y.scale {
        Scale::Log => ", on a log scale",
        Scale::Linear => "",
    };
    let missing = match data.missing() {
        0 => String::new(),
        1 => " One value is missing, marked with a cross.".into(),
        m => format!(" {m} values are missing, each marked with a cross."),
    };
    let desc = format!(
        "{kind} of {}{scale} by {} over {} categories ({}), one series each for {}.{}{missing} The data table below lists every value.",
        spec.y.label,
        spec.x.label,
        data.categories.len(),
        data.categories.join(", "),
        names.join(" and "),
        spread::describe(spec, data),
    );
    let id = format!("{chart}{}", l.id);
    format!(
        "<svg class=\"chart-svg {}\" role=\"img\" aria-labelledby=\"{id}-title {id}-desc\" viewBox=\"0 0 {} {}\" xmlns=\"http://www.w3.org/2000/svg\">\n<title id=\"{id}-title\">{}</title>\n<desc id=\"{id}-desc\">{}</desc>\n{svg}",
        l.class,
        l.width,
        height,
        escape(&spec.title),
        escape(&desc),
    )
}

/// The chart's one legend, in HTML above it. Decorative for screen
/// readers, who get the description and the data table.
fn legend(spec: &ChartSpec) -> String {
    let mut html = String::from("<ul class=\"legend\" aria-hidden=\"true\">");
    for (s, series) in spec.series.iter().enumerate() {
        let c = PALETTE[s];
        let shape = match spec.chart_type {
            ChartType::Bar if s % 2 == 1 => " hatched",
            ChartType::Bar => "",
            ChartType::Line => " line",
            ChartType::Strip if s % 2 == 1 => " dot hollow",
            ChartType::Strip => " dot",
            ChartType::Box => " box",
        };
        html.push_str(&format!(
            "<li><span class=\"swatch{shape}\" style=\"background-color: #{:02X}{:02X}{:02X}\"></span>{}</li>",
            c.0,
            c.1,
            c.2,
            escape(&series.name)
        ));
    }
    html.push_str("</ul>");
    html
}

fn data_table(spec: &ChartSpec, data: &Data, y_fmt: &Format) -> String {
    let mut html = String::from("<details class=\"chart-data\"><summary>Data table</summary><div class=\"scroll\" tabindex=\"0\"><table><thead><tr>");
    html.push_str(&format!("<th scope=\"col\">{}</th>", escape(&spec.x.label)));
    for s in &spec.series {
        html.push_str(&spread::headers(spec, s));
    }
    html.push_str("</tr></thead><tbody>");
    for (i, c) in data.categories.iter().enumerate() {
        html.push_str(&format!("<tr><th scope=\"row\">{}</th>", escape(c)));
        for s in 0..spec.series.len() {
            html.push_str(&spread::cells(spec, data, s, i, y_fmt));
        }
        html.push_str("</tr>");
    }
    html.push_str("</tbody></table></div></details>");
    html
}
