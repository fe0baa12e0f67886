//! Third stage: a Markdown page and its `exhibit` blocks into a rendered
//! page body, walking pulldown-cmark's event stream with byte offsets so every
//! error names the page's line:col.

use crate::blocks::{self, Block, LedgerEntry, Problem};
use crate::campaign::Campaign;
use crate::data::{DataStore, LoadError};
use crate::error::InputError;
use crate::evidence::Evidence;
use crate::expr::Slot;
use crate::html::escape;
use anyhow::Result;
use pulldown_cmark::{
    Alignment, CodeBlockKind, CowStr, Event, HeadingLevel, Options, Parser, Tag, TagEnd,
};
use serde::Serialize;
use std::collections::HashMap;
use std::ops::Range;
use std::path::PathBuf;

#[derive(Debug, Clone, Serialize)]
pub struct Heading {
    pub level: u8,
    pub id: String,
    pub text: String,
}

/// A block as recorded in audit.json.
#[derive(Debug, Clone, Serialize)]
pub struct BlockRecord {
    pub page: String,
    pub line: usize,
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Page {
    pub title: String,
    pub file: String,
    pub output: String,
    pub html: String,
    pub toc: Vec<Heading>,
    pub blocks: Vec<BlockRecord>,
    pub ledger: Vec<LedgerEntry>,
    /// Data downloads of the page's tables and charts.
    pub downloads: Vec<blocks::Download>,
    /// Links into a page at an id, checked once every page is rendered.
    pub anchors: Vec<Anchor>,
}

/// A link `PAGE#ID` (or `#ID`) and where it was written.
#[derive(Debug, Clone)]
pub struct Anchor {
    /// Output name of the page linked to.
    pub page: String,
    /// The id, as published.
    pub id: String,
    pub written: String,
    pub path: PathBuf,
    pub line: usize,
    pub col: usize,
}

/// Every `id` a rendered page defines (headings, charts, footnotes).
pub fn ids(html: &str) -> std::collections::HashSet<&str> {
    static ID: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = ID.get_or_init(|| regex::Regex::new(r#"\sid="([^"]*)""#).expect("valid id pattern"));
    re.captures_iter(html)
        .filter_map(|c| c.get(1).map(|m| m.as_str()))
        .collect()
}

/// Links to an id no page defines are broken: report the first, in page
/// order, at the place it was written.
pub fn check_anchors<P: std::ops::Deref<Target = Page>>(pages: &[P]) -> Result<()> {
    // Only pages that links point into are read for their ids.
    let targets: std::collections::HashSet<&str> = pages
        .iter()
        .flat_map(|p| p.anchors.iter().map(|a| a.page.as_str()))
        .collect();
    let defined: HashMap<&str, std::collections::HashSet<&str>> = pages
        .iter()
        .filter(|p| targets.contains(p.output.as_str()))
        .map(|p| (p.output.as_str(), ids(&p.html)))
        .collect();
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

pub fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
}

struct Renderer<'a> {
    campaign: &'a Campaign,
    evidence: &'a Evidence,
    store: &'a DataStore<'a>,
    file: &'a str,
    path: PathBuf,
    text: &'a str,
    html: String,
    pending: Vec<Event<'a>>,
    toc: Vec<Heading>,
    ids: HashMap<String, usize>,
    blocks: Vec<BlockRecord>,
    ledger: Vec<LedgerEntry>,
    charts: usize,
    /// The page's output name without `.html`, naming its downloads.
    stem: String,
    downloads: Vec<blocks::Download>,
    anchors: Vec<Anchor>,
    /// The id of the heading being written, for its section link.
    open_heading: Option<String>,
}

/// Render page `index` of the campaign.
pub fn render(
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
    let bytes = evidence.read_verified(&page.file)?;
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
        campaign,
        evidence,
        store,
        file: &page.file,
        path,
        text: &text,
        html: String::with_capacity(text.len() * 2),
        pending: Vec::new(),
        toc: Vec::new(),
        ids: HashMap::new(),
        blocks: Vec::new(),
        ledger: Vec::new(),
        charts: 0,
        stem: store
            .public
            .page_output(index)
            .trim_end_matches(".html")
            .to_string(),
        downloads: Vec::new(),
        anchors: Vec::new(),
        open_heading: None,
    };
    r.run()?;
    Ok(Page {
        title: public_title.clone(),
        file: page.file.clone(),
        output: store.public.page_output(index),
        html: r.html,
        toc: r.toc,
        blocks: r.blocks,
        ledger: r.ledger,
        downloads: r.downloads,
        anchors: r.anchors,
    })
}

impl<'a> Renderer<'a> {
    fn err(&self, offset: usize, msg: impl Into<String>) -> anyhow::Error {
        InputError::at_offset(&self.path, self.text, offset, msg).into()
    }

