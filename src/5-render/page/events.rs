//! The walk over a page's Markdown events: redacted once up front, then
//! each event published, or handed to the part of the renderer it
//! concerns (a block, a heading, a link, an inline reference).

use super::headings::heading_text;
use super::table::MdTable;
use super::{options, Renderer};
use crate::error::Result;
use pulldown_cmark::{CodeBlockKind, CowStr, Event, Parser, Tag, TagEnd};
use std::ops::Range;

/// A page's events with their byte ranges in the page.
type Events<'a> = Vec<(Event<'a>, Range<usize>)>;

impl<'a> Renderer<'a> {
    /// The page's events with adjacent text merged (so no value is split
    /// across events) and every text, code and HTML string redacted. Link
    /// targets stay as written: [`Self::link`] checks and rewrites them.
    fn public_events(&self) -> Vec<(Event<'a>, Range<usize>)> {
        let mut events: Vec<(Event<'a>, Range<usize>)> = Vec::with_capacity(self.text.len() / 4);
        // Adjacent text events are one run of text: joined in `joined`, so
        // a run of many pieces (lines, references) is copied once.
        let mut joined: Option<String> = None;
        for (e, r) in Parser::new_ext(self.text, options()).into_offset_iter() {
            // A soft line break is white space inside the text run: a name
            // wrapped over two lines is still one name.
            let e = match e {
                Event::SoftBreak => Event::Text("\n".into()),
                e => e,
            };
            if let (Event::Text(t), Some((Event::Text(prev), prev_r))) = (&e, events.last_mut()) {
                joined.get_or_insert_with(|| prev.to_string()).push_str(t);
                prev_r.end = r.end;
                continue;
            }
            join_text(&mut events, &mut joined);
            events.push((e, r));
        }
        join_text(&mut events, &mut joined);
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

    pub(super) fn run(&mut self) -> Result<()> {
        let mut events = self.public_events();
        self.pending.reserve(events.len());
        let mut i = 0;
        // Links we dropped, so their ends are dropped too.
        let mut link_stack: Vec<bool> = Vec::new();
        let mut table = MdTable::default();
        // Figures in code are not claims; a heading's numbering neither.
        let (mut in_code, mut heading_open) = (false, false);
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
                    i = self.fenced_block(&events, i, &info, at)?;
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
                    heading_open = true;
                }
                Event::Text(t) if !in_code => {
                    self.typed_figures(events[i].1.clone(), std::mem::take(&mut heading_open));
                    let shown = crate::claims::unmark(&t).into_owned();
                    self.pending.push(Event::Text(shown.into()));
                }
                Event::Start(tag @ Tag::CodeBlock(_)) => {
                    in_code = true;
                    self.pending.push(Event::Start(tag));
                }
                end @ Event::End(TagEnd::CodeBlock) => {
                    in_code = false;
                    self.pending.push(end);
                }
                end @ Event::End(TagEnd::Heading(_)) => self.close_heading(end),
                Event::Html(s) | Event::InlineHtml(s) => self.pending.push(Event::Text(s)),
                Event::Code(code) if code.starts_with('=') => {
                    let spec = self.store.redactor.redact(&code[1..]).into_owned();
                    let html = self.inline_ref(&spec, at)?;
                    heading_open = false;
                    self.pending.push(Event::InlineHtml(html.into()));
                }
                Event::Start(tag @ (Tag::Link { .. } | Tag::Image { .. })) => {
                    let target = self.target(tag, at)?;
                    link_stack.push(target.is_some());
                    self.pending.extend(target.map(Event::Start));
                }
                end @ (Event::End(TagEnd::Link) | Event::End(TagEnd::Image)) => {
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

    /// An `exhibit KIND` fence opened at event `i`: its body rendered as a
    /// block. Returns the index of the fence's end.
    fn fenced_block(
        &mut self,
        events: &Events<'a>,
        mut i: usize,
        info: &str,
        at: usize,
    ) -> Result<usize> {
        let kind = info.split_whitespace().nth(1).unwrap_or("").to_string();
        let mut body = String::new();
        let mut body_start = None;
        i += 1;
        while i < events.len() && !matches!(events[i].0, Event::End(TagEnd::CodeBlock)) {
            if let Event::Text(t) = &events[i].0 {
                body_start.get_or_insert(events[i].1.start);
                body.push_str(t);
            }
            i += 1;
        }
        self.block(&kind, &body, at, body_start)?;
        Ok(i)
    }

    /// The figures typed in the text event at `range` (`heading`: it opens
    /// a heading). A figure inside what may be a private value is left
    /// out: audit.json lists figures as written.
    fn typed_figures(&mut self, range: Range<usize>, heading: bool) {
        let src = &self.text[range.clone()];
        let figures = crate::claims::figures(&self.lines, src, range.start, heading);
        self.keep_figures(figures);
    }

    /// Kept unchecked: [`super::render`] leaves out those inside what may
    /// be a private value once the page is read, in one search.
    pub(super) fn keep_figures(&mut self, figures: Vec<crate::claims::Figure>) {
        self.figures.typed.extend(figures);
    }

    /// Close a heading, with a link to the section itself, shown on hover
    /// and focus.
    fn close_heading(&mut self, end: Event<'a>) {
        if let Some(id) = self.open_heading.take() {
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

    /// A link or image with its target as published, or `None` to drop
    /// it (its text is kept).
    fn target(&mut self, tag: Tag<'a>, at: usize) -> Result<Option<Tag<'a>>> {
        let (Tag::Link {
            dest_url, title, ..
        }
        | Tag::Image {
            dest_url, title, ..
        }) = &tag
        else {
            return Ok(Some(tag));
        };
        let Some(dest) = self.link(dest_url, at)? else {
            return Ok(None);
        };
        let (dest_url, title) = (CowStr::from(dest), self.public(title));
        Ok(Some(match tag {
            Tag::Link { link_type, id, .. } => Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            },
            Tag::Image { link_type, id, .. } => Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            },
            other => other,
        }))
    }
}

/// The text run being joined, as the last event's text.
fn join_text<'a>(events: &mut [(Event<'a>, Range<usize>)], joined: &mut Option<String>) {
    if let (Some(text), Some((last, _))) = (joined.take(), events.last_mut()) {
        *last = Event::Text(text.into());
    }
}
