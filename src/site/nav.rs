//! Navigation and the context every campaign page's template shares:
//! tabs (or, for long campaigns, a short header, a pager and the list of
//! all pages), the campaign's published facts, the stylesheet.

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
pub const TABS_UP_TO: usize = 12;

fn nav(p: &Public, current: &str) -> Vec<NavItem> {
    let pages = p.meta.pages.len();
    let mut items: Vec<(String, String)> = if pages <= TABS_UP_TO {
        (0..pages)
            .map(|i| (p.meta.pages[i].title.clone(), p.page_output(i)))
            .collect()
    } else {
        vec![
            (
                p.meta.pages[0].title.clone(),
                layout::INDEX_PAGE.to_string(),
            ),
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
fn pager(p: &Public, current: &str) -> Vec<NavItem> {
    let pages = p.meta.pages.len();
    if pages <= TABS_UP_TO {
        return Vec::new();
    }
    let Some(i) = p.page_with_output(current) else {
        return Vec::new();
    };
    let item = |j: usize, rel: &str| NavItem {
        title: format!("{rel}: {}", p.meta.pages[j].title),
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
fn all_pages(p: &Public, current: &str) -> Vec<NavItem> {
    let pages = p.meta.pages.len();
    if pages <= TABS_UP_TO || current != layout::INDEX_PAGE {
        return Vec::new();
    }
    (1..pages)
        .map(|i| NavItem {
            title: p.meta.pages[i].title.clone(),
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
            title: &m.title,
            date: &m.date,
            state: &m.state,
            scope: &m.scope,
            decision: &m.decision,
            summary: m.summary.as_deref(),
        },
    );
    ctx.insert("nav", &nav(p, current));
    ctx.insert("pager", &pager(p, current));
    ctx.insert("all_pages", &all_pages(p, current));
    ctx.insert("is_main", &(current == layout::INDEX_PAGE));
    ctx.insert("page_title", title);
    ctx.insert("toc", &Vec::<page::Heading>::new());
    if single {
        ctx.insert("single_file", &format!("{}.html", m.id));
    }
    ctx
}
