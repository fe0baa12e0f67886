//! `exhibit` blocks and inline `=FILE#POINTER` references of a page:
//! parsed as written (so errors point into the page), published from
//! their redacted bodies, rendered by [`crate::blocks`].

use super::{BlockRecord, Renderer};
use crate::blocks::{self, Block, Problem};
use crate::data::{DataStore, LoadError};
use crate::error::InputError;
use crate::error::Result;
use crate::expr::Slot;
use crate::html::escape;

impl Renderer<'_> {
    pub(super) fn block(
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
                    let (line, _) = self.lines.line_col(body_start);
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
            evidence: self.evidence,
            store: self.store,
            chart_id: format!("chart-{}", self.charts),
            export_stem: format!("{}-{}-{}", self.stem, block.kind(), {
                let n = self.of_kind.entry(block.kind()).or_default();
                *n += 1;
                *n
            }),
        };
        let rendered = match blocks::render(&block, &ctx) {
            Ok(r) => r,
            Err(Problem::Here(m)) => {
                return Err(self.err(at, format!("`exhibit {kind}` block: {m}")))
            }
            Err(Problem::Positioned(e)) => {
                let (line, col) = self.lines.line_col(at);
                return Err(e.context(format!(
                    "in the `exhibit {kind}` block at {}:{line}:{col}",
                    self.path.display()
                )));
            }
        };
        self.html.push_str(&rendered.html);
        self.html.push('\n');
        self.caption_figures(&block, body_start);
        self.data_figures(&rendered.data_texts)?;
        if let Some(source) = &rendered.source {
            let (line, _) = self.lines.line_col(at);
            let at = format!("{kind} at {}:{line}", self.store.public.name(self.file));
            let computed = crate::claims::computed(&block, source, &at);
            self.figures.computed.extend(computed);
        }
        self.blocks.push(BlockRecord {
            page: self.file.to_string(),
            line: self.lines.line_col(at).0,
            kind: block.kind(),
            source: rendered.source.as_ref().map(|s| s.path.clone()),
            sha256: rendered.source.as_ref().map(|s| s.sha256.clone()),
        });
        self.ledger.extend(rendered.ledger);
        self.downloads.extend(rendered.downloads);
        Ok(())
    }

    /// The figures typed in strings a block shows as its data files hold
    /// them, placed where each file spells the string (JSON-quoted, or as
    /// it is in a CSV field). Each file is read once, its strings looked
    /// for from where the previous one was found (records come in file
    /// order); one the file does not spell as the record holds it (a
    /// redacted value) is not looked into.
    fn data_figures(&mut self, texts: &[crate::blocks::DataText]) -> Result<()> {
        let mut by_file: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
        for t in texts
            .iter()
            .filter(|t| t.text.bytes().any(|b| b.is_ascii_digit()))
        {
            by_file.entry(&t.file).or_default().push(&t.text);
        }
        for (file, strings) in by_file {
            // The store read it as text already: a file that changed since
            // it was verified fails here as it would there.
            let Ok(text) = String::from_utf8(self.evidence.read_verified(file)?) else {
                continue;
            };
            self.figures_in_file(file, &text, &strings);
        }
        Ok(())
    }

    /// The figures of `strings`, in the order `file` (its `text`) holds
    /// them. Each string is looked for after the last one found. Looking
    /// costs at most sixteen times the file's length and a megabyte in all
    /// (a string the file does not spell as the record holds it, say
    /// redacted, costs a search to the end); past that, the rest are not
    /// looked into, so a dense file of such strings stays linear.
    fn figures_in_file(&mut self, file: &str, text: &str, strings: &[&str]) {
        let det = &self.store.redactor.detector;
        let lines = crate::error::Lines::new(text);
        let public = self.store.public.name(file).to_string();
        let mut budget = 16 * text.len() + (1 << 20);
        let mut from = 0;
        for s in strings {
            let Some((at, len, json)) = spelled_in(text, from, s) else {
                budget = budget.saturating_sub(3 * (text.len() - from));
                if budget == 0 {
                    break;
                }
                continue;
            };
            budget = budget.saturating_sub(at - from);
            from = at + len;
            let typed = without_references(s);
            let mut found = crate::claims::in_string(&lines, s, &typed, at, json);
            det.retain_clear(&mut found, |f| Some(crate::claims::word_at(text, f.offset)));
            for mut f in found {
                f.file = Some(public.clone());
                self.figures.typed.push(f);
            }
        }
    }

    /// The figures typed in a block's captions, titles and card text,
    /// found where the body spells them (a string with JSON escapes is not
    /// looked into).
    fn caption_figures(&mut self, block: &Block, body_start: usize) {
        let body_end = self.text[body_start..]
            .find("\n```")
            .map_or(self.text.len(), |i| body_start + i);
        for text in crate::claims::captions(block) {
            let Ok(spelled) = serde_json::to_string(text) else {
                continue;
            };
            let Some(i) = self.text[body_start..body_end].find(&spelled) else {
                continue;
            };
            let start = body_start + i + 1;
            let written = &self.text[start..start + text.len()];
            let typed = crate::claims::typed_text(&super::without_references(written));
            let figures = crate::claims::figures(&self.lines, &typed, start, false);
            self.keep_figures(figures);
        }
    }

    /// `FILE#EXPR[:FORMAT]` into a `<span>` holding the formatted value.
    pub(super) fn inline_ref(&mut self, spec: &str, at: usize) -> Result<String> {
        let refs = Refs {
            store: self.store,
            ledger: None,
        };
        match refs.resolve(spec) {
            Ok(r) => {
                // A figure a reference shows is computed, not typed: typed
                // figures elsewhere may match it.
                if let Some(value) = r.number {
                    let source = format!("={spec}");
                    self.figures
                        .computed
                        .push(crate::claims::Known { value, source });
                }
                if !r.path.is_empty() {
                    self.figures.sources.push(r.path.clone());
                }
                Ok(r.html())
            }
            Err(RefError::Here(m)) => Err(self.err(at, m)),
            Err(RefError::Positioned(e)) => Err(e),
        }
    }
}