    /// A string as published: redacted.
    fn public(&self, s: &CowStr<'a>) -> CowStr<'a> {
        match self.store.redactor.redact(s) {
            std::borrow::Cow::Borrowed(_) => s.clone(),
            std::borrow::Cow::Owned(r) => r.into(),
        }
    }

    /// The page's events with adjacent text merged (so no value is split
    /// across events) and every text, code and HTML string redacted. Link
    /// targets stay as written: [`Self::link`] checks and rewrites them.
    fn public_events(&self) -> Vec<(Event<'a>, Range<usize>)> {
        let mut events: Vec<(Event<'a>, Range<usize>)> = Vec::with_capacity(self.text.len() / 8);
        for (e, r) in Parser::new_ext(self.text, options()).into_offset_iter() {
            // A soft line break is white space inside the text run: a name
            // wrapped over two lines is still one name.
            let e = match e {
                Event::SoftBreak => Event::Text("\n".into()),
                e => e,
            };
            if let (Event::Text(t), Some((Event::Text(prev), prev_r))) = (&e, events.last_mut()) {
                *prev = format!("{prev}{t}").into();
                prev_r.end = r.end;
                continue;
            }
            events.push((e, r));
        }
        // Nothing in the page's strings can match: no string needs its own
        // redaction pass.
        let strings = events.iter().filter_map(|(e, _)| match e {
            Event::Text(t) | Event::Code(t) | Event::Html(t) | Event::InlineHtml(t) => {
                Some(t.as_ref())
            }
            _ => None,
        });
        if !self.store.redactor.detector.any_candidate_in(strings) {
            return events;
        }
        // An `exhibit` block body is redacted when the block is parsed.
        let mut in_block = false;
        for (e, _) in &mut events {
            match e {
                Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                    in_block = info.split_whitespace().next() == Some("exhibit");
                }
                Event::End(TagEnd::CodeBlock) => in_block = false,
                Event::Text(t) if !in_block => *t = self.public(t),
                Event::Code(t) if !t.starts_with('=') => *t = self.public(t),
                Event::Html(t) | Event::InlineHtml(t) => *t = self.public(t),
                _ => {}
            }
        }
        events
    }

    fn flush(&mut self) {
        pulldown_cmark::html::push_html(&mut self.html, self.pending.drain(..));
    }

    fn run(&mut self) -> Result<()> {
        let mut events = self.public_events();
        self.pending.reserve(events.len());
        let mut i = 0;
        // Links we dropped, so their ends are dropped too.
        let mut link_stack: Vec<bool> = Vec::new();
        let mut table = MdTable::default();
        while i < events.len() {
            if let Some(html) = table.markup(&events[i].0) {
                self.pending.push(Event::Html(html.into()));
                i += 1;
                continue;
            }
            // Each event is visited once: move it out rather than copy it
            // (a heading's and a block's later events are read in place).
            let at = events[i].1.start;
            match std::mem::replace(&mut events[i].0, Event::Rule) {
                Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info)))
                    if info.split_whitespace().next() == Some("exhibit") =>
                {
                    let kind = info.split_whitespace().nth(1).unwrap_or("").to_string();
                    let mut body = String::new();
                    let mut body_start = None;
                    i += 1;
                    while i < events.len() && !matches!(events[i].0, Event::End(TagEnd::CodeBlock))
                    {
                        if let Event::Text(t) = &events[i].0 {
                            body_start.get_or_insert(events[i].1.start);
                            body.push_str(t);
                        }
                        i += 1;
                    }
                    self.block(&kind, &body, at, body_start)?;
                }
                Event::Start(Tag::Heading {
                    level,
                    id,
                    classes,
                    attrs,
                }) => {
                    // The heading's text names its slug; its inline events
                    // then go through this loop like any others, so links
                    // and raw HTML inside a heading meet the same filter.
                    let range = events[i].1.clone();
                    let text = heading_text(&events[i + 1..]);
                    self.heading(level, id, &classes, &attrs, &text, range)?;
                }
                end @ Event::End(TagEnd::Heading(_)) => {
                    if let Some(id) = self.open_heading.take() {
                        // A link to the section itself, shown on hover and focus.
                        self.pending.push(Event::InlineHtml(
                            format!(
                                " <a class=\"anchor\" href=\"#{}\"><span aria-hidden=\"true\">#</span><span class=\"sr-only\">Link to this section</span></a>",
                                crate::html::escape(&id)
                            )
                            .into(),
                        ));
                    }
                    self.pending.push(end);
                }
                Event::Html(s) | Event::InlineHtml(s) => self.pending.push(Event::Text(s)),
                Event::Code(code) if code.starts_with('=') => {
                    let spec = self.store.redactor.redact(&code[1..]).into_owned();
                    let html = self.inline_ref(&spec, at)?;
                    self.pending.push(Event::InlineHtml(html.into()));
                }
                Event::Start(Tag::Link {
                    link_type,
                    dest_url,
                    title,
                    id,
                }) => match self.link(&dest_url, at)? {
                    Some(dest) => {
                        link_stack.push(true);
                        self.pending.push(Event::Start(Tag::Link {
                            link_type,
                            dest_url: dest.into(),
                            title: self.public(&title),
                            id,
                        }));
                    }
                    None => link_stack.push(false),
                },
                end @ Event::End(TagEnd::Link) => {
                    if link_stack.pop().unwrap_or(true) {
                        self.pending.push(end);
                    }
                }
                Event::Start(Tag::Image {
                    link_type,
                    dest_url,
                    title,
                    id,
                }) => match self.link(&dest_url, at)? {
                    Some(dest) => {
                        link_stack.push(true);
                        self.pending.push(Event::Start(Tag::Image {
                            link_type,
                            dest_url: dest.into(),
                            title: self.public(&title),
                            id,
                        }));
                    }
                    None => link_stack.push(false),
                },
                end @ Event::End(TagEnd::Image) => {
                    if link_stack.pop().unwrap_or(true) {
                        self.pending.push(end);
                    }
                }
                other => self.pending.push(other),
            }
            i += 1;
        }
        self.flush();
        Ok(())
    }

    fn block(
        &mut self,
        kind: &str,
        body: &str,
        at: usize,
        body_start: Option<usize>,
    ) -> Result<()> {
        if kind.is_empty() {
            return Err(self.err(
                at,
                format!(
                    "an `exhibit` block needs a kind: one of {}",
                    blocks::KINDS.join(", ")
                ),
            ));
        }
        if !blocks::KINDS.contains(&kind) {
            return Err(self.err(
                at,
                format!(
                    "unknown block kind `{kind}`: expected one of {}",
                    blocks::KINDS.join(", ")
                ),
            ));
        }
        let Some(body_start) = body_start else {
            return Err(self.err(at, format!("`exhibit {kind}` block has no JSON body")));
        };
        // Parse as written (so errors point into the page), then publish
        // the block parsed from its redacted body.
        let public_body = self.store.redactor.redact(body);
        let block: Block =
            match blocks::parse(kind, body).and_then(|_| blocks::parse(kind, &public_body)) {
                Ok(b) => b,
                Err(blocks::ParseError::Json(e)) => {
                    let (line, _) = crate::error::line_col(self.text, body_start);
                    return Err(InputError::json(&self.path, self.text, line - 1, &e)
                        .with_prefix(&format!("bad `exhibit {kind}` block: "))
                        .into());
                }
                Err(blocks::ParseError::Invalid(m)) => {
                    return Err(self.err(at, format!("bad `exhibit {kind}` block: {m}")))
                }
            };
        self.flush();
        self.charts += usize::from(matches!(block, Block::Chart(_)));
        let ctx = blocks::Ctx {
            campaign: self.campaign,
            evidence: self.evidence,
            store: self.store,
            chart_id: format!("chart-{}", self.charts),
            export_stem: format!(
                "{}-{}-{}",
                self.stem,
                block.kind(),
                1 + self
                    .blocks
                    .iter()
                    .filter(|b| b.kind == block.kind())
                    .count()
            ),
        };
        let rendered = match blocks::render(&block, &ctx) {
            Ok(r) => r,
            Err(Problem::Here(m)) => {
                return Err(self.err(at, format!("`exhibit {kind}` block: {m}")))
            }
            Err(Problem::Positioned(e)) => {
                let (line, col) = crate::error::line_col(self.text, at);
                return Err(e.context(format!(
                    "in the `exhibit {kind}` block at {}:{line}:{col}",
                    self.path.display()
                )));
            }
        };
        self.html.push_str(&rendered.html);
        self.html.push('\n');
        self.blocks.push(BlockRecord {
            page: self.file.to_string(),
            line: crate::error::line_col(self.text, at).0,
            kind: block.kind(),
            source: rendered.source.as_ref().map(|s| s.path.clone()),
            sha256: rendered.source.as_ref().map(|s| s.sha256.clone()),
        });
        self.ledger.extend(rendered.ledger);
        self.downloads.extend(rendered.downloads);
        Ok(())
    }

    /// Open a heading: its id (written `{#id}` or its text's slug, made
    /// unique in the page). The format defines no other heading attribute:
    /// a class or `key=value` is refused at the `{` that opens them, since
    /// pulldown-cmark would publish it as written (`onfocus=...`).
    fn heading(
        &mut self,
        level: HeadingLevel,
        id: Option<CowStr<'a>>,
        classes: &[CowStr<'a>],
        attrs: &[(CowStr<'a>, Option<CowStr<'a>>)],
        text: &str,
        range: Range<usize>,
    ) -> Result<()> {
        let extra = classes
            .first()
            .map(|c| format!("class `.{}`", self.public(c)))
            .or_else(|| {
                attrs
                    .first()
                    .map(|(k, _)| format!("attribute `{}`", self.public(k)))
            });
        if let Some(what) = extra {
            let line = &self.text[range.clone()];
            let at = range.start + line.rfind('{').unwrap_or(0);
            return Err(self.err(
                at,
                format!(
                    "heading {what} is not allowed: a heading takes only an id, as `{{#name}}`"
                ),
            ));
        }
        let base = id
            .as_ref()
            .map(|s| self.store.redactor.redact(s).into_owned())
            .unwrap_or_else(|| crate::html::slug(text));
        let n = self.ids.entry(base.clone()).or_insert(0);
        *n += 1;
        let unique = if *n == 1 { base } else { format!("{base}-{n}") };
        self.toc.push(Heading {
            level: level_num(level),
            id: unique.clone(),
            text: text.to_string(),
        });
        self.open_heading = Some(unique.clone());
        self.pending.push(Event::Start(Tag::Heading {
            level,
            id: Some(CowStr::from(unique)),
            classes: Vec::new(),
            attrs: Vec::new(),
        }));
        Ok(())
    }

    /// `FILE#EXPR[:FORMAT]` into a `<span>` holding the formatted value.
    fn inline_ref(&self, spec: &str, at: usize) -> Result<String> {
        let bad = |m: String| self.err(at, format!("reference `={spec}`: {m}"));
        let (file, rest) = spec
            .split_once('#')
            .ok_or_else(|| bad("expected `=FILE#POINTER` or `=FILE#POINTER:FORMAT`".into()))?;
        let slot = Slot::parse(rest).map_err(bad)?;
        let source = self.store.load(file.trim()).map_err(|e| match e {
            LoadError::AtBlock(m) => bad(m),
            LoadError::Other(e) => e,
        })?;
        let value = slot
            .render(&source.doc)
            .map_err(|e| bad(format!("{e} in `{}`", source.path)))?;
        Ok(format!(
            "<span class=\"ref\" title=\"{} · sha256 {}\">{}</span>",
            escape(&source.public),
            source.short_hash(),
            escape(&value.to_string())
        ))
    }

    /// Would this link target be published as written? A target holding a
    /// private value is dropped, link text kept.
    fn unredacted(&self, dest: &str) -> bool {
        // What a browser will make of it: percent-decoded, with the dots
        // it accepts in host names, and numeric hosts it would resolve.
        let decoded = percent_encoding::percent_decode_str(dest).decode_utf8_lossy();
        let dotted = decoded.replace(['\u{3002}', '\u{FF0E}', '\u{FF61}'], ".");
        let det = &self.store.redactor.detector;
        [dest, &decoded, &dotted]
            .iter()
            .all(|t| det.find(t.as_bytes()).is_empty())
            && !url_host(&dotted).is_some_and(odd_numeric_host)
    }

    /// Check and rewrite a link target; `None` drops the link.
    /// Remember a link to `page#id` for [`check_anchors`].
    fn anchor(&mut self, page: &str, frag: &str, dest: &str, at: usize) {
        let Some(id) = frag.strip_prefix('#').filter(|id| !id.is_empty()) else {
            return;
        };
        let (line, col) = crate::error::line_col(self.text, at);
        self.anchors.push(Anchor {
            page: page.to_string(),
            id: id.to_string(),
            written: dest.to_string(),
            path: self.path.clone(),
            line,
            col,
        });
    }

    fn link(&mut self, dest: &str, at: usize) -> Result<Option<String>> {
        // Every target passes the one filter: a scheme the format does not
        // define (`javascript:`, `data:`, `vbscript:`) drops the link.
        if !crate::html::allowed_target(dest) {
            return Ok(None);
        }
        if crate::html::scheme(dest.trim()).is_some() {
            return Ok(Some(dest.to_string()).filter(|d| self.unredacted(d)));
        }
        // An e-mail autolink (`<ops@example.com>`) names no file.
        if dest.contains('@') && !dest.contains('/') {
            return Ok(Some(dest.to_string()).filter(|d| self.unredacted(d)));
        }
        if dest.starts_with('#') && self.unredacted(dest) {
            let own = self.stem.clone() + ".html";
            self.anchor(&own, dest, dest, at);
        }
        if dest.is_empty()
            || dest.starts_with('#')
            || dest.starts_with("//")
            || dest.starts_with("../")
        {
            return Ok(Some(dest.to_string()).filter(|d| self.unredacted(d)));
        }
        if dest.starts_with('/') {
            return Err(self.err(
                at,
                format!("link `{dest}` is absolute; link to campaign files with relative paths"),
            ));
        }
        let (path, frag) = match dest.find(['#', '?']) {
            Some(i) => (&dest[..i], &dest[i..]),
            None => (dest, ""),
        };
        let path = path.strip_prefix("./").unwrap_or(path);
        if let Some(out) = self.store.public.output_of_page(path) {
            let frag = self.store.redactor.redact(frag).into_owned();
            self.anchor(&out, &frag, dest, at);
            return Ok(Some(format!("{out}{frag}")));
        }
        if self.evidence.verified_sha256(path).is_some() {
            let frag = self.store.redactor.redact(frag);
            let href = crate::html::file_href(&self.store.public.published(path));
            return Ok(Some(format!("{href}{frag}")));
        }
        let generated = crate::layout::GENERATED;
        if self.store.public.page_with_output(path).is_some() {
            let frag = frag.to_string();
            self.anchor(path, &frag, dest, at);
            return Ok(Some(dest.to_string()));
        }
        if generated.contains(&path) {
            return Ok(Some(dest.to_string()));
        }
        Err(self.err(
            at,
            format!("broken link `{dest}`: no page or file of the campaign has that path"),
        ))
    }
}

