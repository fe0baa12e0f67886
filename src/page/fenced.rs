//! `exhibit` blocks and inline `=FILE#POINTER` references of a page:
//! parsed as written (so errors point into the page), published from
//! their redacted bodies, rendered by [`crate::blocks`].

use super::{BlockRecord, Renderer};
use crate::blocks::{self, Block, Problem};
use crate::data::LoadError;
use crate::error::InputError;
use crate::expr::Slot;
use crate::html::escape;
use anyhow::Result;

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
        self.caption_figures(&block, body_start);
        if let Some(source) = &rendered.source {
            let (line, _) = crate::error::line_col(self.text, at);
            let at = format!("{kind} at {}:{line}", self.store.public.name(self.file));
            let computed = crate::claims::computed(&block, source, &at);
            self.figures.computed.extend(computed);
        }
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
            let typed = crate::claims::typed_text(&self.text[start..start + text.len()]);
            let figures = crate::claims::figures(self.text, &typed, start, false);
            self.keep_figures(figures);
        }
    }

    /// `FILE#EXPR[:FORMAT]` into a `<span>` holding the formatted value.
    pub(super) fn inline_ref(&mut self, spec: &str, at: usize) -> Result<String> {
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
        if let Some(value) = value.number() {
            let source = format!("={spec}");
            self.figures
                .computed
                .push(crate::claims::Known { value, source });
        }
        self.figures.sources.push(source.path.clone());
        Ok(format!(
            "<span class=\"ref\" title=\"{} · sha256 {}\">{}</span>",
            escape(&source.public),
            source.short_hash(),
            escape(&value.to_string())
        ))
    }
}
