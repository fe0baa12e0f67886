//! The values a typed figure may quote: every number of every data file
//! the campaign's pages read, and every number the pages compute from
//! them (table columns, card templates, inline references), each with
//! where it came from. Sorted by magnitude, so a figure finds the values
//! it could be a rounding of, and its nearest value, by binary search.

use super::extract::Figure;
use crate::blocks::Block;
use crate::data::Source;
use crate::expr::{Env, Expr, Scalar};
use serde_json::Value;

/// A number and where it came from (public names only).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct Known {
    pub(crate) value: f64,
    pub(crate) source: String,
}

/// Every value a figure may match, by magnitude.
pub(crate) struct Index {
    values: Vec<Known>,
}

impl Index {
    /// `sources`' numeric fields, then `derived` (the pages' computed values).
    pub(crate) fn new(sources: &[std::sync::Arc<Source>], derived: &[Known]) -> Index {
        let mut values = Vec::new();
        for s in sources {
            leaves(&s.doc, &mut format!("{}#", s.public), &mut values);
        }
        values.extend(derived.iter().filter(|k| k.value.is_finite()).cloned());
        // Stable, so the first source of a value is the one named.
        values.sort_by(|a, b| a.value.abs().total_cmp(&b.value.abs()));
        Index { values }
    }

    /// The first value (in source order) `f` is a rounding of, at its
    /// precision: `33.0%` matches 33.04; a percent also matches a
    /// fraction (0.3304). A signed figure needs a value of its sign.
    pub(crate) fn matching(&self, f: &Figure) -> Option<&Known> {
        let m = f.magnitude();
        let scales: &[f64] = if f.percent { &[1.0, 100.0] } else { &[1.0] };
        let mut found: Option<&Known> = None;
        for &scale in scales {
            let half = 0.5 / 10f64.powi(f.decimals as i32) / scale;
            let (lo, hi) = (m / scale - half * 1.000001, m / scale + half * 1.000001);
            let start = self.values.partition_point(|k| k.value.abs() < lo);
            let hit = self.values[start..]
                .iter()
                .take_while(|k| k.value.abs() <= hi)
                .find(|k| rounds_to(f, k.value * scale));
            found = match (found, hit) {
                (None, h) => h,
                (Some(a), _) => Some(a),
            };
        }
        found
    }

    /// The value nearest `f`'s magnitude, for the warning.
    pub(crate) fn nearest(&self, f: &Figure) -> Option<&Known> {
        let m = f.magnitude();
        let i = self.values.partition_point(|k| k.value.abs() < m);
        // Of equal values, the first in source order (data before pages).
        let below = i.checked_sub(1).map(|j| {
            let v = self.values[j].value.abs();
            &self.values[self.values.partition_point(|k| k.value.abs() < v)]
        });
        match (below, self.values.get(i)) {
            (Some(a), Some(b)) if m - a.value.abs() <= b.value.abs() - m => Some(a),
            (_, Some(b)) => Some(b),
            (a, None) => a,
        }
    }
}

/// `v`, written at `f`'s precision, is `f` (and has its sign, if any).
fn rounds_to(f: &Figure, v: f64) -> bool {
    let sign_ok = match f.sign {
        Some('+') => v >= 0.0 || f.scaled == 0,
        Some(_) => v < 0.0 || f.scaled == 0,
        None => true,
    };
    if !sign_ok {
        return false;
    }
    // Clearly inside or outside the rounding interval: decided without
    // formatting; near its edge, written out as a reader would see it.
    let off = (v.abs() * 10f64.powi(f.decimals as i32) - f.scaled as f64).abs();
    if off < 0.499 {
        return true;
    }
    if off > 0.501 {
        return false;
    }
    let shown = format!("{:.*}", f.decimals as usize, v.abs());
    let digits: String = shown.chars().filter(char::is_ascii_digit).collect();
    digits.parse::<u64>().ok() == Some(f.scaled)
}

/// Every number under `v`, named `prefix` + its JSON pointer.
fn leaves(v: &Value, prefix: &mut String, out: &mut Vec<Known>) {
    match v {
        Value::Number(n) => {
            if let Some(value) = n.as_f64() {
                out.push(Known {
                    value,
                    source: prefix.clone(),
                });
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                let len = prefix.len();
                prefix.push_str(&format!("/{i}"));
                leaves(x, prefix, out);
                prefix.truncate(len);
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                let len = prefix.len();
                prefix.push('/');
                prefix.push_str(&k.replace('~', "~0").replace('/', "~1"));
                leaves(x, prefix, out);
                prefix.truncate(len);
            }
        }
        _ => {}
    }
}

