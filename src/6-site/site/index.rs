//! The site's own files: the index of campaigns (each with its state and
//! its headline figures, the first items of its first result card) and the
//! Atom feed of campaigns. Both are dated by the campaigns, never by the
//! build, so the same input gives the same bytes.

use super::nav::Header;
use crate::error::Result;
use crate::evidence::Evidence;
use crate::page;
use crate::public::Public;
use crate::render::{Theme, GENERATOR};
use regex::Regex;
use serde::Serialize;
use std::sync::OnceLock;

/// How many items of the first card the index shows.
const HEADLINE_ITEMS: usize = 2;

/// One headline figure, as the card showed it (text, already redacted).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Figure {
    pub(crate) label: String,
    /// The change, when the card item has one: the large figure.
    pub(crate) change: Option<String>,
    /// `higher`, `lower`, `unchanged`: the change in a word.
    pub(crate) direction: Option<String>,
    pub(crate) value: String,
}

/// The first items of a page's first result card, if it shows one (the
/// campaign's headline is its first page's that does). Read back from the
/// card's own markup, which exhibit wrote.
pub(crate) fn headline(html: &str) -> Option<Vec<Figure>> {
    static CARD: OnceLock<Regex> = OnceLock::new();
    static ITEM: OnceLock<Regex> = OnceLock::new();
    let card = CARD.get_or_init(|| {
        Regex::new(r#"(?s)<section class="block card"[^>]*>.*?</dl>"#).expect("valid card pattern")
    });
    let item = ITEM.get_or_init(|| {
        Regex::new(concat!(
            r#"<div class="card-item"><dt>([^<]*)</dt>"#,
            r#"(?:<dd class="card-change">([^<]*?) <span class="card-direction">([^<]*)</span></dd>)?"#,
            r#"<dd class="card-value">([^<]*)</dd>"#
        ))
        .expect("valid card item pattern")
    });
    let html = card.find(html)?;
    let items = item
        .captures_iter(html.as_str())
        .take(HEADLINE_ITEMS)
        .map(|c| {
            // Unescaped: the templates escape again.
            let text = |i: usize| c.get(i).map(|m| crate::single::unescape(m.as_str()));
            Figure {
                label: text(1).unwrap_or_default(),
                change: text(2),
                direction: text(3),
                value: text(4).unwrap_or_default(),
            }
        })
        .collect();
    Some(items)
}

#[derive(Serialize)]
struct Entry<'a> {
    id: &'a str,
    title: &'a str,
    date: &'a str,
    /// The date as an Atom timestamp (midnight UTC).
    updated: String,
    state: &'a str,
    decision: &'a str,
    summary: Option<&'a str>,
    files: usize,
    headline: &'a [Figure],
    digest: &'a str,
}

/// What the index and the feed show of a rendered campaign.
pub(super) struct Cited {
    pub(crate) headline: Vec<Figure>,
    pub(crate) digest: String,
    /// The header as shown, its references resolved.
    pub(crate) header: Header,
}

/// Every campaign, newest first (ties by id).
fn entries<'a>(
    publics: &'a [Public],
    evidences: &'a [Evidence],
    rendered: &'a [Cited],
) -> Vec<Entry<'a>> {
    let mut entries: Vec<Entry> = publics
        .iter()
        .zip(evidences)
        .zip(rendered)
        .map(|((p, e), c)| Entry {
            id: &p.meta.id,
            title: &c.header.title,
            date: &p.meta.date,
            updated: format!("{}T00:00:00Z", p.meta.date),
            state: &c.header.state,
            decision: &c.header.decision,
            summary: c.header.summary.as_deref(),
            files: e.files.len(),
            headline: &c.headline,
            digest: &c.digest,
        })
        .collect();
    entries.sort_by(|a, b| b.date.cmp(a.date).then(a.id.cmp(b.id)));
    entries
}

/// The index page and the Atom feed, from each campaign's headline
/// figures and digest (in `publics` order).
pub(super) fn render(
    publics: &[Public],
    evidences: &[Evidence],
    rendered: &[Cited],
    theme: &Theme,
) -> Result<(Vec<u8>, Vec<u8>)> {
    let entries = entries(publics, evidences, rendered);
    let mut ctx = tera::Context::new();
    ctx.insert("generator", GENERATOR);
    ctx.insert("root", "");
    ctx.insert("css", &theme.css);
    ctx.insert("campaigns", &entries);
    ctx.insert("feed", crate::layout::FEED);
    ctx.insert(
        "updated",
        entries
            .iter()
            .map(|e| e.updated.as_str())
            .max()
            .unwrap_or("1970-01-01T00:00:00Z"),
    );
    ctx.insert("toc", &Vec::<page::Heading>::new());
    let index = theme.render("index.html", &ctx)?.into_bytes();
    let feed = theme.render("feed.xml", &ctx)?.into_bytes();
    Ok((index, feed))
}
