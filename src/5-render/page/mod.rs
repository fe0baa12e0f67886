//! Third stage: a Markdown page and its `exhibit` blocks into a rendered
//! page body, walking pulldown-cmark's event stream with byte offsets so every
//! error names the page's line:col.

mod events;
mod fenced;
mod headings;
mod links;
mod table;

#[allow(unused_imports)] // for the typed-figure checks
pub(crate) use fenced::{unresolved, without_references, Expanded, RefError, Refs, Resolved};

use crate::blocks::LedgerEntry;
use crate::campaign::Campaign;
use crate::data::DataStore;
use crate::error::InputError;
use crate::error::Result;
use crate::evidence::Evidence;
use pulldown_cmark::{CowStr, Event, Options};
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Heading {
    pub(crate) level: u8,
    pub(crate) id: String,
    pub(crate) text: String,
}

/// A block as recorded in audit.json.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct BlockRecord {
    pub(crate) page: String,
    pub(crate) line: usize,
    pub(crate) kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) sha256: Option<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct Page {
    pub(crate) title: String,
    pub(crate) file: String,
    pub(crate) output: String,
    pub(crate) html: String,
    pub(crate) toc: Vec<Heading>,
    pub(crate) blocks: Vec<BlockRecord>,
    pub(crate) ledger: Vec<LedgerEntry>,
    /// Data downloads of the page's tables and charts.
    pub(crate) downloads: Vec<crate::blocks::Download>,
    /// Links into a page at an id, checked once every page is rendered.
    pub(crate) anchors: Vec<Anchor>,
    /// Typed figures and computed values, checked once every page is
    /// rendered ([`crate::claims::check`]).
    pub(crate) figures: crate::claims::PageFigures,
}

/// A link `PAGE#ID` (or `#ID`) and where it was written.
#[derive(Debug, Clone)]
pub(crate) struct Anchor {
    /// Output name of the page linked to.
    pub(crate) page: String,
    /// The id, as published.
    pub(crate) id: String,
    pub(crate) written: String,
    pub(crate) path: PathBuf,
    pub(crate) line: usize,
    pub(crate) col: usize,
}

/// Every `id` a rendered page defines (headings, charts, footnotes).
pub(crate) fn ids(html: &str) -> std::collections::HashSet<&str> {
    static ID: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = ID.get_or_init(|| regex::Regex::new(r#"\sid="([^"]*)""#).expect("valid id pattern"));
    re.captures_iter(html)
        .filter_map(|c| c.get(1).map(|m| m.as_str()))
        .collect()
}

/// Links to an id no page defines are broken: report the first, in page
/// order, at the place it was written.
/// `html` gives page `i`'s html (which may have been set aside).
pub(crate) fn check_anchors<'p, P, H>(pages: &'p [P], html: H) -> Result<()>
where
    P: std::ops::Deref<Target = Page>,
    H: Fn(usize) -> Result<std::borrow::Cow<'p, str>>,
{
    // Only pages that links point into are read for their ids.
    let targets: std::collections::HashSet<&str> = pages
        .iter()
        .flat_map(|p| p.anchors.iter().map(|a| a.page.as_str()))
        .collect();
    let mut texts = Vec::new();
    for (i, p) in pages.iter().enumerate() {
        if targets.contains(p.output.as_str()) {
            texts.push((p.output.as_str(), html(i)?));
        }
    }
    let defined: HashMap<&str, std::collections::HashSet<&str>> =
        texts.iter().map(|(p, h)| (*p, ids(h))).collect();
    for a in pages.iter().flat_map(|p| &p.anchors) {
        let Some(ids) = defined.get(a.page.as_str()) else {
            continue;
        };
        let decoded = percent_encoding::percent_decode_str(&a.id).decode_utf8_lossy();
        let escaped = crate::html::escape(&decoded);
        if !ids.contains(a.id.as_str()) && !ids.contains(escaped.as_str()) {
            return Err(InputError::new(
                &a.path,
                a.line,
                a.col,
                format!(
                    "broken link `{}`: {} has no heading or element with id `{}`",
                    a.written, a.page, decoded
                ),
            )
            .into());
        }
    }
    Ok(())
}

pub(crate) fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
}