/// The file name `=ledger#count` reads: the campaign's retained failures.
/// No data file can take it (a page `ledger.md` is refused too).
const LEDGER: &str = "ledger";

/// What inline references resolve against: a campaign's verified data and,
/// once every page is rendered, the count of its ledger entries.
pub(crate) struct Refs<'a> {
    pub(crate) store: &'a DataStore<'a>,
    /// `None` while pages render (the ledger is not complete yet).
    pub(crate) ledger: Option<usize>,
}

/// A reference resolved: the value as shown, and the file it came from.
pub(crate) struct Resolved {
    pub(crate) value: String,
    /// The number behind `value`, when it is one (before formatting).
    pub(crate) number: Option<f64>,
    /// The source's published path and short hash (empty for the ledger).
    pub(crate) public: String,
    pub(crate) short_hash: String,
    /// The source's path in the campaign (empty for the ledger).
    pub(crate) path: String,
}

/// Why a reference did not resolve.
pub(crate) enum RefError {
    /// To be reported where the reference is written.
    Here(String),
    /// Already positioned (in the data file).
    Positioned(crate::error::Error),
}

/// Text whose inline references were replaced by their values.
pub(crate) struct Expanded {
    pub(crate) text: String,
    /// Byte ranges of `text` that came from a reference: figures there are
    /// computed, not typed.
    pub(crate) computed: Vec<std::ops::Range<usize>>,
    /// The numbers those references showed, for typed figures to match.
    pub(crate) values: Vec<crate::claims::Known>,
}

impl Resolved {
    /// The value in a `<span>` naming its source, as prose shows it.
    pub(crate) fn html(&self) -> String {
        format!(
            "<span class=\"ref\" title=\"{} · sha256 {}\">{}</span>",
            escape(&self.public),
            self.short_hash,
            escape(&self.value)
        )
    }
}

