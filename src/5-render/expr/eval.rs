//! Evaluation: pointers (with `*` fan-out) into values or lists, and
//! functions over them. Two-value operations work element by element and
//! broadcast a single value against a list; list functions join all their
//! arguments into one list.

use super::{describe, stats, EvalError, Expr, Func, Op, Ref, Scalar};
use serde_json::Value;

/// What an expression reads: the record, and in a table with a
/// `baseline`, the baseline row that `baseline(X)` reads.
pub(crate) struct Env<'a> {
    pub(crate) rec: &'a Value,
    pub(crate) baseline: Option<&'a Value>,
}

impl<'a> Env<'a> {
    pub(crate) fn of(rec: &'a Value) -> Env<'a> {
        Env {
            rec,
            baseline: None,
        }
    }
}

/// A value with the name messages give it.
#[derive(Debug, Clone)]
struct Item {
    v: Scalar,
    name: String,
}

impl Item {
    fn number(&self) -> Result<f64, EvalError> {
        match &self.v {
            Scalar::Number(n, _) => Ok(*n),
            Scalar::Null => Err(EvalError::Null(self.name.clone())),
            other => Err(EvalError::NotNumber(self.name.clone(), describe(other))),
        }
    }
}

#[derive(Debug)]
enum Val {
    One(Item),
    List(Vec<Item>),
}

impl Val {
    fn items(self) -> Vec<Item> {
        match self {
            Val::One(i) => vec![i],
            Val::List(l) => l,
        }
    }
}

fn escape(seg: &str) -> String {
    seg.replace('~', "~0").replace('/', "~1")
}

fn kind(v: &Value) -> &'static str {
    crate::data::kind(v)
}

fn scalar(v: &Value, name: String) -> Result<Item, EvalError> {
    Scalar::from_json(v)
        .map(|v| Item {
            v,
            name: name.clone(),
        })
        .ok_or(EvalError::NotScalar(name))
}

/// Follow a pointer; each `*` segment fans out over an array.
fn lookup(ctx: &Value, r: &Ref) -> Result<Val, EvalError> {
    let mut at: Vec<(&Value, String)> = vec![(ctx, String::new())];
    let mut wild = false;
    let segments =
        r.0.split('/')
            .skip(1)
            .map(|s| s.replace("~1", "/").replace("~0", "~"));
    for seg in segments {
        let mut next = Vec::with_capacity(at.len());
        for (v, path) in at {
            if seg == "*" {
                let Value::Array(items) = v else {
                    return Err(EvalError::Math(format!(
                        "`{}`: `{}` is {}, not an array, so `*` cannot fan out over it",
                        r.0,
                        if path.is_empty() { "/" } else { &path },
                        kind(v)
                    )));
                };
                next.extend(
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, el)| (el, format!("{path}/{i}"))),
                );
                continue;
            }
            let child = match v {
                Value::Object(m) => m.get(&seg),
                Value::Array(a) => seg.parse::<usize>().ok().and_then(|i| a.get(i)),
                _ => None,
            };
            let path = format!("{path}/{}", escape(&seg));
            match child {
                Some(c) => next.push((c, path)),
                None if wild => return Err(EvalError::Missing(path)),
                None => return Err(EvalError::Missing(r.name())),
            }
        }
        wild |= seg == "*";
        at = next;
    }
    if wild {
        return at
            .into_iter()
            .map(|(v, path)| scalar(v, path))
            .collect::<Result<_, _>>()
            .map(Val::List);
    }
    let (v, _) = at[0];
    match v {
        // A pointer to an array of values is a list (hyperfine's `times`).
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, el)| scalar(el, format!("{}/{i}", r.0)))
            .collect::<Result<_, _>>()
            .map(Val::List),
        _ => scalar(v, r.name()).map(Val::One),
    }
}

fn computed(v: f64, name: String) -> Item {
    Item {
        v: Scalar::computed(v),
        name,
    }
}