/// A Markdown table written like the tables of `exhibit` blocks: in a
/// scroll box, right-aligned columns as `num` cells (tabular figures)
/// rather than an inline style on every cell.
#[derive(Default)]
struct MdTable {
    aligns: Vec<Alignment>,
    head: bool,
    column: usize,
}

impl MdTable {
    /// The markup for a table event; `None` for every other event.
    fn markup(&mut self, event: &Event) -> Option<&'static str> {
        Some(match event {
            Event::Start(Tag::Table(aligns)) => {
                self.aligns = aligns.clone();
                "<div class=\"scroll\" tabindex=\"0\"><table>"
            }
            Event::End(TagEnd::Table) => "</tbody></table></div>\n",
            Event::Start(Tag::TableHead) => {
                (self.head, self.column) = (true, 0);
                "<thead><tr>"
            }
            Event::End(TagEnd::TableHead) => {
                self.head = false;
                "</tr></thead><tbody>\n"
            }
            Event::Start(Tag::TableRow) => {
                self.column = 0;
                "<tr>"
            }
            Event::End(TagEnd::TableRow) => "</tr>\n",
            Event::Start(Tag::TableCell) => {
                let align = self.aligns.get(self.column).copied();
                match (self.head, align) {
                    (true, Some(Alignment::Right)) => "<th class=\"num\">",
                    (true, Some(Alignment::Center)) => "<th class=\"center\">",
                    (true, _) => "<th>",
                    (false, Some(Alignment::Right)) => "<td class=\"num\">",
                    (false, Some(Alignment::Center)) => "<td class=\"center\">",
                    (false, _) => "<td>",
                }
            }
            Event::End(TagEnd::TableCell) => {
                self.column += 1;
                if self.head {
                    "</th>"
                } else {
                    "</td>"
                }
            }
            _ => return None,
        })
    }
}

