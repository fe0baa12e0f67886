//! `table` and `keyvalue` blocks: records into HTML tables, with formatted
//! and derived columns.

use super::export::{Download, Export};
use super::{at_record, at_record_problem, Ctx, DataText, Problem, Rendered};
use crate::data::{Records, Source};
use crate::expr::{Env, Expr, Format, Op, Ref, Scalar, Template};
use crate::html::escape;
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSpec {
    pub(crate) source: String,
    #[serde(default)]
    pub(crate) pointer: Option<String>,
    /// The data file's format, when its content is ambiguous.
    #[serde(default)]
    pub(crate) format: Option<String>,
    #[serde(default)]
    pub(crate) caption: Option<String>,
    /// The row every other row is compared with, through `baseline(X)`.
    #[serde(default)]
    pub(crate) baseline: Option<Match>,
    /// Only the rows that match are shown.
    #[serde(default, rename = "where")]
    pub(crate) filter: Option<Match>,
    pub(crate) columns: Vec<ColumnSpec>,
}

/// `{"field": F, "equals": V}` or `{"field": F, "not_equals": V}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Match {
    pub(crate) field: String,
    #[serde(default)]
    pub(crate) equals: Option<Value>,
    #[serde(default)]
    pub(crate) not_equals: Option<Value>,
}

impl Match {
    fn check(&self, what: &str) -> Result<(), String> {
        match (&self.equals, &self.not_equals) {
            (Some(_), None) | (None, Some(_)) => Ok(()),
            _ => Err(format!(
                "`{what}` needs exactly one of `equals` or `not_equals` beside `field`"
            )),
        }
    }

    pub(crate) fn holds(&self, rec: &Value) -> bool {
        let v = rec.pointer(&Ref::new(&self.field).0);
        let same = |want: &Value| match (v, want) {
            (Some(Value::Number(a)), Value::Number(b)) => a.as_f64() == b.as_f64(),
            (Some(a), b) => a == b,
            (None, _) => false,
        };
        match (&self.equals, &self.not_equals) {
            (Some(want), _) => same(want),
            (None, Some(want)) => !same(want),
            (None, None) => true,
        }
    }

