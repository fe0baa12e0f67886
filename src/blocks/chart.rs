//! `chart` blocks: grouped bars or lines over equally spaced categories,
//! drawn as SVG with plotters (SVG backend only, no system fonts), with an
//! SVG title and description and the chart's data table beside it.

use super::export::{Download, Export};
use super::{at_record, Ctx, Problem};
use crate::data::Source;
use crate::expr::{Expr, Format, Ref};
use crate::html::escape;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde::Deserialize;
use std::sync::Arc;

const WIDTH: u32 = 640;
const HEIGHT: u32 = 400;
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
const INK: RGBColor = RGBColor(0x22, 0x22, 0x22);

#[derive(Debug, Deserialize, Default, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ChartType {
    #[default]
    Bar,
    Line,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChartSpec {
    pub title: String,
    #[serde(rename = "type", default)]
    pub chart_type: ChartType,
    pub source: String,
    #[serde(default)]
    pub pointer: Option<String>,
    /// The data file's format, when its content is ambiguous.
    #[serde(default)]
    pub format: Option<String>,
    pub x: XAxis,
    pub y: YAxis,
    pub series: Vec<SeriesSpec>,
    #[serde(default)]
    pub caption: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct XAxis {
    pub field: String,
    pub label: String,
    #[serde(default)]
    pub format: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct YAxis {
    pub label: String,
    #[serde(default)]
    pub min: Option<f64>,
    #[serde(default)]
    pub max: Option<f64>,
    /// Format of value labels and the data table.
    #[serde(default)]
    pub format: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeriesSpec {
    pub field: String,
    pub name: String,
}

impl ChartSpec {
    pub fn check(&self) -> Result<(), String> {
        if self.series.is_empty() {
            return Err("a chart needs at least one series".into());
        }
        if self.series.len() > PALETTE.len() {
            return Err(format!("a chart takes at most {} series", PALETTE.len()));
        }
        for f in [&self.x.format, &self.y.format].into_iter().flatten() {
            Format::parse(f)?;
        }
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
    /// values[series][category]
    values: Vec<Vec<f64>>,
    /// The x value and every series value of each record, unformatted.
    export: Export,
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
    let mut categories = Vec::new();
    let mut values = vec![Vec::new(); spec.series.len()];
    let mut export = Export::new(
        std::iter::once(spec.x.label.clone())
            .chain(spec.series.iter().map(|s| s.name.clone()))
            .collect(),
    );
    for (rec, label) in &records.items {
        categories.push(
            x.render(rec, x_fmt.as_ref())
                .map_err(|e| at_record(label, e))?
                .to_string(),
        );
        let mut row = vec![x.eval(rec).map_err(|e| at_record(label, e))?];
        for (s, series) in spec.series.iter().zip(values.iter_mut()) {
            let e = Expr::Value(Ref::new(&s.field));
            let v = e.eval(rec).map_err(|e| at_record(label, e))?;
            let n = v.number().ok_or_else(|| {
                Problem::Here(format!(
                    "record {label}: series `{}` needs a number in `{}`, found {:?}",
                    s.name,
                    s.field,
                    v.to_string()
                ))
            })?;
            if !within_axis(n) {
                return Err(Problem::Here(format!(
                    "record {label}: series `{}` value {} in `{}` is beyond the ±{MAX_AXIS:e} a chart can lay out",
                    s.name, num(n), s.field
                )));
            }
            series.push(n);
            row.push(v);
        }
        export.rows.push(row);
    }
    Ok(Data {
        categories,
        values,
        export,
    })
}

pub fn render(
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
    // The range drawn, data margins included, is checked again: values
    // inside the limit may still put the top of the axis past it.
    let (lo, hi) = y_range(spec, &data);
    if !within_axis(lo) || !within_axis(hi) {
        return Err(Problem::Here(format!(
            "chart `{}`: the y axis would run from {} to {}, beyond the ±{MAX_AXIS:e} a chart can lay out",
            spec.title,
            num(lo),
            num(hi)
        )));
    }
    check_span(lo, hi).map_err(Problem::Here)?;
    let svg = draw(spec, &data, &y_fmt)
        .map_err(|e| Problem::Here(format!("chart `{}` could not be drawn: {e}", spec.title)))?;
    let svg = annotate(&svg, spec, &data, &ctx.chart_id);

    let mut html = format!("<figure class=\"block chart\" id=\"{}\">", ctx.chart_id);
    // On a phone the chart keeps a legible size and scrolls sideways.
    html.push_str("<div class=\"chart-frame\" tabindex=\"0\">");
    html.push_str(&svg);
    html.push_str("</div>");
    html.push_str(&legend(spec));
    if let Some(c) = &spec.caption {
        html.push_str(&format!("<figcaption>{}</figcaption>", escape(c)));
    }
    html.push_str(&data_table(spec, &data, &y_fmt));
    let (links, downloads) = data.export.publish(&ctx.export_stem, "chart");
    html.push_str(&links);
    html.push_str(&ctx.source_note(&source));
    html.push_str("</figure>");
    Ok((html, source, downloads))
}

fn y_range(spec: &ChartSpec, data: &Data) -> (f64, f64) {
    let all = data.values.iter().flatten().copied();
    let hi = all.clone().fold(f64::NEG_INFINITY, f64::max);
    let lo_data = all.fold(f64::INFINITY, f64::min);
    let lo = spec
        .y
        .min
        .unwrap_or(if lo_data < 0.0 { lo_data * 1.15 } else { 0.0 });
    let mut hi = spec.y.max.unwrap_or(if hi > 0.0 { hi * 1.3 } else { 1.0 });
    if hi <= lo {
        hi = lo + 1.0;
    }
    (lo, hi)
}

fn draw(
    spec: &ChartSpec,
    data: &Data,
    y_fmt: &Format,
) -> Result<String, Box<dyn std::error::Error>> {
    let n = data.categories.len();
    let (lo, hi) = y_range(spec, data);
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&spec.title, ("sans-serif", 19).into_font().color(&INK))
            .margin(14)
            .x_label_area_size(56)
            .y_label_area_size(72)
            .build_cartesian_2d(0f64..n as f64, lo..hi)?;
        let y_label_fmt = |v: &f64| {
            Format {
                precision: None,
                ..Format::parse(",").unwrap_or_default()
            }
            .apply(round_tick(*v))
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_labels(6)
            .y_label_formatter(&y_label_fmt)
            .max_light_lines(1)
            .light_line_style(RGBColor(0xF2, 0xF2, 0xF2))
            .bold_line_style(RGBColor(0xDD, 0xDD, 0xDD))
            .axis_style(RGBColor(0x88, 0x88, 0x88))
            .label_style(("sans-serif", 14).into_font().color(&INK))
            .axis_desc_style(("sans-serif", 14).into_font().color(&INK))
            .x_desc(&spec.x.label)
            .y_desc(&spec.y.label)
            .draw()?;

        let groups = data.values.len() as f64;
        let label_values = n * data.values.len() <= 16;
        let value_style = TextStyle::from(("sans-serif", 13).into_font())
            .color(&INK)
            .pos(Pos::new(HPos::Center, VPos::Bottom));
        for (s, (series, values)) in spec.series.iter().zip(&data.values).enumerate() {
            let color = PALETTE[s];
            let points: Vec<(f64, f64)> = match spec.chart_type {
                ChartType::Bar => {
                    let width = 0.8 / groups;
                    let x0 = |i: usize| i as f64 + 0.1 + s as f64 * width;
                    let hatched = s % 2 == 1;
                    chart
                        .draw_series(values.iter().enumerate().map(|(i, v)| {
                            Rectangle::new(
                                [(x0(i), lo.max(0.0).min(hi)), (x0(i) + width * 0.92, *v)],
                                color.filled(),
                            )
                        }))?
                        .label(&series.name)
                        .legend(move |(x, y)| {
                            // Stripes in the bar's own colour are invisible:
                            // one element shape for plain and hatched swatches.
                            let ink = if hatched { WHITE } else { color };
                            let stripe = |from: (i32, i32), to: (i32, i32)| {
                                PathElement::new(vec![from, to], ink.stroke_width(2))
                            };
                            EmptyElement::at((x, y))
                                + Rectangle::new([(0, -6), (14, 6)], color.filled())
                                + stripe((0, 0), (6, -6))
                                + stripe((2, 6), (14, -6))
                                + stripe((8, 6), (14, 0))
                        });
                    if hatched {
                        // Diagonal stripes keep the second arm apart from
                        // the first in greyscale and for every colour vision.
                        for (i, v) in values.iter().enumerate() {
                            let a = chart.backend_coord(&(x0(i), lo.max(0.0).min(hi)));
                            let b = chart.backend_coord(&(x0(i) + width * 0.92, *v));
                            let tl = (a.0.min(b.0), a.1.min(b.1));
                            let br = (a.0.max(b.0), a.1.max(b.1));
                            for line in hatch(tl, br) {
                                root.draw(&line)?;
                            }
                        }
                    }
                    values
                        .iter()
                        .enumerate()
                        .map(|(i, v)| (x0(i) + width * 0.46, *v))
                        .collect()
                }
                ChartType::Line => {
                    let pts: Vec<(f64, f64)> = values
                        .iter()
                        .enumerate()
                        .map(|(i, v)| (i as f64 + 0.5, *v))
                        .collect();
                    chart
                        .draw_series(LineSeries::new(pts.clone(), color.stroke_width(3)))?
                        .label(&series.name)
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(3))
                        });
                    if s % 2 == 0 {
                        chart
                            .draw_series(pts.iter().map(|p| Circle::new(*p, 5, color.filled())))?;
                    } else {
                        chart.draw_series(
                            pts.iter()
                                .map(|p| TriangleMarker::new(*p, 6, color.filled())),
                        )?;
                    }
                    pts
                }
            };
            if label_values {
                for ((x, y), v) in points.iter().zip(values) {
                    let (px, py) = chart.backend_coord(&(*x, *y));
                    root.draw(&Text::new(
                        y_fmt.apply(*v),
                        (px, py - 4),
                        value_style.clone(),
                    ))?;
                }
            }
        }
        let cat_style = TextStyle::from(("sans-serif", 14).into_font())
            .color(&INK)
            .pos(Pos::new(HPos::Center, VPos::Top));
        for (i, c) in data.categories.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(i as f64 + 0.5, lo));
            root.draw(&Text::new(c.clone(), (px, py + 8), cat_style.clone()))?;
        }
        chart
            .configure_series_labels()
            .position(legend_corner(data))
            .margin(10)
            .label_font(("sans-serif", 14).into_font().color(&INK))
            .background_style(WHITE.mix(0.9))
            .border_style(RGBColor(0xCC, 0xCC, 0xCC))
            .draw()?;
        root.present()?;
    }
    Ok(buf)
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