/// The numbers a block computes from `source` (its fields are in the
/// index already): a table's `derive`, `value` and `template` columns row
/// by row, a card's templates. `at` names the block (`table at
/// index.md:12`).
pub(crate) fn computed(block: &Block, source: &Source, at: &str) -> Vec<Known> {
    let mut out = Vec::new();
    let mut push = |v: Option<f64>, what: String| {
        if let Some(value) = v.filter(|v| v.is_finite()) {
            out.push(Known {
                value,
                source: format!("{at}, {what}"),
            });
        }
    };
    match block {
        Block::Table(t) => {
            let Ok(records) = source.records(t.pointer.as_deref()) else {
                return out;
            };
            let baseline = t.baseline.as_ref().and_then(|m| {
                let mut hits = records.items.iter().filter(|(r, _)| m.holds(r));
                match (hits.next(), hits.next()) {
                    (Some((r, _)), None) => Some(*r),
                    _ => None,
                }
            });
            for c in t.columns.iter().filter(|c| c.field.is_none()) {
                let exprs = column_exprs(&c.value, c.derive, (&c.from, &c.to), &c.template);
                for (i, (rec, _)) in records.items.iter().enumerate() {
                    let env = Env { rec, baseline };
                    for e in &exprs {
                        push(
                            number(e.eval_in(&env)),
                            format!("`{}` row {}", c.header, i + 1),
                        );
                    }
                }
            }
        }
        Block::Card(c) => {
            let Ok(doc) = source.select(c.pointer.as_deref()) else {
                return out;
            };
            let items = c.items.iter().flat_map(|i| {
                let texts = std::iter::once(&i.value)
                    .chain(&i.change)
                    .chain(&i.conditions);
                texts.map(move |t| (t, format!("item `{}`", i.label)))
            });
            let summary = c.summary.iter().map(|s| (s, "summary".to_string()));
            for (t, what) in summary.chain(items) {
                for e in template_exprs(t) {
                    push(number(e.eval(doc)), what.clone());
                }
            }
        }
        _ => {}
    }
    out
}

/// The text a block shows as typed in its body: captions, titles, a
/// chart's axis labels and series names, a key-value table's headers, a
/// card's labels, the text of card and ledger-entry templates (whose
/// placeholders [`crate::claims::typed_text`] leaves out: [`computed`]
/// reads them).
pub(crate) fn captions(block: &Block) -> Vec<&str> {
    let texts: Vec<&String> = match block {
        Block::Card(c) => {
            let items = c.items.iter().flat_map(|i| {
                let texts = [Some(&i.label), Some(&i.value), i.change.as_ref()];
                texts.into_iter().flatten().chain(&i.conditions)
            });
            c.title.iter().chain(&c.summary).chain(items).collect()
        }
        Block::Table(t) => t.caption.iter().collect(),
        Block::KeyValue(k) => k.caption.iter().chain(k.headers.iter().flatten()).collect(),
        Block::Chart(c) => {
            let labels = [&c.title, &c.x.label, &c.y.label];
            let series = c.series.iter().map(|s| &s.name);
            labels.into_iter().chain(&c.caption).chain(series).collect()
        }
        Block::Ledger(l) => {
            let entry = l
                .entry
                .iter()
                .flat_map(|e| std::iter::once(&e.result).chain(&e.impact));
            l.title.iter().chain(entry).collect()
        }
        Block::Manifest(_) => Vec::new(),
    };
    texts.into_iter().map(String::as_str).collect()
}

/// The expressions a computed table column evaluates.
fn column_exprs(
    value: &Option<String>,
    derive: Option<crate::expr::Op>,
    (from, to): (&Option<String>, &Option<String>),
    template: &Option<String>,
) -> Vec<Expr> {
    match (value, derive, from, to, template) {
        (Some(v), ..) => Expr::parse(v).into_iter().collect(),
        (_, Some(op), Some(a), Some(b), _) => Expr::derive(op, a, b).into_iter().collect(),
        (.., Some(t)) => template_exprs(t),
        _ => Vec::new(),
    }
}

fn template_exprs(t: &str) -> Vec<Expr> {
    crate::expr::Template::parse(t)
        .map(|t| t.slots().map(|s| s.expr.clone()).collect())
        .unwrap_or_default()
}

fn number(r: Result<Scalar, crate::expr::EvalError>) -> Option<f64> {
    r.ok().and_then(|s| s.number())
}