    fn describe(&self) -> String {
        match (&self.equals, &self.not_equals) {
            (Some(v), _) => format!("`{}` equal to {v}", self.field),
            (None, Some(v)) => format!("`{}` not equal to {v}", self.field),
            (None, None) => format!("`{}`", self.field),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ColumnSpec {
    pub(crate) header: String,
    #[serde(default)]
    pub(crate) field: Option<String>,
    /// An expression: `median(/times)`, `pct_change(baseline(/mean), /mean)`.
    #[serde(default)]
    pub(crate) value: Option<String>,
    #[serde(default)]
    pub(crate) derive: Option<Op>,
    #[serde(default)]
    pub(crate) from: Option<String>,
    #[serde(default)]
    pub(crate) to: Option<String>,
    #[serde(default)]
    pub(crate) template: Option<String>,
    #[serde(default)]
    pub(crate) format: Option<String>,
    #[serde(default)]
    pub(crate) align: Option<Align>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Align {
    Left,
    Right,
}

/// A column ready to evaluate.
pub(crate) enum Cell {
    Slot(Expr, Option<Format>),
    Template(Template),
}

impl ColumnSpec {
    pub(crate) fn compile(&self) -> Result<Cell, String> {
        let h = &self.header;
        let at = |e: String| format!("column `{h}`: {e}");
        let format = self
            .format
            .as_deref()
            .map(Format::parse)
            .transpose()
            .map_err(at)?;
        if self.derive.is_none() && (self.from.is_some() || self.to.is_some()) {
            return Err(at("`from` and `to` belong to `derive`".into()));
        }
        match (&self.field, &self.value, self.derive, &self.template) {
            (Some(f), None, None, None) => Ok(Cell::Slot(Expr::Value(Ref::new(f)), format)),
            (None, Some(v), None, None) => Ok(Cell::Slot(Expr::parse(v).map_err(at)?, format)),
            (None, None, Some(op), None) => match (&self.from, &self.to) {
                (Some(a), Some(b)) => Ok(Cell::Slot(Expr::derive(op, a, b).map_err(at)?, format)),
                _ => Err(at("`derive` needs both `from` and `to`".into())),
            },
            (None, None, None, Some(t)) => {
                if format.is_some() {
                    return Err(at("a template formats inside its placeholders (`{field:.2}`), not with `format`".into()));
                }
                Template::parse(t).map(Cell::Template).map_err(at)
            }
            _ => Err(at(
                "needs exactly one of `field`, `value`, `derive` or `template`".into(),
            )),
        }
    }
}

impl Cell {
    fn uses_baseline(&self) -> bool {
        match self {
            Cell::Slot(e, _) => e.uses_baseline(),
            Cell::Template(t) => t.uses_baseline(),
        }
    }

    /// The value before formatting, for data downloads; a template's
    /// value is its text.
    pub(crate) fn raw(&self, env: &Env) -> Result<Scalar, crate::expr::EvalError> {
        match self {
            Cell::Slot(expr, _) => expr.eval_in(env),
            Cell::Template(t) => t.render_in(env).map(Scalar::Text),
        }
    }

    /// (text, is numeric)
    pub(crate) fn eval(&self, env: &Env) -> Result<(String, bool), crate::expr::EvalError> {
        match self {
            Cell::Slot(expr, fmt) => {
                let v = expr.render_in(env, fmt.as_ref())?;
                Ok((v.to_string(), v.is_number()))
            }
            Cell::Template(t) => Ok((t.render_in(env)?, t.is_single_number_slot())),
        }
    }
}

impl TableSpec {
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.columns.is_empty() {
            return Err("a table needs at least one column".into());
        }
        for (m, what) in [(&self.baseline, "baseline"), (&self.filter, "where")] {
            if let Some(m) = m {
                m.check(what)?;
            }
        }
        for c in &self.columns {
            if c.compile()?.uses_baseline() && self.baseline.is_none() {
                return Err(format!(
                    "column `{}` reads `baseline(…)`, but the table names no `baseline` row",
                    c.header
                ));
            }
        }
        Ok(())
    }
}

fn caption(c: &Option<String>) -> String {
    c.as_deref()
        .map(|c| format!("<figcaption>{}</figcaption>", escape(c)))
        .unwrap_or_default()
}

/// The one record the table's `baseline` names.
fn baseline<'a>(spec: &TableSpec, records: &Records<'a>) -> Result<Option<&'a Value>, Problem> {
    let Some(m) = &spec.baseline else {
        return Ok(None);
    };
    let found: Vec<&Value> = records
        .items
        .iter()
        .filter(|(r, _)| m.holds(r))
        .map(|(r, _)| *r)
        .collect();
    match found.as_slice() {
        [one] => Ok(Some(*one)),
        [] => Err(Problem::Here(format!(
            "baseline: no record has {}",
            m.describe()
        ))),
        more => Err(Problem::Here(format!(
            "baseline: {} records have {}; it must name one row",
            more.len(),
            m.describe()
        ))),
    }
}

/// One table cell: its text and whether it is a number, or why it has no
/// value (a failed measurement: shown as missing, not a failed build).
type Shown = Result<(String, bool), String>;

pub(super) fn render(
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
    let base = baseline(spec, &records)?;
    let mut rows: Vec<Vec<Shown>> = Vec::with_capacity(records.items.len());
    let mut export = Export::new(spec.columns.iter().map(|c| c.header.clone()).collect());
    for (rec, label) in &records.items {
        if spec.filter.as_ref().is_some_and(|m| !m.holds(rec)) {
            continue;
        }
        let env = Env {
            rec,
            baseline: base,
        };
        let mut row = Vec::with_capacity(cells.len());
        let mut raw = Vec::with_capacity(cells.len());
        for cell in &cells {
            match cell.eval(&env) {
                Ok(shown) => {
                    row.push(Ok(shown));
                    raw.push(cell.raw(&env).map_err(|e| at_record(label, e))?);
                }
                // An absent field stays an error (below): a failed
                // measurement is written as null.
                Err(e) if e.is_null() => {
                    // The title is published: it names the value, not the
                    // data file's original path.
                    row.push(Err(e.to_string()));
                    raw.push(Scalar::Null);
                }
                Err(e) => return Err(at_record(label, e)),
            }
        }
        rows.push(row);
        export.rows.push(raw);
    }
    if rows.is_empty() {
        let why = spec
            .filter
            .as_ref()
            .map(|m| format!(": no record has {}", m.describe()))
            .unwrap_or_default();
        return Err(Problem::Here(format!("the table has no rows{why}")));
    }
    // A column null in every row is not a set of failed cells.
    for (i, c) in spec.columns.iter().enumerate() {
        if let (true, Err(why)) = (rows.iter().all(|r| r[i].is_err()), &rows[0][i]) {
            return Err(Problem::Here(format!(
                "column `{}` has no value in any row: {why}",
                c.header
            )));
        }
    }
    let caption = caption(&ctx.expand_opt(&spec.caption)?);
    let mut html = table_html(spec, &caption, &rows);
    let (links, downloads) = export.publish(&ctx.export_stem, "table");
    html.push_str(&links);
    html.push_str(&ctx.source_note(&source));
    html.push_str("</figure>");
    Ok((html, source, downloads))
}

fn table_html(spec: &TableSpec, caption: &str, rows: &[Vec<Shown>]) -> String {
    let n = spec.columns.len();
    let present = |i: usize| rows.iter().filter_map(move |r| r[i].as_ref().ok());
    // A column is numeric when every non-empty cell in it is.
    let numeric: Vec<bool> = spec
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| match c.align {
            Some(a) => a == Align::Right,
            None => present(i).all(|c| c.1 || c.0.is_empty()) && present(i).any(|c| c.1),
        })
        .collect();
    // Short cells (figures, "0.177 / 0.128") never wrap; prose cells do.
    let short: Vec<bool> = (0..n)
        .map(|i| present(i).all(|c| c.0.chars().count() <= 24))
        .collect();
    let mut html = String::from("<figure class=\"block table\">");
    html.push_str(caption);
    html.push_str("<div class=\"scroll\" tabindex=\"0\"><table><thead><tr>");
    for (c, num) in spec.columns.iter().zip(&numeric) {
        html.push_str(&format!(
            "<th scope=\"col\"{}>{}</th>",
            num_class(*num),
            escape(&c.header)
        ));
    }
    html.push_str("</tr></thead><tbody>");
    for row in rows {
        html.push_str("<tr>");
        for ((cell, num), short) in row.iter().zip(&numeric).zip(&short) {
            let class = match (*num, *short) {
                (true, _) => " class=\"num\"",
                (false, true) => " class=\"short\"",
                (false, false) => "",
            };
            match cell {
                Ok((text, _)) => html.push_str(&format!("<td{class}>{}</td>", escape(text))),
                Err(why) => html.push_str(&format!(
                    "<td{class} title=\"no value: {}\">—</td>",
                    escape(why)
                )),
            }
        }
        html.push_str("</tr>");
    }
    html.push_str("</tbody></table></div>");
    html
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
    pub(crate) source: String,
    #[serde(default)]
    pub(crate) pointer: Option<String>,
    /// The data file's format, when its content is ambiguous.
    #[serde(default)]
    pub(crate) format: Option<String>,
    #[serde(default)]
    pub(crate) caption: Option<String>,
    #[serde(default)]
    pub(crate) headers: Option<[String; 2]>,
    #[serde(default = "default_key")]
    pub(crate) key: String,
    #[serde(default = "default_value")]
    pub(crate) value: String,
}

fn default_key() -> String {
    "key".into()
}

fn default_value() -> String {
    "value".into()
}

pub(super) fn render_keyvalue(spec: &KeyValueSpec, ctx: &Ctx) -> Result<Rendered, Problem> {
    let source = ctx.store.load_as(&spec.source, spec.format.as_deref())?;
    let records = source.records(spec.pointer.as_deref())?;
    let mut typed = Vec::new();
    let (key, value) = (
        Expr::Value(Ref::new(&spec.key)),
        Expr::Value(Ref::new(&spec.value)),
    );
    let mut html = String::from("<figure class=\"block keyvalue\">");
    html.push_str(&caption(&ctx.expand_opt(&spec.caption)?));
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
        // A value may quote another file's number through a reference.
        let v = match v {
            Scalar::Text(t) => {
                typed.push(DataText::of(&source, rec, &t, ctx));
                Scalar::Text(
                    ctx.expand(&t)
                        .map_err(|p| at_record_problem(label, "value", p))?,
                )
            }
            v => v,
        };
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
    Ok(Rendered {
        html,
        source: Some(source),
        ledger: Vec::new(),
        downloads,
        data_texts: typed,
    })
}
