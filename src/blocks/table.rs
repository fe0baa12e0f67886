//! `table` and `keyvalue` blocks: records into HTML tables, with formatted
//! and derived columns.

use super::export::{Download, Export};
use super::{at_record, Ctx, Problem};
use crate::data::Source;
use crate::expr::{Expr, Format, Op, Ref, Scalar, Template};
use crate::html::escape;
use serde::Deserialize;
use std::sync::Arc;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSpec {
    pub source: String,
    #[serde(default)]
    pub pointer: Option<String>,
    /// The data file's format, when its content is ambiguous.
    #[serde(default)]
    pub format: Option<String>,
    #[serde(default)]
    pub caption: Option<String>,
    pub columns: Vec<ColumnSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ColumnSpec {
    pub header: String,
    #[serde(default)]
    pub field: Option<String>,
    #[serde(default)]
    pub derive: Option<Op>,
    #[serde(default)]
    pub from: Option<String>,
    #[serde(default)]
    pub to: Option<String>,
    #[serde(default)]
    pub template: Option<String>,
    #[serde(default)]
    pub format: Option<String>,
    #[serde(default)]
    pub align: Option<Align>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Align {
    Left,
    Right,
}

/// A column ready to evaluate.
pub enum Cell {
    Slot(Expr, Option<Format>),
    Template(Template),
}

impl ColumnSpec {
    pub fn compile(&self) -> Result<Cell, String> {
        let h = &self.header;
        let format = self
            .format
            .as_deref()
            .map(Format::parse)
            .transpose()
            .map_err(|e| format!("column `{h}`: {e}"))?;
        match (&self.field, self.derive, &self.template) {
            (Some(f), None, None) => {
                if self.from.is_some() || self.to.is_some() {
                    return Err(format!("column `{h}`: `from` and `to` belong to `derive`"));
                }
                Ok(Cell::Slot(Expr::Value(Ref::new(f)), format))
            }
            (None, Some(op), None) => match (&self.from, &self.to) {
                (Some(a), Some(b)) => Ok(Cell::Slot(
                    Expr::Derive(op, Ref::new(a), Ref::new(b)),
                    format,
                )),
                _ => Err(format!("column `{h}`: `derive` needs both `from` and `to`")),
            },
            (None, None, Some(t)) => {
                if format.is_some() {
                    return Err(format!("column `{h}`: a template formats inside its placeholders (`{{field:.2}}`), not with `format`"));
                }
                Template::parse(t)
                    .map(Cell::Template)
                    .map_err(|e| format!("column `{h}`: {e}"))
            }
            _ => Err(format!(
                "column `{h}` needs exactly one of `field`, `derive` or `template`"
            )),
        }
    }
}

impl Cell {
    /// The value before formatting, for data downloads; a template's
    /// value is its text.
    pub fn raw(&self, rec: &serde_json::Value) -> Result<Scalar, crate::expr::EvalError> {
        match self {
            Cell::Slot(expr, _) => expr.eval(rec),
            Cell::Template(t) => t.render(rec).map(Scalar::Text),
        }
    }

    /// (text, is numeric)
    pub fn eval(&self, rec: &serde_json::Value) -> Result<(String, bool), crate::expr::EvalError> {
        match self {
            Cell::Slot(expr, fmt) => {
                let v = expr.render(rec, fmt.as_ref())?;
                Ok((v.to_string(), v.is_number()))
            }
            Cell::Template(t) => Ok((t.render(rec)?, t.is_single_number_slot())),
        }
    }
}

impl TableSpec {
    pub fn check(&self) -> Result<(), String> {
        if self.columns.is_empty() {
            return Err("a table needs at least one column".into());
        }
        for c in &self.columns {
            c.compile()?;
        }
        Ok(())
    }
}

fn caption(c: &Option<String>) -> String {
    c.as_deref()
        .map(|c| format!("<figcaption>{}</figcaption>", escape(c)))
        .unwrap_or_default()
}

pub fn render(
    spec: &TableSpec,
    ctx: &Ctx,
) -> Result<(String, Arc<Source>, Vec<Download>), Problem> {
    let source = ctx.store.load_as(&spec.source, spec.format.as_deref())?;
    let records = source.records(spec.pointer.as_deref())?;
    let cells: Vec<Cell> = spec
        .columns
        .iter()
        .map(|c| c.compile())
        .collect::<Result<_, _>>()?;
    let mut rows = Vec::with_capacity(records.items.len());
    let mut export = Export::new(spec.columns.iter().map(|c| c.header.clone()).collect());
    for (rec, label) in &records.items {
        let mut row = Vec::with_capacity(cells.len());
        let mut raw = Vec::with_capacity(cells.len());
        for cell in &cells {
            row.push(cell.eval(rec).map_err(|e| at_record(label, e))?);
            raw.push(cell.raw(rec).map_err(|e| at_record(label, e))?);
        }
        rows.push(row);
        export.rows.push(raw);
    }
    // A column is numeric when every non-empty cell in it is.
    let numeric: Vec<bool> = spec
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| match c.align {
            Some(a) => a == Align::Right,
            None => rows.iter().all(|r| r[i].1 || r[i].0.is_empty()) && rows.iter().any(|r| r[i].1),
        })
        .collect();
    // Short cells (figures, "0.177 / 0.128") never wrap; prose cells do.
    let short: Vec<bool> = (0..cells.len())
        .map(|i| rows.iter().all(|r| r[i].0.chars().count() <= 24))
        .collect();
    let mut html = String::from("<figure class=\"block table\">");
    html.push_str(&caption(&spec.caption));
    html.push_str("<div class=\"scroll\" tabindex=\"0\"><table><thead><tr>");
    for (c, num) in spec.columns.iter().zip(&numeric) {
        html.push_str(&format!(
            "<th scope=\"col\"{}>{}</th>",
            num_class(*num),
            escape(&c.header)
        ));
    }
    html.push_str("</tr></thead><tbody>");
    for row in &rows {
        html.push_str("<tr>");
        for (((text, _), num), short) in row.iter().zip(&numeric).zip(&short) {
            let class = match (*num, *short) {
                (true, _) => " class=\"num\"",
                (false, true) => " class=\"short\"",
                (false, false) => "",
            };
            html.push_str(&format!("<td{class}>{}</td>", escape(text)));
        }
        html.push_str("</tr>");
    }
    html.push_str("</tbody></table></div>");
    let (links, downloads) = export.publish(&ctx.export_stem, "table");
    html.push_str(&links);
    html.push_str(&ctx.source_note(&source));
    html.push_str("</figure>");
    Ok((html, source, downloads))
}

fn num_class(num: bool) -> &'static str {
    if num {
        " class=\"num\""
    } else {
        ""
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyValueSpec {
    pub source: String,
    #[serde(default)]
    pub pointer: Option<String>,
    /// The data file's format, when its content is ambiguous.
    #[serde(default)]
    pub format: Option<String>,
    #[serde(default)]
    pub caption: Option<String>,
    #[serde(default)]
    pub headers: Option<[String; 2]>,
    #[serde(default = "default_key")]
    pub key: String,
    #[serde(default = "default_value")]
    pub value: String,
}

fn default_key() -> String {
    "key".into()
}

fn default_value() -> String {
    "value".into()
}

pub fn render_keyvalue(
    spec: &KeyValueSpec,
    ctx: &Ctx,
) -> Result<(String, Arc<Source>, Vec<Download>), Problem> {
    let source = ctx.store.load_as(&spec.source, spec.format.as_deref())?;
    let records = source.records(spec.pointer.as_deref())?;
    let (key, value) = (
        Expr::Value(Ref::new(&spec.key)),
        Expr::Value(Ref::new(&spec.value)),
    );
    let mut html = String::from("<figure class=\"block keyvalue\">");
    html.push_str(&caption(&spec.caption));
    html.push_str("<div class=\"scroll\" tabindex=\"0\"><table>");
    if let Some([a, b]) = &spec.headers {
        html.push_str(&format!(
            "<thead><tr><th scope=\"col\">{}</th><th scope=\"col\">{}</th></tr></thead>",
            escape(a),
            escape(b)
        ));
    }
    html.push_str("<tbody>");
    let names = spec
        .headers
        .clone()
        .unwrap_or_else(|| [spec.key.clone(), spec.value.clone()]);
    let mut export = Export::new(names.to_vec());
    for (rec, label) in &records.items {
        let k = key.eval(rec).map_err(|e| at_record(label, e))?;
        let v = value.eval(rec).map_err(|e| at_record(label, e))?;
        html.push_str(&format!(
            "<tr><th scope=\"row\">{}</th><td>{}</td></tr>",
            escape(&k.to_string()),
            escape(&v.to_string())
        ));
        export.rows.push(vec![k, v]);
    }
    html.push_str("</tbody></table></div>");
    let (links, downloads) = export.publish(&ctx.export_stem, "table");
    html.push_str(&links);
    html.push_str(&ctx.source_note(&source));
    html.push_str("</figure>");
    Ok((html, source, downloads))
}
