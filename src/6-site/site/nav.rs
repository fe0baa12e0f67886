//! Navigation and the context every campaign page's template shares:
//! tabs (or, for long campaigns, a short header, a pager and the list of
//! all pages), the campaign's published facts, the stylesheet.

use crate::claims::PageFigures;
use crate::error::Lines;
use crate::layout;
use crate::page;
use crate::public::Public;
use crate::render::{Theme, GENERATOR};
use serde::Serialize;

#[derive(Serialize)]
struct NavItem {
    title: String,
    href: String,
    current: bool,
}

/// Campaigns with more pages than this get a short header navigation (main
/// page, the page list, ledger, manifest) and previous/next links instead
/// of one tab per page: a tab row on every page would make the site grow
/// with the square of the page count.
pub(crate) const TABS_UP_TO: usize = 12;

/// A campaign's header as readers see it: campaign.json's fields and the
/// page titles with their inline references resolved (see
/// [`crate::page::Refs`]), and the count of retained failures.
#[derive(Debug, Clone, Default)]
pub(crate) struct Header {
    pub(crate) title: String,
    pub(crate) state: String,
    pub(crate) scope: String,
    pub(crate) decision: String,
    pub(crate) summary: Option<String>,
    /// Page titles, in page order.
    pub(crate) pages: Vec<String>,
    /// Entries of the campaign's ledger (`ledger_count` in templates).
    pub(crate) ledger_count: usize,
}

impl Header {
    /// Campaign `c`'s header (published as `p`) resolved against `refs`,
    /// the ledger complete; page titles as the rendered pages show them.
    /// With it, the figures typed in campaign.json's fields and page
    /// titles (at their campaign.json line:col) and the values the
    /// header's references show.
    pub(crate) fn resolve(
        c: &crate::campaign::Campaign,
        p: &Public,
        refs: &crate::page::Refs,
        pages: Vec<String>,
    ) -> crate::error::Result<(Header, PageFigures)> {
        let lines = Lines::new(&c.text);
        let det = &refs.store.redactor.detector;
        let mut figures = PageFigures::default();
        let mut field = |key: &str, original: &str, public: &str| {
            let e = refs.expand_meta(c, key, original, public)?;
            figures.computed.extend(e.values);
            if let Some(at) = typed_at(&c.text, key, original, 0) {
                figures
                    .typed
                    .extend(typed_in_meta(&lines, det, original, at));
            }
            Ok::<_, crate::error::Error>(crate::claims::unmark(&e.text).into_owned())
        };
        let (m, o) = (&p.meta, &c.meta);
        let header = Header {
            title: field("title", &o.title, &m.title)?,
            state: field("state", &o.state, &m.state)?,
            scope: field("scope", &o.scope, &m.scope)?,
            decision: field("decision", &o.decision, &m.decision)?,
            summary: match (&o.summary, &m.summary) {
                (Some(o), Some(m)) => Some(field("summary", o, m)?),
                _ => None,
            },
            pages,
            ledger_count: refs.ledger.unwrap_or(0),
        };
        // Page titles in order, each looked for after the last: one pass
        // over campaign.json, however many pages.
        let mut from = c.text.find("\"pages\"").unwrap_or(0);
        for page in o.pages.iter().map(|p| &p.title) {
            if let Some(at) = typed_at(&c.text, "title", page, from) {
                figures.typed.extend(typed_in_meta(&lines, det, page, at));
                from = at + 1;
            }
        }
        Ok((header, figures))
    }
}

/// Where campaign.json spells `value` of `key` (at or after `from`), when
/// it has a digit to look at.
fn typed_at(text: &str, key: &str, value: &str, from: usize) -> Option<usize> {
    if !value.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    crate::claims::literal_of(text, key, value, from)
}

