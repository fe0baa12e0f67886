//! `card` blocks: the result card, headline measurements with conditions.
//! Every value, condition and summary is a template, so a card can quote
//! aggregates (`{max(pct_change(/cells/*/a, /cells/*/b)):+.1%}`).

use super::{Ctx, Problem};
use crate::data::Source;
use crate::expr::Template;
use crate::html::escape;
use serde::Deserialize;
use std::sync::Arc;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CardSpec {
    #[serde(default)]
    pub(crate) title: Option<String>,
    pub(crate) source: String,
    #[serde(default)]
    pub(crate) pointer: Option<String>,
    /// The data file's format, when its content is ambiguous.
    #[serde(default)]
    pub(crate) format: Option<String>,
    #[serde(default)]
    pub(crate) summary: Option<String>,
    pub(crate) items: Vec<CardItem>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CardItem {
    pub(crate) label: String,
    pub(crate) value: String,
    /// The change the item is about (e.g. `{pct_change(a, b):+.1%}`): when
    /// given, it is the large figure and `value` the line under it.
    #[serde(default)]
    pub(crate) change: Option<String>,
    #[serde(default)]
    pub(crate) conditions: Option<String>,
}

impl CardSpec {
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.items.is_empty() {
            return Err("a card needs at least one item".into());
        }
        let parse = |what: String, t: &str| -> Result<(), String> {
            let t = Template::parse(t).map_err(|e| format!("{what}: {e}"))?;
            if t.uses_baseline() {
                return Err(format!(
                    "{what}: `baseline(…)` reads a table's baseline row; a card has none"
                ));
            }
            Ok(())
        };
        for item in &self.items {
            for t in std::iter::once(&item.value)
                .chain(&item.change)
                .chain(&item.conditions)
            {
                parse(format!("card item `{}`", item.label), t)?;
            }
        }
        if let Some(s) = &self.summary {
            parse("card summary".into(), s)?;
        }
        Ok(())
    }
}

pub(super) fn render(spec: &CardSpec, ctx: &Ctx) -> Result<(String, Arc<Source>), Problem> {
    let source = ctx.store.load_as(&spec.source, spec.format.as_deref())?;
    // Card values are expressions: like inline references they read the
    // file as written, or the value its pointer names there.
    let doc = match spec.pointer.as_deref() {
        Some(_) => source.select(spec.pointer.as_deref())?,
        None => source.document(),
    };
    let fill = |what: &str, t: &str| -> Result<String, Problem> {
        let t = Template::parse(t).map_err(Problem::Here)?;
        t.render(doc)
            .map_err(|e| Problem::Here(format!("card {what}: {e} in `{}`", source.path)))
    };
    let mut html = String::from("<section class=\"block card\" aria-label=\"");
    html.push_str(&escape(spec.title.as_deref().unwrap_or("Result card")));
    html.push_str("\">");
    if let Some(t) = &spec.title {
        html.push_str(&format!("<h2 class=\"card-title\">{}</h2>", escape(t)));
    }
    if let Some(s) = &spec.summary {
        html.push_str(&format!(
            "<p class=\"card-summary\">{}</p>",
            escape(&fill("summary", s)?)
        ));
    }
    html.push_str("<dl class=\"card-items\">");
    for item in &spec.items {
        let value = fill(&format!("item `{}`", item.label), &item.value)?;
        html.push_str(&format!(
            "<div class=\"card-item\"><dt>{}</dt>",
            escape(&item.label)
        ));
        if let Some(c) = &item.change {
            let c = fill(&format!("item `{}`", item.label), c)?;
            html.push_str(&format!(
                "<dd class=\"card-change\">{} <span class=\"card-direction\">{}</span></dd>",
                escape(&c),
                direction(&c)
            ));
        }
        html.push_str(&format!("<dd class=\"card-value\">{}</dd>", escape(&value)));
        if let Some(c) = &item.conditions {
            let c = fill(&format!("item `{}`", item.label), c)?;
            html.push_str(&format!(
                "<dd class=\"card-conditions\">{}</dd>",
                escape(&c)
            ));
        }
        html.push_str("</div>");
    }
    html.push_str("</dl>");
    html.push_str(&ctx.source_note(&source));
    html.push_str("</section>");
    Ok((html, source))
}

/// The direction of a change in a word, so it never rests on colour alone.
fn direction(change: &str) -> &'static str {
    let digits = change.trim_start_matches(['+', '-', '\u{2212}']);
    if !digits.chars().any(|c| c.is_ascii_digit() && c != '0') {
        "unchanged"
    } else if change.starts_with('+') {
        "higher"
    } else if change.starts_with(['-', '\u{2212}']) {
        "lower"
    } else {
        "change"
    }
}
