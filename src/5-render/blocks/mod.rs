//! `exhibit` blocks: parse a fenced block's kind and JSON body into a typed
//! spec, then render it to an HTML fragment over verified data.

mod card;
mod chart;
mod export;
mod ledger;
mod table;

pub(crate) use export::Download;
pub(crate) use ledger::{entries_table, LedgerEntry};

use crate::data::{DataStore, LoadError, Source};
use crate::evidence::Evidence;
use serde::de::DeserializeOwned;
use std::sync::Arc;

pub(crate) const KINDS: &[&str] = &["card", "keyvalue", "table", "chart", "ledger", "manifest"];

#[derive(Debug)]
pub enum Block {
    Card(card::CardSpec),
    KeyValue(table::KeyValueSpec),
    Table(table::TableSpec),
    Chart(chart::ChartSpec),
    Ledger(ledger::LedgerSpec),
    Manifest(ledger::ManifestSpec),
}

/// Why a block body could not be parsed.
pub enum ParseError {
    /// serde's message with line and column inside the body.
    Json(serde_json::Error),
    /// A check after parsing, reported at the block.
    Invalid(String),
}

pub fn parse(kind: &str, body: &str) -> Result<Block, ParseError> {
    fn de<T: DeserializeOwned>(body: &str) -> Result<T, ParseError> {
        serde_json::from_str(body).map_err(ParseError::Json)
    }
    let block = match kind {
        "card" => Block::Card(de(body)?),
        "keyvalue" => Block::KeyValue(de(body)?),
        "table" => Block::Table(de(body)?),
        "chart" => Block::Chart(de(body)?),
        "ledger" => Block::Ledger(de(body)?),
        "manifest" => Block::Manifest(de(body)?),
        other => {
            return Err(ParseError::Invalid(format!(
                "unknown block kind `{other}`: expected one of {}",
                KINDS.join(", ")
            )))
        }
    };
    block.check().map_err(ParseError::Invalid)?;
    Ok(block)
}

impl Block {
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Block::Card(_) => "card",
            Block::KeyValue(_) => "keyvalue",
            Block::Table(_) => "table",
            Block::Chart(_) => "chart",
            Block::Ledger(_) => "ledger",
            Block::Manifest(_) => "manifest",
        }
    }

    fn check(&self) -> Result<(), String> {
        match self {
            Block::Card(c) => c.check(),
            Block::Table(t) => t.check(),
            Block::Chart(c) => c.check(),
            Block::Ledger(l) => l.check(),
            _ => Ok(()),
        }
    }
}

/// Why a block could not be rendered.
pub(crate) enum Problem {
    /// Reported at the block's position in the page.
    Here(String),
    /// Already positioned elsewhere (in a data file).
    Positioned(crate::error::Error),
}

impl From<LoadError> for Problem {
    fn from(e: LoadError) -> Self {
        match e {
            LoadError::AtBlock(m) => Problem::Here(m),
            LoadError::Other(e) => Problem::Positioned(e),
        }
    }
}

impl From<String> for Problem {
    fn from(m: String) -> Self {
        Problem::Here(m)
    }
}

/// What rendering needs from the earlier stages.
pub(crate) struct Ctx<'a> {
    pub(crate) evidence: &'a Evidence,
    pub(crate) store: &'a DataStore<'a>,
    /// Chart number within the page, for unique SVG ids.
    pub(crate) chart_id: String,
    /// Name of this block's data downloads (`PAGE-KIND-N`), unique in the campaign.
    pub(crate) export_stem: String,
}

/// A rendered block.
pub(crate) struct Rendered {
    pub(crate) html: String,
    pub(crate) source: Option<Arc<Source>>,
    pub(crate) ledger: Vec<LedgerEntry>,
    /// Data downloads the block links to.
    pub(crate) downloads: Vec<Download>,
    /// Strings the block shows as a data file holds them.
    pub(crate) data_texts: Vec<DataText>,
}

/// A string a block shows as its data file typed it (a ledger record's
/// `result` or `impact`, a key-value table's text value): the numbers in
/// it are typed figures, placed in that file.
#[derive(Debug, Clone)]
pub(crate) struct DataText {
    /// The file's campaign path.
    pub(crate) file: String,
    /// The string as the record holds it, its references unresolved.
    pub(crate) text: String,
}