/// Put the legend over the lower end of the chart, where bars leave room.
fn legend_corner(data: &Data) -> SeriesLabelPosition {
    let at = |i: usize| {
        data.values
            .iter()
            .map(|s| s[i])
            .fold(f64::NEG_INFINITY, f64::max)
    };
    let last = data.categories.len() - 1;
    if last > 0 && at(0) < at(last) {
        SeriesLabelPosition::UpperLeft
    } else {
        SeriesLabelPosition::UpperRight
    }
}

/// Tick values like 19.999999 come out of float steps; show them clean.
fn round_tick(v: f64) -> f64 {
    let r = (v * 1000.0).round() / 1000.0;
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

/// Give the SVG an accessible name and description, and let it scale.
fn annotate(svg: &str, spec: &ChartSpec, data: &Data, id: &str) -> String {
    let names: Vec<&str> = spec.series.iter().map(|s| s.name.as_str()).collect();
    let kind = match spec.chart_type {
        ChartType::Bar => "Grouped bar chart",
        ChartType::Line => "Line chart",
    };
    let desc = format!(
        "{kind} of {} by {} over {} categories ({}), one series each for {}. The data table below lists every value.",
        spec.y.label,
        spec.x.label,
        data.categories.len(),
        data.categories.join(", "),
        names.join(" and ")
    );
    let head =
        format!("<svg class=\"chart-svg\" role=\"img\" aria-labelledby=\"{id}-title {id}-desc\" ");
    let rest = svg.strip_prefix("<svg ").unwrap_or(svg);
    let close = rest.find('>').map_or(0, |i| i + 1);
    let body = rest[close..].trim_start_matches('\n');
    format!(
        "{head}{}\n<title id=\"{id}-title\">{}</title>\n<desc id=\"{id}-desc\">{}</desc>\n{}",
        &rest[..close],
        escape(&spec.title),
        escape(&desc),
        body
    )
}

/// The legend again in HTML, under the chart: it stays in view when the
/// chart scrolls sideways on a phone. Decorative for screen readers, who
/// get the description and the data table.
fn legend(spec: &ChartSpec) -> String {
    let mut html = String::from("<ul class=\"legend\" aria-hidden=\"true\">");
    for (s, series) in spec.series.iter().enumerate() {
        let c = PALETTE[s];
        let hatched = if spec.chart_type == ChartType::Bar && s % 2 == 1 {
            " hatched"
        } else {
            ""
        };
        html.push_str(&format!(
            "<li><span class=\"swatch{hatched}\" style=\"background-color: #{:02X}{:02X}{:02X}\"></span>{}</li>",
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
        html.push_str(&format!(
            "<th scope=\"col\" class=\"num\">{}</th>",
            escape(&s.name)
        ));
    }
    html.push_str("</tr></thead><tbody>");
    for (i, c) in data.categories.iter().enumerate() {
        html.push_str(&format!("<tr><th scope=\"row\">{}</th>", escape(c)));
        for series in &data.values {
            html.push_str(&format!(
                "<td class=\"num\">{}</td>",
                escape(&y_fmt.apply(series[i]))
            ));
        }
        html.push_str("</tr>");
    }
    html.push_str("</tbody></table></div></details>");
    html
}
