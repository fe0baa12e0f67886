//! Typed figures checked against the data: every number typed by hand in
//! a page's prose (not produced by a reference) is compared with the
//! values of the campaign's data and the values its pages compute, at the
//! precision it is written with. One that matches nothing is a warning,
//! or with `--strict` (or `"strict": true`) an [`EvidenceFailed`].
//!
//! The page stage hands each page's figures ([`extract::figures`], read
//! from its pulldown-cmark text events) and computed values
//! ([`values::computed`]); the render stage calls [`check`] once every
//! page of a campaign is rendered. audit.json lists each figure as a
//! [`Record`].

mod extract;
mod values;

pub(crate) use extract::{figures, typed_text, unmark, word_at, Figure};
pub(crate) use values::{captions, computed, Index, Known};

use crate::data::Source;
use crate::error::EvidenceFailed;
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;

/// What a page hands the check.
#[derive(Debug, Clone, Default)]
pub(crate) struct PageFigures {
    /// Numbers typed in the page's prose, in page order.
    pub(crate) typed: Vec<Figure>,
    /// Numbers the page's blocks and references computed.
    pub(crate) computed: Vec<Known>,
    /// Data files the page's references read (blocks name theirs in
    /// their records).
    pub(crate) sources: Vec<String>,
}

/// A typed figure as audit.json lists it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Record {
    pub(crate) page: String,
    /// `line:col` in the page.
    pub(crate) at: String,
    pub(crate) text: String,
    /// The value it matched, or null.
    pub(crate) matched: Option<f64>,
    /// Where that value came from: `FILE#POINTER`, or the block or
    /// reference that computed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) source: Option<String>,
}

/// One page's figures as the check reads them.
pub(crate) struct Checked<'a> {
    /// The page's name as published.
    pub(crate) page: &'a str,
    pub(crate) figures: &'a PageFigures,
}

/// A campaign's unmatched figures, reported once the site passed the
/// rescan (so no message quotes a figure from a page that is refused for
/// a private value).
#[derive(Debug, Default)]
pub(crate) struct Unmatched {
    /// `PATH:LINE:COL: typed figure ...`, in page order.
    pub(crate) lines: Vec<String>,
    pub(crate) strict: bool,
}

/// Match every page's typed figures against `sources` and the pages'
/// computed values: the audit records, and the figures that matched
/// nothing, named at `dir/page:line:col`.
pub(crate) fn check(
    dir: &Path,
    pages: &[Checked],
    sources: &[Arc<Source>],
    strict: bool,
) -> (Vec<Record>, Unmatched) {
    if pages.iter().all(|p| p.figures.typed.is_empty()) {
        return (Vec::new(), Unmatched::default());
    }
    let derived: Vec<Known> = pages
        .iter()
        .flat_map(|p| p.figures.computed.iter().cloned())
        .collect();
    let index = Index::new(sources, &derived);
    let mut records = Vec::new();
    let mut unmatched = Vec::new();
    for p in pages {
        for f in &p.figures.typed {
            let hit = index.matching(f);
            if hit.is_none() {
                unmatched.push(unmatched_line(&dir.join(p.page), f, index.nearest(f)));
            }
            records.push(Record {
                page: p.page.to_string(),
                at: format!("{}:{}", f.line, f.col),
                text: f.text.clone(),
                matched: hit.map(|k| k.value),
                source: hit.map(|k| k.source.clone()),
            });
        }
    }
    let unmatched = Unmatched {
        lines: unmatched,
        strict,
    };
    (records, unmatched)
}

/// Unmatched figures printed as warnings; under `strict` (a campaign's or
/// the build's) they fail the build instead (exit 1).
pub(crate) fn report(all: &[Unmatched]) -> anyhow::Result<()> {
    let strict: Vec<&String> = all
        .iter()
        .filter(|u| u.strict)
        .flat_map(|u| &u.lines)
        .collect();
    if !strict.is_empty() {
        let n = strict.len();
        let unmatched: Vec<&str> = strict.iter().map(|s| s.as_str()).collect();
        let report = format!(
            "{}\n{n} typed figure{} match{} no value of the data (strict): correct {}, quote the data with a reference, or mark a figure quoted from elsewhere `[~FIGURE]`",
            unmatched.join("\n"),
            if n == 1 { "" } else { "s" },
            if n == 1 { "es" } else { "" },
            if n == 1 { "it" } else { "them" },
        );
        return Err(EvidenceFailed { report }.into());
    }
    let lines: Vec<&String> = all.iter().flat_map(|u| &u.lines).collect();
    for line in lines.iter().take(SHOWN_WARNINGS) {
        eprintln!("warning: {line}");
    }
    if lines.len() > SHOWN_WARNINGS {
        let more = lines.len() - SHOWN_WARNINGS;
        eprintln!(
            "warning: {more} more typed figure{} match{} no value of the data: audit.json lists every figure; `--strict` prints them all",
            if more == 1 { "" } else { "s" },
            if more == 1 { "es" } else { "" },
        );
    }
    Ok(())
}

/// How many unmatched figures a build prints one by one: a campaign of
/// prose with no data (thousands of figures) would otherwise bury the
/// output; the rest are counted, listed in audit.json, and printed in full
/// under `--strict`.
const SHOWN_WARNINGS: usize = 20;

/// `PATH:LINE:COL: typed figure `X` matches no value of the data (nearest: V, SOURCE)`.
fn unmatched_line(path: &Path, f: &Figure, nearest: Option<&Known>) -> String {
    let nearest = match nearest {
        Some(k) => format!("nearest: {}, {}", shown(k.value), k.source),
        None => "the campaign's pages read no numeric data".to_string(),
    };
    format!(
        "{}:{}:{}: typed figure `{}` matches no value of the data ({nearest})",
        path.display(),
        f.line,
        f.col,
        f.text
    )
}

/// A value as a message shows it: 12 significant digits at most.
fn shown(v: f64) -> String {
    let v = format!("{v:.11e}").parse::<f64>().unwrap_or(v);
    format!("{v}")
}