impl DataText {
    /// `text` of record `rec` of `source`: a glob's record names its file.
    pub(crate) fn of(source: &Source, rec: &serde_json::Value, text: &str, ctx: &Ctx) -> DataText {
        let file = match rec.get("source_path").and_then(serde_json::Value::as_str) {
            Some(public) if !source.members.is_empty() => ctx.store.public.original(public),
            _ => source.path.as_str(),
        };
        DataText {
            file: file.to_string(),
            text: text.to_string(),
        }
    }
}

impl Ctx<'_> {
    /// Text a reader reads (a caption, a ledger field, a value) with its
    /// inline references resolved, as plain text.
    pub(crate) fn expand(&self, text: &str) -> Result<String, Problem> {
        let refs = crate::page::Refs {
            store: self.store,
            ledger: None,
        };
        // A figure marked as quoted from elsewhere (`[~6000]`) is shown
        // without its marker.
        let shown = |e: crate::page::Expanded| crate::claims::unmark(&e.text).into_owned();
        refs.expand(text).map(shown).map_err(|(_, e)| match e {
            crate::page::RefError::Here(m) => Problem::Here(m),
            crate::page::RefError::Positioned(e) => Problem::Positioned(e),
        })
    }

    pub(crate) fn expand_opt(&self, text: &Option<String>) -> Result<Option<String>, Problem> {
        text.as_deref().map(|t| self.expand(t)).transpose()
    }

    /// Link target for a campaign file as published (public path in).
    pub(crate) fn href(&self, public: &str) -> String {
        crate::campaign::published_name(public)
    }

    /// The source line under a block: its file and hash, or for a glob
    /// the pattern and each matched file with its hash.
    fn source_note(&self, s: &Source) -> String {
        if s.members.is_empty() {
            return crate::html::source_note(&s.public, &self.href(&s.public), &s.sha256);
        }
        let files: Vec<String> = s
            .members
            .iter()
            .map(|(path, sha)| {
                format!(
                    "<li><a href=\"{}\">{}</a> · <span class=\"hash\" title=\"sha256 {sha}\">sha256 {}</span></li>",
                    crate::html::escape(&crate::html::file_href(&self.href(path))),
                    crate::html::escape(path),
                    &sha[..sha.len().min(12)]
                )
            })
            .collect();
        format!(
            "<details class=\"source\"><summary>Source: <code>{}</code> · {} files · <span class=\"hash\" title=\"sha256 of the files' SHA256SUMS lines {}\">sha256 {}</span></summary><ul>{}</ul></details>",
            crate::html::escape(&s.public),
            s.members.len(),
            s.sha256,
            s.short_hash(),
            files.concat()
        )
    }
}

pub(crate) fn render(block: &Block, ctx: &Ctx) -> Result<Rendered, Problem> {
    let plain = |(html, source): (String, Arc<Source>)| Rendered {
        html,
        source: Some(source),
        ledger: Vec::new(),
        downloads: Vec::new(),
        data_texts: Vec::new(),
    };
    let with_data = |(html, source, downloads): (String, Arc<Source>, Vec<Download>)| Rendered {
        html,
        source: Some(source),
        ledger: Vec::new(),
        downloads,
        data_texts: Vec::new(),
    };
    Ok(match block {
        Block::Card(spec) => plain(card::render(spec, ctx)?),
        Block::KeyValue(spec) => table::render_keyvalue(spec, ctx)?,
        Block::Table(spec) => with_data(table::render(spec, ctx)?),
        Block::Chart(spec) => {
            // Title and caption resolved here, so the chart draws text.
            let spec = chart::ChartSpec {
                title: ctx.expand(&spec.title)?,
                caption: ctx.expand_opt(&spec.caption)?,
                ..spec.clone()
            };
            with_data(chart::render(&spec, ctx)?)
        }
        Block::Ledger(spec) => ledger::render(spec, ctx)?,
        Block::Manifest(spec) => Rendered {
            html: ledger::render_manifest(spec, ctx),
            source: None,
            ledger: Vec::new(),
            downloads: Vec::new(),
            data_texts: Vec::new(),
        },
    })
}

/// Turn an evaluation failure into a message naming the record.
fn at_record(label: &str, e: crate::expr::EvalError) -> Problem {
    Problem::Here(format!("record {label}: {e}"))
}

/// A field of a record whose references did not resolve: the record and
/// field named, at the block (or where the error already points).
pub(crate) fn at_record_problem(label: &str, field: &str, p: Problem) -> Problem {
    match p {
        Problem::Here(m) => Problem::Here(format!("record {label}, `{field}`: {m}")),
        Problem::Positioned(e) => {
            Problem::Positioned(e.context(format!("record {label}, `{field}`")))
        }
    }
}
