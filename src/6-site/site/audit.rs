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
use crate::records::RecordLines;
use crate::redact::Counts;
use crate::render::GENERATOR;
use serde::Serialize;

#[derive(Serialize)]
struct Audit<'a> {
    generator: &'static str,
    /// campaign.json as the pages show it: its references resolved, so no
    /// reference is published as literal text here either.
    campaign: campaign::Meta,
    verification: Verification,
    files: Vec<AuditFile>,
    blocks: &'a [BlockRecord],
    ledger: &'a [LedgerEntry],
    /// campaign.json's consistency checks, each with both values read.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    checks: &'a [super::checks::Outcome],
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

impl Site<'_> {
    /// Campaign `i`'s audit.json, with the blocks and ledger its pages
    /// show: the document's head and tail, between which the typed
    /// figures' lines go as the render stage wrote them (its last list).
    pub(super) fn audit(&self, i: usize, shown: Shown) -> Result<[Vec<u8>; 2]> {
        let audit = Audit {
            generator: GENERATOR,
            campaign: shown_meta(&self.publics[i].meta, shown.header),
            verification: self.verification(i, shown.digest),
            files: self.audit_files(i),
            blocks: shown.blocks,
            ledger: shown.ledger,
            checks: shown.checks,
        };
        let mut head = Vec::with_capacity(4096 + audit.files.len() * 200);
        let mut ser = serde_json::Serializer::with_formatter(&mut head, RecordLines::default());
        audit.serialize(&mut ser)?;
        let closed = head.len() - 2;
        assert_eq!(&head[closed..], b"\n}", "audit.json ends with its object");
        head.truncate(closed);
        head.extend_from_slice(b",\n  \"figures\": [");
        let tail = if shown.figures.is_empty() {
            b"]\n}\n".to_vec()
        } else {
            head.push(b'\n');
            b"\n  ]\n}\n".to_vec()
        };
        Ok([head, tail])
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
    pub(crate) blocks: &'a [BlockRecord],
    pub(crate) ledger: &'a [LedgerEntry],
    pub(crate) checks: &'a [super::checks::Outcome],
    /// Every number typed in the pages and the value it matched, as
    /// audit.json's last list.
    pub(crate) figures: &'a crate::claims::Records,
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