/// `pct_change`, `difference`, `ratio`: pairwise, a single value broadcast.
fn pairwise(op: Op, f: Func, a: Val, b: Val) -> Result<Val, EvalError> {
    let apply = |x: &Item, y: &Item| -> Result<Item, EvalError> {
        let v = op
            .apply(x.number()?, y.number()?)
            .map_err(|e| EvalError::Math(format!("`{}`: {e} (`{}`)", f.name(), x.name)))?;
        Ok(computed(v, format!("{}({}, {})", f.name(), x.name, y.name)))
    };
    match (a, b) {
        (Val::One(x), Val::One(y)) => apply(&x, &y).map(Val::One),
        (Val::One(x), Val::List(ys)) => ys
            .iter()
            .map(|y| apply(&x, y))
            .collect::<Result<_, _>>()
            .map(Val::List),
        (Val::List(xs), Val::One(y)) => xs
            .iter()
            .map(|x| apply(x, &y))
            .collect::<Result<_, _>>()
            .map(Val::List),
        (Val::List(xs), Val::List(ys)) if xs.len() == ys.len() => xs
            .iter()
            .zip(&ys)
            .map(|(x, y)| apply(x, y))
            .collect::<Result<_, _>>()
            .map(Val::List),
        (Val::List(xs), Val::List(ys)) => Err(EvalError::Math(format!(
            "`{}` pairs its lists element by element, but they hold {} and {} values",
            f.name(),
            xs.len(),
            ys.len()
        ))),
    }
}

/// The numbers of a list function's arguments, joined; never empty.
fn numbers(f: Func, items: &[Item]) -> Result<Vec<f64>, EvalError> {
    if items.is_empty() {
        return Err(EvalError::Math(format!(
            "`{}` over an empty list",
            f.name()
        )));
    }
    items
        .iter()
        .map(|i| {
            i.number().map_err(|e| match e {
                // null stays null: a failed cell, shown as missing in a table
                EvalError::Null(_) => e,
                e => EvalError::Math(format!("`{}` needs numbers: {e}", f.name())),
            })
        })
        .collect()
}

fn single(f: Func, v: Val) -> Result<Item, EvalError> {
    match v {
        Val::One(i) => Ok(i),
        Val::List(l) => Err(EvalError::Math(format!(
            "`{}` takes one value here, found a list of {}",
            f.name(),
            l.len()
        ))),
    }
}

/// The element at the extreme, kept as the data wrote it.
fn extreme(f: Func, items: Vec<Item>) -> Result<Item, EvalError> {
    let xs = numbers(f, &items)?;
    let mut best = 0;
    for (i, x) in xs.iter().enumerate() {
        let better = if f == Func::Min {
            *x < xs[best]
        } else {
            *x > xs[best]
        };
        if better {
            best = i;
        }
    }
    Ok(items.into_iter().nth(best).expect("non-empty"))
}

impl Expr {
    fn value(&self, env: &Env) -> Result<Val, EvalError> {
        match self {
            Expr::Value(r) => lookup(env.rec, r),
            Expr::Number(n) => Ok(Val::One(computed(*n, self.name()))),
            Expr::Call(f, args) => call(*f, args, env),
        }
    }

    /// Every value the expression reads, one or a list (a chart's per-run
    /// samples): `times`, `runs/*/decode`.
    pub(crate) fn eval_list(&self, rec: &Value) -> Result<Vec<Scalar>, EvalError> {
        Ok(self
            .value(&Env::of(rec))?
            .items()
            .into_iter()
            .map(|i| i.v)
            .collect())
    }

    pub(crate) fn eval_in(&self, env: &Env) -> Result<Scalar, EvalError> {
        match self.value(env)? {
            Val::One(i) => Ok(i.v),
            Val::List(l) => Err(EvalError::List(self.name(), l.len())),
        }
    }
}