/// The figures typed in campaign.json's string `original`, spelled at byte
/// `at` (its opening quote), its references left out, as is a figure
/// inside what may be a private value.
fn typed_in_meta(
    lines: &Lines,
    det: &crate::redact::Detector,
    original: &str,
    at: usize,
) -> Vec<crate::claims::Figure> {
    let text = lines.text();
    let typed = page::without_references(original);
    let mut found = crate::claims::in_string(lines, original, &typed, at, true);
    det.retain_clear(&mut found, |f| Some(crate::claims::word_at(text, f.offset)));
    found
}

fn nav(p: &Public, h: &Header, current: &str) -> Vec<NavItem> {
    let pages = p.meta.pages.len();
    let mut items: Vec<(String, String)> = if pages <= TABS_UP_TO {
        (0..pages)
            .map(|i| (h.pages[i].clone(), p.page_output(i)))
            .collect()
    } else {
        vec![
            (h.pages[0].clone(), layout::INDEX_PAGE.to_string()),
            (
                format!("All {pages} pages"),
                "index.html#all-pages".to_string(),
            ),
        ]
    };
    items.extend([
        (
            "Failure ledger".to_string(),
            layout::LEDGER_PAGE.to_string(),
        ),
        ("Manifest".to_string(), layout::MANIFEST_PAGE.to_string()),
    ]);
    let mut items: Vec<NavItem> = items
        .into_iter()
        .map(|(title, href)| NavItem {
            current: href == current,
            title,
            href,
        })
        .collect();
    items.dedup_by(|a, b| a.href == b.href);
    items
}

/// Previous and next page, for campaigns too long for tabs.
fn pager(p: &Public, h: &Header, current: &str) -> Vec<NavItem> {
    let pages = p.meta.pages.len();
    if pages <= TABS_UP_TO {
        return Vec::new();
    }
    let Some(i) = p.page_with_output(current) else {
        return Vec::new();
    };
    let item = |j: usize, rel: &str| NavItem {
        title: format!("{rel}: {}", h.pages[j]),
        href: p.page_output(j),
        current: false,
    };
    let mut out = Vec::new();
    if i > 0 {
        out.push(item(i - 1, "Previous"));
    }
    if i + 1 < pages {
        out.push(item(i + 1, "Next"));
    }
    out
}

/// The main page of a long campaign lists every page.
fn all_pages(p: &Public, h: &Header, current: &str) -> Vec<NavItem> {
    let pages = p.meta.pages.len();
    if pages <= TABS_UP_TO || current != layout::INDEX_PAGE {
        return Vec::new();
    }
    (1..pages)
        .map(|i| NavItem {
            title: h.pages[i].clone(),
            href: p.page_output(i),
            current: false,
        })
        .collect()
}

/// What templates get as `campaign`: the header facts, not the page list
/// (which would be copied into every page's context).
#[derive(Serialize)]
struct Facts<'a> {
    id: &'a str,
    title: &'a str,
    date: &'a str,
    state: &'a str,
    scope: &'a str,
    decision: &'a str,
    summary: Option<&'a str>,
}

/// `single`: the build also writes the one-file copy, linked from the footer.
pub(super) fn base_context(
    p: &Public,
    h: &Header,
    current: &str,
    title: &str,
    theme: &Theme,
    single: bool,
) -> tera::Context {
    let m = &p.meta;
    let mut ctx = tera::Context::new();
    ctx.insert("generator", GENERATOR);
    ctx.insert("root", "../");
    ctx.insert("css", &theme.css);
    ctx.insert(
        "campaign",
        &Facts {
            id: &m.id,
            title: &h.title,
            date: &m.date,
            state: &h.state,
            scope: &h.scope,
            decision: &h.decision,
            summary: h.summary.as_deref(),
        },
    );
    ctx.insert("ledger_count", &h.ledger_count);
    ctx.insert("nav", &nav(p, h, current));
    ctx.insert("pager", &pager(p, h, current));
    ctx.insert("all_pages", &all_pages(p, h, current));
    ctx.insert("is_main", &(current == layout::INDEX_PAGE));
    ctx.insert("page_title", title);
    ctx.insert("toc", &Vec::<page::Heading>::new());
    if single {
        ctx.insert("single_file", &format!("{}.html", m.id));
    }
    ctx
}