impl Refs<'_> {
    /// `FILE#EXPR[:FORMAT]` (the text after `=`, already redacted).
    pub(crate) fn resolve(&self, spec: &str) -> Result<Resolved, RefError> {
        let bad = |m: String| RefError::Here(format!("reference `={spec}`: {m}"));
        let (file, rest) = spec
            .split_once('#')
            .ok_or_else(|| bad("expected `=FILE#POINTER` or `=FILE#POINTER:FORMAT`".into()))?;
        let slot = Slot::parse(rest).map_err(bad)?;
        if file.trim() == LEDGER {
            return self.ledger_count(&slot).map_err(bad);
        }
        let source = self.store.load(file.trim()).map_err(|e| match e {
            LoadError::AtBlock(m) => bad(m),
            LoadError::Other(e) => RefError::Positioned(e),
        })?;
        let value = slot
            .render(source.document())
            .map_err(|e| bad(format!("{e} in `{}`", source.path)))?;
        Ok(Resolved {
            value: value.to_string(),
            number: value.number(),
            public: source.public.clone(),
            short_hash: source.short_hash().to_string(),
            path: source.path.clone(),
        })
    }

    /// `=ledger#count`: how many entries the campaign's ledger holds.
    fn ledger_count(&self, slot: &Slot) -> Result<Resolved, String> {
        let Some(count) = self.ledger else {
            return Err("the ledger is complete only once every page is rendered: `=ledger#count` can be read in campaign.json's header fields and checks, not in a page".into());
        };
        let doc = serde_json::json!({ "count": count });
        let value = slot
            .render(&doc)
            .map_err(|e| format!("{e} in the ledger (it has only `count`)"))?;
        Ok(Resolved {
            value: value.to_string(),
            number: value.number(),
            public: LEDGER.to_string(),
            short_hash: String::new(),
            path: String::new(),
        })
    }

    /// A string of campaign.json (`key`'s value, `original` as written and
    /// `public` as published) with its references resolved; an error is
    /// positioned at the reference in campaign.json.
    pub(crate) fn expand_meta(
        &self,
        campaign: &crate::campaign::Campaign,
        key: &str,
        original: &str,
        public: &str,
    ) -> Result<Expanded> {
        self.expand(public).map_err(|(at, e)| match e {
            RefError::Positioned(e) => e,
            RefError::Here(m) => {
                // The same reference in the value as written: redaction may
                // have moved it.
                let k = references(public).iter().position(|(r, _)| r.start == at);
                let written = k.and_then(|k| references(original).get(k).map(|(r, _)| r.start));
                let text = &campaign.text;
                let offset =
                    crate::campaign::offset_in_value(text, key, original, written.unwrap_or(0));
                let path = campaign.path(crate::campaign::META_NAME);
                InputError::at_offset(&path, text, offset, format!("`{key}`: {m}")).into()
            }
        })
    }

    /// `text` with every `` `=FILE#EXPR[:FORMAT]` `` code span replaced by
    /// its value, as plain text; an error carries the byte offset of the
    /// failing reference in `text`.
    pub(crate) fn expand(&self, text: &str) -> Result<Expanded, (usize, RefError)> {
        let mut out = Expanded {
            text: String::with_capacity(text.len()),
            computed: Vec::new(),
            values: Vec::new(),
        };
        let mut last = 0;
        for (span, spec) in references(text) {
            out.text.push_str(&text[last..span.start]);
            let spec = self.store.redactor.redact(&spec).into_owned();
            let r = self.resolve(&spec).map_err(|e| (span.start, e))?;
            let start = out.text.len();
            out.text.push_str(&r.value);
            out.computed.push(start..out.text.len());
            if let Some(value) = r.number {
                let source = format!("={spec}");
                out.values.push(crate::claims::Known { value, source });
            }
            last = span.end;
        }
        out.text.push_str(&text[last..]);
        Ok(out)
    }
}

