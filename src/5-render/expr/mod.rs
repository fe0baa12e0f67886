//! Values inside data records: field references with `*` fan-out,
//! functions over them (`pct_change`, `sum`, `median`, `ci_low`, ...),
//! number formats (`+,.1%`, `.1 ms from s`) and text templates
//! (`"{after:.2} versus {before:.2} tok/s"`).
//!
//! Parsing ([`parse`]) is separate from evaluation ([`eval`]) so a bad
//! expression is reported at the block that holds it, before any data is
//! read; [`stats`] holds the arithmetic and [`format`] the number formats.

mod eval;
mod format;
mod parse;
mod stats;

pub(crate) use eval::Env;
use format::shortest;
pub(crate) use format::Format;
pub(crate) use stats::{median, percentile};

use serde::Deserialize;
use serde_json::Value;
use std::fmt;

/// The two-value operations a table column names with `"derive"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Op {
    PctChange,
    Difference,
    Ratio,
}

impl Op {
    pub(crate) fn func(self) -> Func {
        match self {
            Op::PctChange => Func::PctChange,
            Op::Difference => Func::Difference,
            Op::Ratio => Func::Ratio,
        }
    }

    pub(crate) fn apply(self, from: f64, to: f64) -> Result<f64, String> {
        match self {
            Op::Difference => Ok(to - from),
            Op::PctChange | Op::Ratio if from == 0.0 => {
                Err("cannot divide by a `from` value of zero".into())
            }
            Op::PctChange => Ok((to - from) / from * 100.0),
            Op::Ratio => Ok(to / from),
        }
    }
}

/// A function an expression can call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Func {
    PctChange,
    Difference,
    Ratio,
    Count,
    Sum,
    Min,
    Max,
    Mean,
    Median,
    Stddev,
    P,
    CiLow,
    CiHigh,
    Number,
    Baseline,
}

const FUNCS: &[(&str, Func)] = &[
    ("pct_change", Func::PctChange),
    ("difference", Func::Difference),
    ("ratio", Func::Ratio),
    ("count", Func::Count),
    ("sum", Func::Sum),
    ("min", Func::Min),
    ("max", Func::Max),
    ("mean", Func::Mean),
    ("median", Func::Median),
    ("stddev", Func::Stddev),
    ("p", Func::P),
    ("ci_low", Func::CiLow),
    ("ci_high", Func::CiHigh),
    ("number", Func::Number),
    ("baseline", Func::Baseline),
];

impl Func {
    pub(crate) const ALL_NAMES: &'static str = "pct_change, difference, ratio, count, sum, min, max, mean, median, stddev, p, ci_low, ci_high, number or baseline";

    fn parse(name: &str) -> Option<Func> {
        FUNCS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
    }

    pub(crate) fn name(self) -> &'static str {
        FUNCS
            .iter()
            .find(|(_, f)| *f == self)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    }

    fn check_arity(self, n: usize) -> Result<(), String> {
        let name = self.name();
        let want = match self {
            Func::PctChange | Func::Difference | Func::Ratio => {
                (n != 2).then(|| format!("`{name}` takes 2 values, `{name}(from, to)`"))
            }
            Func::P => (n != 2).then(|| "`p` takes 2 values, `p(PERCENT, LIST)`".to_string()),
            Func::CiLow | Func::CiHigh | Func::Number | Func::Baseline => {
                (n != 1).then(|| format!("`{name}` takes 1 value, found {n}"))
            }
            // List functions take one list, or several values joined.
            _ => None,
        };
        want.map_or(Ok(()), Err)
    }
}

/// A JSON Pointer into a record; a plain field name `a` means `/a`. A `*`
/// segment fans out over every element of an array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ref(pub String);

impl Ref {
    pub(crate) fn new(s: &str) -> Ref {
        let s = s.trim();
        if s.starts_with('/') || s.is_empty() {
            Ref(s.to_string())
        } else {
            Ref(format!("/{}", s.replace('~', "~0").replace('/', "~1")))
        }
    }

    /// The name to show in messages: the field, or the pointer.
    pub(crate) fn name(&self) -> String {
        let inner = &self.0[1.min(self.0.len())..];
        if inner.contains('/') {
            self.0.clone()
        } else {
            inner.replace("~1", "/").replace("~0", "~")
        }
    }
}

/// A parsed expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expr {
    Value(Ref),
    Number(f64),
    Call(Func, Vec<Expr>),
}

impl Expr {
    pub(crate) fn parse(s: &str) -> Result<Expr, String> {
        parse::parse(s)
    }

    /// The two-value operation of a table's `derive` column.
    pub(crate) fn derive(op: Op, from: &str, to: &str) -> Result<Expr, String> {
        Ok(Expr::Call(
            op.func(),
            vec![Expr::parse(from)?, Expr::parse(to)?],
        ))
    }