/// The host of an absolute URL (`scheme://[user@]host[:port]/...`).
fn url_host(url: &str) -> Option<&str> {
    let rest = &url[url.find("://")? + 3..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let host = authority.rsplit('@').next().unwrap_or(authority);
    Some(host.rsplit_once(':').map_or(host, |(h, _)| h))
}

/// `10.5`, `0x0a.0.0.5`, `012.0.0.5`, `167772165`: numbers a browser reads
/// as an IPv4 address, but not written the usual way, so the detectors
/// cannot tell where they lead. A link to one is dropped.
fn odd_numeric_host(host: &str) -> bool {
    let numeric = !host.is_empty()
        && host.starts_with(|c: char| c.is_ascii_digit())
        && host
            .chars()
            .all(|c| c.is_ascii_hexdigit() || matches!(c, '.' | 'x' | 'X'));
    let canonical = {
        let parts: Vec<&str> = host.split('.').collect();
        parts.len() == 4
            && parts.iter().all(|p| {
                !p.is_empty()
                    && p.len() <= 3
                    && p.bytes().all(|b| b.is_ascii_digit())
                    && (p.len() == 1 || !p.starts_with('0'))
                    && p.parse::<u16>().is_ok_and(|n| n <= 255)
            })
    };
    numeric && !canonical
}

/// The text of a heading whose inline events start `events`: its slug
/// and its table-of-contents entry.
fn heading_text(events: &[(Event, Range<usize>)]) -> String {
    let mut text = String::new();
    for (e, _) in events {
        match e {
            Event::Text(t) | Event::Code(t) => text.push_str(t),
            Event::End(TagEnd::Heading(_)) => break,
            _ => {}
        }
    }
    text
}

fn level_num(l: HeadingLevel) -> u8 {
    match l {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}