/// `text` with its inline references blanked (offsets kept): what was
/// typed around them.
pub(crate) fn without_references(text: &str) -> String {
    let mut typed = text.to_string();
    for (span, _) in references(text).into_iter().rev() {
        typed.replace_range(span.clone(), &" ".repeat(span.len()));
    }
    typed
}

/// The inline references in a string: each code span that starts with
/// `=`, found by the Markdown parser prose goes through (so the backtick
/// rules are CommonMark's), with its byte range and the text after `=`.
pub(crate) fn references(text: &str) -> Vec<(std::ops::Range<usize>, String)> {
    if !text.contains("`=") {
        return Vec::new();
    }
    pulldown_cmark::Parser::new_ext(text, super::options())
        .into_offset_iter()
        .filter_map(|(e, r)| match e {
            pulldown_cmark::Event::Code(c) if c.starts_with('=') => Some((r, c[1..].to_string())),
            _ => None,
        })
        .collect()
}

/// The first inline reference left as literal text in a finished page
/// (outside preformatted blocks, where a page may show the syntax itself),
/// so that no reader is shown `=FILE#EXPR` in place of a number.
pub(crate) fn unresolved(html: &str) -> Option<String> {
    use std::sync::OnceLock;
    static PRE: OnceLock<regex::Regex> = OnceLock::new();
    static LITERAL: OnceLock<regex::Regex> = OnceLock::new();
    let pre = PRE.get_or_init(|| regex::Regex::new(r"(?s)<pre[\s>].*?</pre>").expect("valid"));
    let literal = LITERAL.get_or_init(|| {
        regex::Regex::new(r"(?:`|<code>)=[^`<>\s]+#[^`<>]*(?:`|</code>)").expect("valid")
    });
    // Every literal starts "`=" or "<code>=": a page with neither has none.
    let finder = |needle: &str| memchr::memmem::find(html.as_bytes(), needle.as_bytes());
    if finder("`=").is_none() && finder("<code>=").is_none() {
        return None;
    }
    let outside = pre.replace_all(html, "");
    literal.find(&outside).map(|m| m.as_str().to_string())
}

/// Where `text` spells the string `s`, at or after byte `from`: as JSON
/// writes it, as writers that keep to ASCII do (`\u00e9`), or as it is
/// (a CSV field). The offset, the spelling's length, and whether it is
/// JSON-quoted.
fn spelled_in(text: &str, from: usize, s: &str) -> Option<(usize, usize, bool)> {
    let find = |needle: &str| text[from..].find(needle).map(|i| from + i);
    let quoted = serde_json::to_string(s).unwrap_or_default();
    if let Some(at) = find(&quoted) {
        return Some((at, quoted.len(), true));
    }
    let ascii = crate::claims::ascii_json(s);
    if ascii != quoted {
        if let Some(at) = find(&ascii) {
            return Some((at, ascii.len(), true));
        }
    }
    find(s).map(|at| (at, s.len(), false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_code_spans_starting_with_equals() {
        let found = references("a `=d.json#/x:.1` b `code` ``=e#/y``");
        let specs: Vec<&str> = found.iter().map(|(_, s)| s.as_str()).collect();
        assert_eq!(specs, ["d.json#/x:.1", "e#/y"]);
        assert_eq!(found[0].0, 2..17);
        assert!(references("no `= reference` here, x = 1").len() == 1);
    }

    #[test]
    fn literal_references_are_found_outside_preformatted_text() {
        assert_eq!(
            unresolved("<p><code>=data/x.json#/a</code></p>").as_deref(),
            Some("<code>=data/x.json#/a</code>")
        );
        assert_eq!(
            unresolved("<dd>held `=data/x.json#/a:.1` cells</dd>").as_deref(),
            Some("`=data/x.json#/a:.1`")
        );
        let shown = "<pre><code>`=data/x.json#/a`\n</code></pre><p>a = b # c</p>";
        assert_eq!(unresolved(shown), None);
    }
}