fn call(f: Func, args: &[Expr], env: &Env) -> Result<Val, EvalError> {
    let name = |what: &str| format!("{}({what})", f.name());
    let op = match f {
        Func::PctChange => Some(Op::PctChange),
        Func::Difference => Some(Op::Difference),
        Func::Ratio => Some(Op::Ratio),
        _ => None,
    };
    if let Some(op) = op {
        return pairwise(op, f, args[0].value(env)?, args[1].value(env)?);
    }
    match f {
        Func::Baseline => {
            let rec = env.baseline.ok_or_else(|| {
                EvalError::Math(
                    "`baseline(…)` reads a table's baseline row: only a table with `baseline` has one"
                        .into(),
                )
            })?;
            return args[0].value(&Env::of(rec));
        }
        Func::Number => {
            let i = single(f, args[0].value(env)?)?;
            let v = match &i.v {
                Scalar::Number(..) => i.v.clone(),
                Scalar::Text(t) => match t.trim().parse::<f64>() {
                    Ok(n) if n.is_finite() => Scalar::Number(n, t.trim().to_string()),
                    _ => return Err(EvalError::NotNumber(i.name, describe(&i.v))),
                },
                Scalar::Null => return Err(EvalError::Null(i.name)),
                other => return Err(EvalError::NotNumber(i.name, describe(other))),
            };
            return Ok(Val::One(Item { v, name: i.name }));
        }
        Func::P => {
            let q = single(f, args[0].value(env)?)?.number()?;
            let xs = numbers(f, &args[1].value(env)?.items())?;
            let v = stats::percentile(&xs, q).map_err(EvalError::Math)?;
            return Ok(Val::One(computed(v, name("…"))));
        }
        _ => {}
    }
    let mut items = Vec::new();
    for a in args {
        items.extend(a.value(env)?.items());
    }
    if f == Func::Count {
        return Ok(Val::One(computed(items.len() as f64, name("…"))));
    }
    if matches!(f, Func::Min | Func::Max) {
        return extreme(f, items).map(Val::One);
    }
    let xs = numbers(f, &items)?;
    let v = match f {
        Func::Sum => stats::sum(&xs),
        Func::Mean => stats::mean(&xs),
        Func::Median => stats::median(&xs),
        Func::Stddev => stats::stddev(&xs).map_err(EvalError::Math)?,
        Func::CiLow => stats::median_ci(&xs).0,
        Func::CiHigh => stats::median_ci(&xs).1,
        _ => unreachable!("every function is handled above"),
    };
    Ok(Val::One(computed(v, name("…"))))
}

#[cfg(test)]
mod tests {
    use super::super::Template;
    use super::*;
    use serde_json::json;

    fn eval(s: &str, ctx: &Value) -> Result<Scalar, EvalError> {
        Expr::parse(s).unwrap().eval(ctx)
    }

    #[test]
    fn fan_out_and_broadcast() {
        let ctx = json!({"cells": [{"a": 100, "b": 110}, {"a": 200, "b": 150}],
                         "m": [[1, 2], [3, 4]], "obj": {"x": 1}});
        assert_eq!(eval("sum(/cells/*/a)", &ctx).unwrap().number(), Some(300.0));
        assert_eq!(
            eval("max(pct_change(/cells/*/a, /cells/*/b))", &ctx)
                .unwrap()
                .number(),
            Some(10.0)
        );
        assert_eq!(
            eval("min(pct_change(/cells/0/a, /cells/*/a))", &ctx)
                .unwrap()
                .number(),
            Some(0.0)
        );
        assert_eq!(eval("sum(/m/*/*)", &ctx).unwrap().number(), Some(10.0));
        assert_eq!(eval("count(/m/*/1)", &ctx).unwrap().number(), Some(2.0));
        assert_eq!(eval("min(/cells/*/b)", &ctx).unwrap().to_string(), "110");
        assert!(matches!(
            eval("/cells/*/a", &ctx),
            Err(EvalError::List(_, 2))
        ));
        let e = eval("sum(/obj/*/x)", &ctx).unwrap_err().to_string();
        assert!(e.contains("`/obj` is an object, not an array"), "{e}");
        let e = eval("mean(/cells/*/zz)", &ctx).unwrap_err();
        assert_eq!(e, EvalError::Missing("/cells/0/zz".into()));
    }

    #[test]
    fn list_errors() {
        let ctx = json!({"e": [], "t": ["a", 1], "n": [1, 2, 3]});
        let e = eval("median(/e)", &ctx).unwrap_err().to_string();
        assert_eq!(e, "`median` over an empty list");
        let e = eval("sum(/t)", &ctx).unwrap_err().to_string();
        assert_eq!(
            e,
            "`sum` needs numbers: `/t/0` is the text \"a\", not a number"
        );
        assert_eq!(eval("count(/e)", &ctx).unwrap().number(), Some(0.0));
        let e = eval("ratio(/n, /t)", &ctx).unwrap_err().to_string();
        assert!(e.contains("they hold 3 and 2 values"), "{e}");
        assert_eq!(eval("p(50, /n)", &ctx).unwrap().number(), Some(2.0));
    }

    #[test]
    fn templates_call_functions() {
        let ctx = json!({"times": [0.1, 0.2, 0.3, 0.4], "params": {"bytes": "1000"}});
        let t = Template::parse(
            "{median(/times):.0 ms from s} {ratio(mean(/times), number(/params/bytes)):.1}",
        )
        .unwrap();
        assert_eq!(t.render(&ctx).unwrap(), "250 ms 4000.0");
        let e = Template::parse("{baseline(/times)}").unwrap();
        assert!(e.uses_baseline());
        assert!(e.render(&ctx).is_err());
    }
}
