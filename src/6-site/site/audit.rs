//! audit.json: a campaign's machine-readable record of what was verified
//! and what was published, file by file, with every block and ledger entry
//! its pages show.

use super::write::Site;
use crate::blocks::LedgerEntry;
use crate::campaign;
use crate::copies;
use crate::error::Result;
use crate::manifest::Format as ManifestFormat;
use crate::page::BlockRecord;
use crate::redact::Counts;
use crate::render::GENERATOR;
use serde::Serialize;

#[derive(Serialize)]
struct Audit {
    generator: &'static str,
    /// campaign.json as the pages show it: its references resolved, so no
    /// reference is published as literal text here either.
    campaign: campaign::Meta,
    verification: Verification,
    files: Vec<AuditFile>,
    blocks: Vec<BlockRecord>,
    ledger: Vec<LedgerEntry>,
    /// campaign.json's consistency checks, each with both values read.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    checks: Vec<super::checks::Outcome>,
    /// Every number typed in the pages and the value it matched.
    figures: Vec<crate::claims::Record>,
}

#[derive(Serialize)]
struct Verification {
    /// The publication digest every page shows (see docs/FORMAT.md).
    digest: String,
    /// The manifest as published, and its hash.
    manifest: String,
    format: ManifestFormat,
    sha256: String,
    /// The published manifest was rewritten to list the redacted copies.
    rewritten: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    sealed: Option<copies::Commitment>,
    summary: String,
    all_ok: bool,
}

#[derive(Serialize)]
struct AuditFile {
    /// The file's path as published (redacted), before any `.txt` rename.
    path: String,
    /// The published copy's size and hash: for a redacted file not the
    /// original's, which would let anyone test guesses of what was taken out.
    bytes: u64,
    sha256: String,
    verdict: &'static str,
    published: String,
    /// The copy is not the original (values were replaced).
    redacted: bool,
    /// Keyed commitment to the sealed original (with `--key-file`).
    #[serde(skip_serializing_if = "Option::is_none")]
    sealed: Option<copies::Commitment>,
    redactions: Counts,
    /// Binary, published unscanned because the policy allows it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    unscanned: bool,
}

/// audit.json's layout: indented like `to_string_pretty`, except that an
/// object at depth three or deeper (a record of a list: a file, a block,
/// a figure) is written on one line (`{"page": "a.md", "at": "3:7", ...}`):
/// a file of many figures stays readable line by line and about 30% smaller.
#[derive(Default)]
struct RecordLines {
    /// Arrays and objects open around the value being written.
    depth: usize,
    /// The depth of the record being written on one line (0: none).
    record: usize,
    /// Whether the open array or object has a value written yet.
    has_value: bool,
}

impl RecordLines {
    /// Objects this deep are records.
    const RECORD: usize = 3;

    fn indent<W: ?Sized + std::io::Write>(&self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..self.depth {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    fn open<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        b: &[u8],
        object: bool,
    ) -> std::io::Result<()> {
        self.depth += 1;
        if self.record == 0 && object && self.depth >= Self::RECORD {
            self.record = self.depth;
        }
        self.has_value = false;
        w.write_all(b)
    }

    fn close<W: ?Sized + std::io::Write>(&mut self, w: &mut W, b: &[u8]) -> std::io::Result<()> {
        let on_lines = self.record == 0;
        if self.record == self.depth {
            self.record = 0;
        }
        self.depth -= 1;
        if self.has_value && on_lines {
            self.indent(w)?;
        }
        self.has_value = true;
        w.write_all(b)
    }

    /// Before a list's value or an object's key: a comma after the first,
    /// then a new line, or a space inside a record.
    fn next<W: ?Sized + std::io::Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        if self.record == 0 {
            self.indent(w)
        } else if first {
            Ok(())
        } else {
            w.write_all(b" ")
        }
    }
}

impl serde_json::ser::Formatter for RecordLines {
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"[", false)
    }

    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.next(w, first)
    }

    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"{", true)
    }

    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.next(w, first)
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

impl Site<'_> {
    /// Campaign `i`'s audit.json, with the blocks and ledger its pages show.
    pub(super) fn audit(&self, i: usize, shown: Shown) -> Result<Vec<u8>> {
        let audit = Audit {
            generator: GENERATOR,
            campaign: shown_meta(&self.publics[i].meta, shown.header),
            verification: self.verification(i, shown.digest),
            files: self.audit_files(i),
            blocks: shown.blocks,
            ledger: shown.ledger,
            checks: shown.checks,
            figures: shown.figures,
        };
        // Sized up front: a campaign of many pages lists tens of thousands
        // of figures, and a growing buffer is copied at each doubling.
        let records = audit.figures.len() + audit.files.len() + audit.blocks.len();
        let mut out = Vec::with_capacity(4096 + records * 96);
        let mut ser = serde_json::Serializer::with_formatter(&mut out, RecordLines::default());
        audit.serialize(&mut ser)?;
        out.push(b'\n');
        Ok(out)
    }

    fn verification(&self, i: usize, digest: &str) -> Verification {
        let (e, manifest) = (&self.evidences[i], self.copies[i].manifest());
        Verification {
            digest: digest.to_string(),
            manifest: manifest.map(|m| m.path.clone()).unwrap_or_default(),
            format: e.manifest.format,
            sha256: manifest
                .map(|m| m.public_sha256().to_string())
                .unwrap_or_default(),
            rewritten: manifest.is_some_and(copies::Published::redacted),
            sealed: manifest.and_then(|m| m.sealed.clone()),
            summary: e.summary(),
            all_ok: e.all_ok(),
        }
    }

    fn audit_files(&self, i: usize) -> Vec<AuditFile> {
        let (e, p) = (&self.evidences[i], &self.publics[i]);
        e.files
            .iter()
            .zip(self.copies[i].evidence_files())
            .map(|(f, k)| AuditFile {
                path: p.name(&f.path).to_string(),
                bytes: k.public_bytes(),
                sha256: k.public_sha256().to_string(),
                verdict: f.verdict.as_str(),
                published: k.path.clone(),
                redacted: k.redacted(),
                sealed: k.sealed.clone(),
                redactions: k.copied.redactions.clone(),
                unscanned: k.copied.binary,
            })
            .collect()
    }
}

/// What the render stage made of a campaign that audit.json records.
pub(super) struct Shown<'a> {
    pub(crate) blocks: Vec<BlockRecord>,
    pub(crate) ledger: Vec<LedgerEntry>,
    pub(crate) checks: Vec<super::checks::Outcome>,
    pub(crate) figures: Vec<crate::claims::Record>,
    pub(crate) digest: &'a str,
    pub(crate) header: &'a super::nav::Header,
}

/// The campaign's metadata with the header's resolved texts in place of
/// the references campaign.json writes.
fn shown_meta(meta: &campaign::Meta, header: &super::nav::Header) -> campaign::Meta {
    let mut shown = meta.clone();
    shown.title = header.title.clone();
    shown.state = header.state.clone();
    shown.scope = header.scope.clone();
    shown.decision = header.decision.clone();
    shown.summary = header.summary.clone();
    for (page, title) in shown.pages.iter_mut().zip(&header.pages) {
        page.title = title.clone();
    }
    shown
}
