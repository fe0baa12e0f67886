//! Headings of a page: each gets a unique id (written `{#id}` or its
//! text's slug) and a table-of-contents entry; no other attribute.

use super::{Heading, Renderer};
use crate::error::Result;
use pulldown_cmark::{CowStr, Event, HeadingLevel, Tag, TagEnd};
use std::ops::Range;

impl<'a> Renderer<'a> {
    /// Open a heading: its id (written `{#id}` or its text's slug, made
    /// unique in the page). The format defines no other heading attribute:
    /// a class or `key=value` is refused at the `{` that opens them, since
    /// pulldown-cmark would publish it as written (`onfocus=...`).
    pub(super) fn heading(
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
}

/// The text of a heading whose inline events start `events`: its slug
/// and its table-of-contents entry.
pub(super) fn heading_text(events: &[(Event, Range<usize>)]) -> String {
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
