//! Values inside data records: field references, derived numbers
//! (`pct_change`, `difference`, `ratio`), number formats (`+,.1%`) and text
//! templates (`"{after:.2} versus {before:.2} tok/s"`).
//!
//! Parsing is separate from evaluation so a bad template is reported at the
//! block that holds it, before any data is read.

use serde::Deserialize;
use serde_json::Value;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    PctChange,
    Difference,
    Ratio,
}

impl Op {
    fn parse(name: &str) -> Option<Op> {
        match name {
            "pct_change" => Some(Op::PctChange),
            "difference" => Some(Op::Difference),
            "ratio" => Some(Op::Ratio),
            _ => None,
        }
    }

    pub fn apply(self, from: f64, to: f64) -> Result<f64, String> {
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

/// A JSON Pointer into a record; a plain field name `a` means `/a`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ref(pub String);

impl Ref {
    pub fn new(s: &str) -> Ref {
        let s = s.trim();
        if s.starts_with('/') || s.is_empty() {
            Ref(s.to_string())
        } else {
            Ref(format!("/{}", s.replace('~', "~0").replace('/', "~1")))
        }
    }

    /// The name to show in messages: the field, or the pointer.
    pub fn name(&self) -> String {
        let inner = &self.0[1.min(self.0.len())..];
        if inner.contains('/') {
            self.0.clone()
        } else {
            inner.replace("~1", "/").replace("~0", "~")
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Value(Ref),
    Derive(Op, Ref, Ref),
}

impl Expr {
    pub fn parse(s: &str) -> Result<Expr, String> {
        let s = s.trim();
        if let Some(open) = s.find('(') {
            let name = s[..open].trim();
            let op = Op::parse(name).ok_or_else(|| {
                format!("unknown operation `{name}`: use pct_change, difference or ratio")
            })?;
            let inner = s[open + 1..]
                .strip_suffix(')')
                .ok_or_else(|| format!("`{s}` lacks its closing `)`"))?;
            let (a, b) = inner
                .split_once(',')
                .ok_or_else(|| format!("`{name}` takes two values: `{name}(from, to)`"))?;
            if a.trim().is_empty() || b.trim().is_empty() || b.contains(',') {
                return Err(format!("`{name}` takes two values: `{name}(from, to)`"));
            }
            return Ok(Expr::Derive(op, Ref::new(a), Ref::new(b)));
        }
        if s.is_empty() {
            return Err("empty value reference".into());
        }
        Ok(Expr::Value(Ref::new(s)))
    }
}

/// `[+][,][.N][SUFFIX]`
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Format {
    pub sign: bool,
    pub thousands: bool,
    pub precision: Option<usize>,
    pub suffix: String,
}

impl Format {
    pub fn parse(s: &str) -> Result<Format, String> {
        let mut f = Format::default();
        let mut rest = s;
        if let Some(r) = rest.strip_prefix('+') {
            f.sign = true;
            rest = r;
        }
        if let Some(r) = rest.strip_prefix(',') {
            f.thousands = true;
            rest = r;
        }
        if let Some(r) = rest.strip_prefix('.') {
            let digits = r.chars().take_while(char::is_ascii_digit).count();
            if digits == 0 {
                return Err(format!(
                    "format `{s}`: `.` must be followed by the number of decimals"
                ));
            }
            let n: usize = r[..digits]
                .parse()
                .map_err(|_| format!("format `{s}`: too many decimals"))?;
            if n > 12 {
                return Err(format!("format `{s}`: at most 12 decimals"));
            }
            f.precision = Some(n);
            rest = &r[digits..];
        }
        f.suffix = rest.to_string();
        Ok(f)
    }

    pub fn apply(&self, v: f64) -> String {
        let body = match self.precision {
            Some(p) => format!("{:.*}", p, v.abs()),
            None => shortest(v.abs()),
        };
        let body = if self.thousands {
            group_thousands(&body)
        } else {
            body
        };
        let zero = body.bytes().all(|b| matches!(b, b'0' | b'.' | b','));
        let sign = if zero {
            ""
        } else if v < 0.0 {
            "-"
        } else if self.sign {
            "+"
        } else {
            ""
        };
        format!("{sign}{body}{}", self.suffix)
    }
}

fn shortest(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn group_thousands(s: &str) -> String {
    let (int, frac) = match s.find('.') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    let mut out = String::with_capacity(s.len() + int.len() / 3);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out.push_str(frac);
    out
}

/// A value taken from data.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    Number(f64, String),
    Text(String),
    Bool(bool),
    Null,
}

impl Scalar {
    pub fn from_json(v: &Value) -> Option<Scalar> {
        match v {
            Value::Number(n) => Some(Scalar::Number(n.as_f64()?, n.to_string())),
            Value::String(s) => Some(Scalar::Text(s.clone())),
            Value::Bool(b) => Some(Scalar::Bool(*b)),
            Value::Null => Some(Scalar::Null),
            _ => None,
        }
    }

    pub fn number(&self) -> Option<f64> {
        match self {
            Scalar::Number(n, _) => Some(*n),
            _ => None,
        }
    }

    pub fn is_number(&self) -> bool {
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
pub enum EvalError {
    Missing(String),
    NotScalar(String),
    NotNumber(String, String),
    Math(String),
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::Missing(name) => write!(f, "`{name}` is missing"),
            EvalError::NotScalar(name) => write!(f, "`{name}` is an object or array, not a value"),
            EvalError::NotNumber(name, got) => write!(f, "`{name}` is {got}, not a number"),
            EvalError::Math(why) => f.write_str(why),
        }
    }
}

fn lookup(ctx: &Value, r: &Ref) -> Result<Scalar, EvalError> {
    let v = ctx
        .pointer(&r.0)
        .ok_or_else(|| EvalError::Missing(r.name()))?;
    Scalar::from_json(v).ok_or_else(|| EvalError::NotScalar(r.name()))
}

fn lookup_number(ctx: &Value, r: &Ref) -> Result<f64, EvalError> {
    let s = lookup(ctx, r)?;
    s.number()
        .ok_or_else(|| EvalError::NotNumber(r.name(), describe(&s)))
}

fn describe(s: &Scalar) -> String {
    match s {
        Scalar::Text(t) => format!("the text {t:?}"),
        Scalar::Bool(b) => format!("the boolean {b}"),
        Scalar::Null => "null".into(),
        Scalar::Number(_, r) => r.clone(),
    }
}

impl Expr {
    pub fn eval(&self, ctx: &Value) -> Result<Scalar, EvalError> {
        match self {
            Expr::Value(r) => lookup(ctx, r),
            Expr::Derive(op, a, b) => {
                let v = op
                    .apply(lookup_number(ctx, a)?, lookup_number(ctx, b)?)
                    .map_err(EvalError::Math)?;
                Ok(Scalar::Number(v, shortest(v)))
            }
        }
    }

    /// Evaluate and format: a format requires a number.
    pub fn render(&self, ctx: &Value, format: Option<&Format>) -> Result<Scalar, EvalError> {
        let value = self.eval(ctx)?;
        match format {
            None => Ok(value),
            Some(f) => match value.number() {
                Some(n) => Ok(Scalar::Number(n, f.apply(n))),
                None => {
                    let name = match self {
                        Expr::Value(r) => r.name(),
                        Expr::Derive(..) => "value".into(),
                    };
                    Err(EvalError::NotNumber(name, describe(&value)))
                }
            },
        }
    }
}

/// A placeholder with its optional format.
#[derive(Debug, Clone, PartialEq)]
pub struct Slot {
    pub expr: Expr,
    pub format: Option<Format>,
}

impl Slot {
    /// `EXPR` or `EXPR:FORMAT`; the format starts at the first `:` after any `)`.
    pub fn parse(s: &str) -> Result<Slot, String> {
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

    pub fn render(&self, ctx: &Value) -> Result<Scalar, EvalError> {
        self.expr.render(ctx, self.format.as_ref())
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(String),
    Slot(Slot),
}

/// Text with `{EXPR[:FORMAT]}` placeholders; `{{` and `}}` are literal braces.
#[derive(Debug, Clone, PartialEq)]
pub struct Template(Vec<Piece>);

impl Template {
    pub fn parse(s: &str) -> Result<Template, String> {
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

    pub fn render(&self, ctx: &Value) -> Result<String, EvalError> {
        let mut out = String::new();
        for p in &self.0 {
            match p {
                Piece::Text(t) => out.push_str(t),
                Piece::Slot(slot) => out.push_str(&slot.render(ctx)?.to_string()),
            }
        }
        Ok(out)
    }

    /// True when the template is a single placeholder (its cell is a number).
    pub fn is_single_number_slot(&self) -> bool {
        matches!(self.0.as_slice(), [Piece::Slot(s)] if s.format.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn formats() {
        let f = |s: &str, v: f64| Format::parse(s).unwrap().apply(v);
        assert_eq!(f("+.1%", 32.97), "+33.0%");
        assert_eq!(f(",.0", 16729.0), "16,729");
        assert_eq!(f(",", 1234567.5), "1,234,567.5");
        assert_eq!(f(".2 tok/s", 149.0234), "149.02 tok/s");
        assert_eq!(f("+.1", -2.26), "-2.3");
        assert_eq!(f("+.1", -0.01), "0.0");
        assert_eq!(f("", 300.0), "300");
        assert!(Format::parse(".x").is_err());
    }

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