struct Renderer<'a> {
    evidence: &'a Evidence,
    store: &'a DataStore<'a>,
    file: &'a str,
    path: PathBuf,
    text: &'a str,
    /// Positions in `text`, looked up as the page is read.
    lines: crate::error::Lines<'a>,
    html: String,
    pending: Vec<Event<'a>>,
    toc: Vec<Heading>,
    ids: HashMap<String, usize>,
    blocks: Vec<BlockRecord>,
    ledger: Vec<LedgerEntry>,
    charts: usize,
    /// Blocks of each kind so far, numbering their downloads.
    of_kind: HashMap<&'static str, usize>,
    /// The page's output name without `.html`, naming its downloads.
    stem: String,
    downloads: Vec<crate::blocks::Download>,
    anchors: Vec<Anchor>,
    /// The id of the heading being written, for its section link.
    open_heading: Option<String>,
    figures: crate::claims::PageFigures,
}

/// Render page `index` of the campaign.
pub(crate) fn render(
    campaign: &Campaign,
    evidence: &Evidence,
    store: &DataStore,
    index: usize,
) -> Result<Page> {
    let page = &campaign.meta.pages[index];
    let public_title = &store.public.meta.pages[index].title;
    let path = campaign.path(&page.file);
    if evidence.get(&page.file).is_none() {
        return Err(InputError::new(
            &campaign.path(crate::campaign::META_NAME),
            0,
            0,
            format!(
                "page `{}` is listed in campaign.json but does not exist",
                page.file
            ),
        )
        .into());
    }
    let bytes = evidence.take_verified(&page.file)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let lossy = String::from_utf8_lossy(e.as_bytes()).into_owned();
        InputError::at_offset(
            &path,
            &lossy,
            e.utf8_error().valid_up_to(),
            "page is not valid UTF-8",
        )
    })?;
    let mut r = Renderer {
        evidence,
        store,
        file: &page.file,
        path,
        text: &text,
        lines: crate::error::Lines::new(&text),
        html: String::with_capacity(text.len() * 2),
        pending: Vec::new(),
        toc: Vec::new(),
        ids: HashMap::new(),
        blocks: Vec::new(),
        ledger: Vec::new(),
        charts: 0,
        of_kind: HashMap::new(),
        stem: store
            .public
            .page_output(index)
            .trim_end_matches(".html")
            .to_string(),
        downloads: Vec::new(),
        anchors: Vec::new(),
        open_heading: None,
        figures: Default::default(),
    };
    r.run()?;
    // A figure typed in the page (not a data file, checked where it was
    // found) inside what may be a private value is left out: audit.json
    // lists figures as written.
    store
        .redactor
        .detector
        .retain_clear(&mut r.figures.typed, |f| {
            f.file
                .is_none()
                .then(|| crate::claims::word_at(&text, f.offset))
        });
    let refs = Refs {
        store,
        ledger: None,
    };
    let title = refs.expand_meta(campaign, "pages", &page.title, public_title)?;
    // Typed figures of the title are the header's (campaign.json); the
    // values its references show are this page's.
    r.figures.computed.extend(title.values);
    // Every page is held until the last is rendered (the header reads the
    // ledger of all): what grew by doubling is trimmed to what it holds.
    r.html.shrink_to_fit();
    r.figures.typed.shrink_to_fit();
    r.figures.computed.shrink_to_fit();
    Ok(Page {
        title: crate::claims::unmark(&title.text).into_owned(),
        file: page.file.clone(),
        output: store.public.page_output(index),
        html: r.html,
        toc: r.toc,
        blocks: r.blocks,
        ledger: r.ledger,
        downloads: r.downloads,
        anchors: r.anchors,
        figures: r.figures,
    })
}

impl<'a> Renderer<'a> {
    pub(super) fn err(&self, offset: usize, msg: impl Into<String>) -> crate::error::Error {
        InputError::at_offset(&self.path, self.text, offset, msg).into()
    }

    /// A string as published: redacted.
    pub(super) fn public(&self, s: &CowStr<'a>) -> CowStr<'a> {
        match self.store.redactor.redact(s) {
            std::borrow::Cow::Borrowed(_) => s.clone(),
            std::borrow::Cow::Owned(r) => r.into(),
        }
    }

    pub(super) fn flush(&mut self) {
        pulldown_cmark::html::push_html(&mut self.html, self.pending.drain(..));
    }
}