    /// The name to show in messages.
    pub(crate) fn name(&self) -> String {
        match self {
            Expr::Value(r) => r.name(),
            Expr::Number(n) => shortest(*n),
            Expr::Call(f, _) => format!("{}(…)", f.name()),
        }
    }

    pub(crate) fn uses_baseline(&self) -> bool {
        match self {
            Expr::Call(Func::Baseline, _) => true,
            Expr::Call(_, args) => args.iter().any(Expr::uses_baseline),
            _ => false,
        }
    }

    pub(crate) fn eval(&self, ctx: &Value) -> Result<Scalar, EvalError> {
        self.eval_in(&Env::of(ctx))
    }

    /// Evaluate and format: a format requires a number.
    pub(crate) fn render(&self, ctx: &Value, format: Option<&Format>) -> Result<Scalar, EvalError> {
        self.render_in(&Env::of(ctx), format)
    }

    pub(crate) fn render_in(
        &self,
        env: &Env,
        format: Option<&Format>,
    ) -> Result<Scalar, EvalError> {
        let value = self.eval_in(env)?;
        match format {
            None => Ok(value),
            Some(f) => match &value {
                Scalar::Number(n, _) => Ok(Scalar::Number(*n, f.apply(*n))),
                Scalar::Null => Err(EvalError::Null(self.name())),
                _ => Err(EvalError::NotNumber(self.name(), describe(&value))),
            },
        }
    }
}

/// A value taken from data.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Scalar {
    Number(f64, String),
    Text(String),
    Bool(bool),
    Null,
}

impl Scalar {
    pub(crate) fn from_json(v: &Value) -> Option<Scalar> {
        match v {
            Value::Number(n) => Some(Scalar::Number(n.as_f64()?, n.to_string())),
            Value::String(s) => Some(Scalar::Text(s.clone())),
            Value::Bool(b) => Some(Scalar::Bool(*b)),
            Value::Null => Some(Scalar::Null),
            _ => None,
        }
    }

    /// A computed number, shown shortest at 12 significant digits, so
    /// binary rounding (`3.2300000000000004`) never reaches a page.
    pub(crate) fn computed(v: f64) -> Scalar {
        let shown = format!("{v:.11e}").parse::<f64>().unwrap_or(v);
        Scalar::Number(v, shortest(shown))
    }

    pub(crate) fn number(&self) -> Option<f64> {
        match self {
            Scalar::Number(n, _) => Some(*n),
            _ => None,
        }
    }

    pub(crate) fn is_number(&self) -> bool {
        matches!(self, Scalar::Number(..))
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Number(_, repr) => f.write_str(repr),
            Scalar::Text(s) => f.write_str(s),
            Scalar::Bool(b) => write!(f, "{b}"),
            Scalar::Null => Ok(()),
        }
    }
}

/// Why a value could not be produced; the caller adds file and record.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum EvalError {
    Missing(String),
    NotScalar(String),
    NotNumber(String, String),
    /// Null where a number is needed: a failed measurement.
    Null(String),
    /// A list where one value is needed.
    List(String, usize),
    Math(String),
}

impl EvalError {
    /// A null where a number is needed: a failed measurement, which a
    /// table shows as missing. An absent field stays an error: it is a
    /// misspelt name or a record of another shape more often than a result.
    pub(crate) fn is_null(&self) -> bool {
        matches!(self, EvalError::Null(_))
    }
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::Missing(name) => write!(f, "`{name}` is missing"),
            EvalError::NotScalar(name) => write!(f, "`{name}` is an object or array, not a value"),
            EvalError::NotNumber(name, got) => write!(f, "`{name}` is {got}, not a number"),
            EvalError::Null(name) => write!(f, "`{name}` is null, not a number"),
            EvalError::List(name, n) => write!(
                f,
                "`{name}` is a list of {n} values, not one value: wrap it in a function such as `median(…)` or `sum(…)`"
            ),
            EvalError::Math(why) => f.write_str(why),
        }
    }
}

fn describe(s: &Scalar) -> String {
    match s {
        Scalar::Text(t) => format!("the text {t:?}"),
        Scalar::Bool(b) => format!("the boolean {b}"),
        Scalar::Null => "null".into(),
        Scalar::Number(_, r) => r.clone(),
    }
}

/// A placeholder with its optional format.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Slot {
    pub(crate) expr: Expr,
    pub(crate) format: Option<Format>,
}

