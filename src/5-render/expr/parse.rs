//! The expression grammar, read before any data:
//!
//! ```text
//! expr := NAME '(' expr (',' expr)* ')' | NUMBER | POINTER
//! ```
//!
//! A tokenizer splits on `(`, `)` and `,`; everything between is a word,
//! so pointers keep any other character (`/results/0/times`, `a.b`).
//! Errors give the column inside the expression, counted from 1.

use super::{Expr, Func, Ref};

#[derive(Debug, Clone, PartialEq)]
enum Tok<'a> {
    Open,
    Close,
    Comma,
    Word(&'a str),
}

/// Tokens with the character column each starts at.
fn tokenize(s: &str) -> Vec<(Tok<'_>, usize)> {
    let col = |byte: usize| s[..byte].chars().count() + 1;
    let mut out = Vec::new();
    let mut word_start: Option<usize> = None;
    let flush = |out: &mut Vec<_>, start: Option<usize>, end: usize| {
        if let Some(b) = start {
            let raw: &str = &s[b..end];
            let lead = raw.len() - raw.trim_start().len();
            if !raw.trim().is_empty() {
                out.push((Tok::Word(raw.trim()), col(b + lead)));
            }
        }
    };
    for (i, c) in s.char_indices() {
        let punct = match c {
            '(' => Tok::Open,
            ')' => Tok::Close,
            ',' => Tok::Comma,
            _ => {
                word_start.get_or_insert(i);
                continue;
            }
        };
        flush(&mut out, word_start.take(), i);
        out.push((punct, col(i)));
    }
    flush(&mut out, word_start, s.len());
    out
}

struct Parser<'a> {
    src: &'a str,
    toks: Vec<(Tok<'a>, usize)>,
    at: usize,
}

impl<'a> Parser<'a> {
    fn err(&self, col: usize, msg: impl std::fmt::Display) -> String {
        format!("`{}` at column {col}: {msg}", self.src)
    }

    /// Column of the current token, or just past the end.
    fn col(&self) -> usize {
        self.toks
            .get(self.at)
            .map(|t| t.1)
            .unwrap_or(self.src.chars().count() + 1)
    }

    fn peek(&self) -> Option<&Tok<'a>> {
        self.toks.get(self.at).map(|t| &t.0)
    }

    fn expr(&mut self) -> Result<Expr, String> {
        let col = self.col();
        let word = match self.peek() {
            Some(Tok::Word(w)) => *w,
            _ => return Err(self.err(col, "expected a value, a pointer or a function")),
        };
        self.at += 1;
        if self.peek() != Some(&Tok::Open) {
            if !word.starts_with('/') {
                if let Ok(n) = word.parse::<f64>() {
                    return Ok(Expr::Number(n));
                }
            }
            return Ok(Expr::Value(Ref::new(word)));
        }
        let func = Func::parse(word).ok_or_else(|| {
            self.err(
                col,
                format!("unknown function `{word}`: use {}", Func::ALL_NAMES),
            )
        })?;
        self.at += 1;
        let mut args = vec![self.expr()?];
        loop {
            let c = self.col();
            match self.peek() {
                Some(Tok::Comma) => {
                    self.at += 1;
                    args.push(self.expr()?);
                }
                Some(Tok::Close) => {
                    self.at += 1;
                    break;
                }
                _ => return Err(self.err(c, format!("`{word}(` lacks its closing `)`"))),
            }
        }
        func.check_arity(args.len()).map_err(|m| self.err(col, m))?;
        Ok(Expr::Call(func, args))
    }
}

/// Parse a whole expression. Text with no `(` is one pointer or field name,
/// whatever it holds, as before functions existed.
pub(crate) fn parse(s: &str) -> Result<Expr, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("empty value reference".into());
    }
    if !s.contains(['(', ')']) {
        return Ok(Expr::Value(Ref::new(s)));
    }
    let mut p = Parser {
        src: s,
        toks: tokenize(s),
        at: 0,
    };
    let e = p.expr()?;
    if p.at < p.toks.len() {
        let c = p.col();
        return Err(p.err(c, "unexpected text after the expression"));
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_calls_and_literals() {
        let e = parse("max(pct_change(/cells/*/a, /cells/*/b))").unwrap();
        let Expr::Call(Func::Max, args) = e else {
            panic!("{e:?}")
        };
        assert!(matches!(&args[0], Expr::Call(Func::PctChange, a) if a.len() == 2));
        assert_eq!(
            parse("p(90, /times)").unwrap(),
            Expr::Call(
                Func::P,
                vec![Expr::Number(90.0), Expr::Value(Ref::new("/times"))]
            )
        );
        assert_eq!(parse("a b").unwrap(), Expr::Value(Ref::new("a b")));
    }

    #[test]
    fn errors_name_the_column() {
        assert_eq!(
            parse("sum(/a) x").unwrap_err(),
            "`sum(/a) x` at column 9: unexpected text after the expression"
        );
        assert!(parse("avg(/a)")
            .unwrap_err()
            .contains("at column 1: unknown function `avg`"));
        assert!(parse("ratio(/a)")
            .unwrap_err()
            .contains("at column 1: `ratio` takes 2 values"));
        assert!(parse("sum(/a").unwrap_err().contains("at column 7"));
        assert!(parse("sum(,)")
            .unwrap_err()
            .contains("at column 5: expected a value"));
    }
}