impl Slot {
    /// `EXPR` or `EXPR:FORMAT`; the format starts at the first `:` after any `)`.
    pub(crate) fn parse(s: &str) -> Result<Slot, String> {
        let search_from = s.rfind(')').unwrap_or(0);
        let (expr, format) = match s[search_from..].find(':') {
            Some(i) => (
                &s[..search_from + i],
                Some(Format::parse(&s[search_from + i + 1..])?),
            ),
            None => (s, None),
        };
        Ok(Slot {
            expr: Expr::parse(expr)?,
            format,
        })
    }

    pub(crate) fn render(&self, ctx: &Value) -> Result<Scalar, EvalError> {
        self.render_in(&Env::of(ctx))
    }

    pub(crate) fn render_in(&self, env: &Env) -> Result<Scalar, EvalError> {
        self.expr.render_in(env, self.format.as_ref())
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(String),
    Slot(Slot),
}

/// Text with `{EXPR[:FORMAT]}` placeholders; `{{` and `}}` are literal braces.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Template(Vec<Piece>);

impl Template {
    pub(crate) fn parse(s: &str) -> Result<Template, String> {
        let mut pieces = Vec::new();
        let mut text = String::new();
        let mut chars = s.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                '{' if chars.peek().map(|p| p.1) == Some('{') => {
                    chars.next();
                    text.push('{');
                }
                '}' if chars.peek().map(|p| p.1) == Some('}') => {
                    chars.next();
                    text.push('}');
                }
                '{' => {
                    let rest = &s[i + 1..];
                    let close = rest.find('}').ok_or_else(|| {
                        format!("template {s:?}: `{{` at {} is never closed", i + 1)
                    })?;
                    if !text.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut text)));
                    }
                    pieces.push(Piece::Slot(
                        Slot::parse(&rest[..close]).map_err(|e| format!("template {s:?}: {e}"))?,
                    ));
                    for _ in 0..rest[..close].chars().count() + 1 {
                        chars.next();
                    }
                }
                '}' => {
                    return Err(format!(
                        "template {s:?}: a lone `}}` (write `}}}}` for a brace)"
                    ))
                }
                c => text.push(c),
            }
        }
        if !text.is_empty() {
            pieces.push(Piece::Text(text));
        }
        Ok(Template(pieces))
    }

    pub(crate) fn render(&self, ctx: &Value) -> Result<String, EvalError> {
        self.render_in(&Env::of(ctx))
    }

    pub(crate) fn render_in(&self, env: &Env) -> Result<String, EvalError> {
        let mut out = String::new();
        for p in &self.0 {
            match p {
                Piece::Text(t) => out.push_str(t),
                Piece::Slot(slot) => out.push_str(&slot.render_in(env)?.to_string()),
            }
        }
        Ok(out)
    }

    /// The placeholders, in order (the typed-figure check evaluates each).
    pub(crate) fn slots(&self) -> impl Iterator<Item = &Slot> {
        self.0.iter().filter_map(|p| match p {
            Piece::Slot(s) => Some(s),
            Piece::Text(_) => None,
        })
    }

    /// Does a placeholder read a table's baseline row?
    pub(crate) fn uses_baseline(&self) -> bool {
        self.0
            .iter()
            .any(|p| matches!(p, Piece::Slot(s) if s.expr.uses_baseline()))
    }

    /// True when the template is a single placeholder (its cell is a number).
    pub(crate) fn is_single_number_slot(&self) -> bool {
        matches!(self.0.as_slice(), [Piece::Slot(s)] if s.format.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn seed_decode_changes_come_from_raw_values() {
        let cells = [
            (112.07, 149.02, "+33.0%"),
            (96.17, 125.03, "+30.0%"),
            (102.42, 124.46, "+21.5%"),
            (99.79, 120.29, "+20.5%"),
        ];
        let fmt = Format::parse("+.1%").unwrap();
        for (wsl, linux, want) in cells {
            assert_eq!(fmt.apply(Op::PctChange.apply(wsl, linux).unwrap()), want);
        }
    }

    #[test]
    fn templates() {
        let ctx = json!({"a": 149.02, "b": 112.07, "name": "x", "nested": {"n": 3}});
        let t = Template::parse("{a:.2} vs {b} ({pct_change(b, a):+.1%}) n={/nested/n} {{lit}}")
            .unwrap();
        assert_eq!(
            t.render(&ctx).unwrap(),
            "149.02 vs 112.07 (+33.0%) n=3 {lit}"
        );
        let t = Template::parse("{name:.1}").unwrap();
        assert_eq!(
            t.render(&ctx),
            Err(EvalError::NotNumber("name".into(), "the text \"x\"".into()))
        );
        assert_eq!(
            Template::parse("{zz}").unwrap().render(&ctx),
            Err(EvalError::Missing("zz".into()))
        );
        assert!(Template::parse("{a").is_err());
        assert!(Template::parse("{avg(a,b)}").is_err());
    }
}
