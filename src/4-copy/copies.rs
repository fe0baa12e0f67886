//! The copy stage: every file of a campaign published into the staging
//! folder (redacted where the scan found values) before any page renders,
//! so that pages, the manifest page, audit.json, SHA256SUMS and the single
//! file all name the published copy's own hash and size. A redacted file's
//! original digest and size are never published: they would let anyone
//! test guesses of the values taken out (see [`crate::commit`]).

use crate::campaign::Campaign;
use crate::commit::{Key, Sealed};
use crate::error::Result;
use crate::evidence::Evidence;
use crate::manifest;
use crate::public::{self, Copied, Mode, Public};
use crate::redact::{Counts, Redactor};
use crate::sink::Sink;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::HashMap;
use std::path::Path;

/// One published campaign file.
#[derive(Debug, Clone)]
pub(crate) struct Published {
    /// The path in the campaign (private: never published as it is).
    pub(crate) original: String,
    /// Where the copy is published in the campaign's folder.
    pub(crate) path: String,
    pub(crate) mode: Mode,
    pub(crate) copied: Copied,
    /// Set for a redacted copy when the publisher gave a key.
    pub(crate) sealed: Option<Commitment>,
}

/// What ties a redacted copy to its sealed original, for key holders only.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub(crate) struct Commitment {
    /// HMAC-SHA256 of the original's path, hash and size and the copy's hash.
    pub(crate) hmac_sha256: String,
    /// HMAC-SHA256 of the original's path, to pair copy and original.
    pub(crate) path_tag: String,
}

impl Published {
    /// The copy differs from the verified original.
    pub(crate) fn redacted(&self) -> bool {
        self.copied.published_sha256 != self.copied.sha256
    }

    /// The hash the public sees: the copy's.
    pub(crate) fn public_sha256(&self) -> &str {
        &self.copied.published_sha256
    }

    /// The size the public sees: the copy's.
    pub(crate) fn public_bytes(&self) -> u64 {
        self.copied.published_bytes
    }
}

/// A campaign's published files: one per evidence file, in
/// `Evidence::files` order, then the manifest.
#[derive(Debug, Default)]
pub(crate) struct Copies {
    pub(crate) files: Vec<Published>,
    at: HashMap<String, usize>,
}

impl Copies {
    /// The copy of a campaign file, by its original path.
    pub(crate) fn get(&self, original: &str) -> Option<&Published> {
        self.at.get(original).map(|&i| &self.files[i])
    }

    /// The evidence files' copies (the manifest's left out).
    pub(crate) fn evidence_files(&self) -> &[Published] {
        &self.files[..self.files.len().saturating_sub(1)]
    }

    /// The published manifest.
    pub(crate) fn manifest(&self) -> Option<&Published> {
        self.files.last()
    }
}

/// One file to copy: where it goes, what it is, its verified hash, how.
struct Planned {
    /// Path inside the campaign's published folder.
    published: String,
    original: String,
    /// The verified SHA-256 the copy must read.
    expected: String,
    mode: Mode,
}

/// Everything the copy stage reads.
pub(crate) struct Stage<'a> {
    pub(crate) redactor: &'a Redactor,
    pub(crate) key: Option<&'a Key>,
    pub(crate) sink: &'a Sink<'a>,
    /// Chunk buffers of large files' one pass, from one file to the next.
    pub(crate) buffers: crate::stream::Pool,
}

/// The manifest's name in a published campaign.
pub(crate) fn published_manifest(format: manifest::Format) -> &'static str {
    match format {
        manifest::Format::Json => manifest::JSON_NAME,
        manifest::Format::Sha256sums => "campaign.sha256",
    }
}

impl Stage<'_> {
    /// Copy every file of campaign `c` into the staging folder, then its
    /// manifest: as verified when nothing was redacted (so its hash is the
    /// sealed one), else rewritten to list the copies as published.
    pub(crate) fn copy_campaign(&self, c: &Campaign, e: &Evidence, p: &Public) -> Result<Copies> {
        let id = p.meta.id.as_str();
        let same_detector = p.scanned_by == self.redactor.detector.fingerprint();
        let files: Vec<Planned> = e
            .files
            .iter()
            .map(|f| {
                let published = p.published(&f.path);
                Planned {
                    mode: copy_mode(p, same_detector, &f.path, &published),
                    published,
                    original: f.path.clone(),
                    expected: f.sha256.clone().unwrap_or_default(),
                }
            })
            .collect();
        // Every copy at once; in the preview, those the served site already
        // has (same verified bytes, copied as they are) are not copied.
        // Large text files wait: each is then read once, in path order, on
        // every core, its values numbered as they are met (see
        // `crate::stream`).
        let mut copied = files
            .par_iter()
            .map(|f| {
                if p.streamed.contains(&f.original) {
                    return Ok(None);
                }
                let k = self.copy_file(c, e, p, f, id, same_detector)?;
                Ok(Some((f.mode, k)))
            })
            .collect::<Result<Vec<Option<(Mode, Copied)>>>>()?;
        for (f, k) in files.iter().zip(&mut copied) {
            if k.is_none() {
                *k = Some(self.stream_file(c, e, f, id)?);
            }
        }
        let mut out = Copies::default();
        for (f, k) in files.into_iter().zip(copied) {
            let (mode, copied) = k.expect("every file was copied");
            out.push(self.published(f.original, f.published, mode, copied));
        }
        let manifest = self.copy_manifest(c, e, p, &out, same_detector)?;
        out.push(manifest);
        Ok(out)
    }

    /// Copy one file into the campaign's folder `id` of staging, unless
    /// (preview) the served site has it already.
    fn copy_file(
        &self,
        c: &Campaign,
        e: &Evidence,
        p: &Public,
        f: &Planned,
        id: &str,
        same_detector: bool,
    ) -> Result<Copied> {
        let Planned {
            published,
            original,
            expected,
            mode,
        } = f;
        let rel = format!("{id}/{published}");
        let bytes = || e.get(original).and_then(|f| f.bytes).unwrap_or(0);
        if let Some(served) = self.served(&rel, expected, bytes, *mode) {
            return Ok(served);
        }
        let to = self.sink.create(&rel)?;
        let kept = e.kept(original);
        let found = p.hits.get(original).filter(|_| same_detector);
        let k = match (kept.as_deref(), found) {
            (Some(bytes), Some(hits)) if *mode == Mode::Redact => {
                public::copy_found(self.redactor, bytes, hits, to, expected)?
            }
            _ => public::copy(
                self.redactor,
                &c.path(original),
                kept.as_deref(),
                to,
                expected,
                *mode,
            )?,
        };
        self.sink.unchanged(&rel, &k.published_sha256);
        Ok(k)
    }

    /// The copy the served site already has (preview): same verified
    /// bytes, copied as they are. `bytes`: their size.
    fn served(
        &self,
        rel: &str,
        expected: &str,
        bytes: impl Fn() -> u64,
        mode: Mode,
    ) -> Option<Copied> {
        if mode == Mode::Redact || !self.sink.unchanged(rel, expected) {
            return None;
        }
        Some(Copied {
            sha256: expected.to_string(),
            published_sha256: expected.to_string(),
            bytes: bytes(),
            published_bytes: bytes(),
            redactions: Counts::new(),
            binary: mode == Mode::Binary,
            scanned: None,
        })
    }

    /// Copy a large text file in one read (see [`crate::stream`]): verbatim
    /// when nothing was found in it, else redacted; either way scanned as
    /// written. Its bytes are judged against the manifest here, before
    /// anything is published. One that turns out not to be text is
    /// scanned, judged and copied as binaries are.
    fn stream_file(
        &self,
        c: &Campaign,
        e: &Evidence,
        f: &Planned,
        id: &str,
    ) -> Result<(Mode, Copied)> {
        let rel = format!("{id}/{}", f.published);
        let from = c.path(&f.original);
        let pass = crate::stream::Pass {
            redactor: self.redactor,
            from: &from,
            published: crate::redact::scan::View::of(Path::new(&f.published)),
            buffers: &self.buffers,
        };
        let (mode, k) = match pass.run(self.sink.create(&rel)?)? {
            Some(s) => {
                let mut k = s.copied;
                e.check_deferred(&f.original, &k.sha256, k.bytes)?;
                k.scanned = Some(s.scanned);
                let mode = if k.published_sha256 == k.sha256 {
                    Mode::Verbatim
                } else {
                    Mode::Redact
                };
                (mode, k)
            }
            None => {
                public::scan_binary(c, e, self.redactor, &f.original)?;
                let to = self.sink.create(&rel)?;
                let k = public::copy(self.redactor, &from, None, to, &f.expected, Mode::Binary)?;
                (Mode::Binary, k)
            }
        };
        self.sink.unchanged(&rel, &k.published_sha256);
        Ok((mode, k))
    }

    fn published(&self, original: String, path: String, mode: Mode, copied: Copied) -> Published {
        let sealed = self
            .key
            .filter(|_| copied.published_sha256 != copied.sha256)
            .map(|key| Commitment {
                hmac_sha256: key.commit(&Sealed {
                    path: &original,
                    sha256: &copied.sha256,
                    bytes: copied.bytes,
                    published_sha256: &copied.published_sha256,
                }),
                path_tag: key.path_tag(&original),
            });
        Published {
            original,
            path,
            mode,
            copied,
            sealed,
        }
    }

    /// The manifest lists every original's hash and size: published as it
    /// is only when every copy and every name is the original.
    fn copy_manifest(
        &self,
        c: &Campaign,
        e: &Evidence,
        p: &Public,
        copies: &Copies,
        same_detector: bool,
    ) -> Result<Published> {
        let id = p.meta.id.as_str();
        let name = published_manifest(e.manifest.format).to_string();
        let rel = format!("{id}/{name}");
        let rewrite = copies
            .files
            .iter()
            .any(|f| f.redacted() || p.name(&f.original) != f.original);
        let original = e.manifest.name.clone();
        if !rewrite {
            let mode = copy_mode(p, same_detector, &original, &name);
            let (expected, bytes) = (&e.manifest.sha256, || e.manifest.bytes);
            if let Some(served) = self.served(&rel, expected, bytes, mode) {
                return Ok(self.published(original, name, mode, served));
            }
            let copied = public::copy(
                self.redactor,
                &c.path(&original),
                None,
                self.sink.create(&rel)?,
                &e.manifest.sha256,
                mode,
            )?;
            // Part of the new site, as every copy is: a preview save that
            // drops the campaign drops it too.
            self.sink.unchanged(&rel, &copied.published_sha256);
            return Ok(self.published(original, name, mode, copied));
        }
        let rows: Vec<(&str, &str, u64)> = copies
            .files
            .iter()
            .map(|f| (p.name(&f.original), f.public_sha256(), f.public_bytes()))
            .collect();
        let text = manifest::render(e.manifest.format, &rows)?;
        let (sha, _) = self.sink.write(&rel, text.as_bytes())?;
        let copied = Copied {
            sha256: e.manifest.sha256.clone(),
            published_sha256: sha,
            bytes: e.manifest.bytes,
            published_bytes: text.len() as u64,
            redactions: Counts::new(),
            binary: false,
            scanned: None,
        };
        Ok(self.published(original, name, Mode::Redact, copied))
    }
}

impl Copies {
    fn push(&mut self, f: Published) {
        self.at.insert(f.original.clone(), self.files.len());
        self.files.push(f);
    }
}

/// Register every secret met by key in the campaign's JSON files and in
/// the JSON bodies of its pages' `exhibit` blocks (`"api_key": "..."`, a
/// row labelled `token`), so the copies are redacted of such values even
/// where no key stands beside them. Files that name no secret-like key
/// are not parsed; files that do not parse are left to the stage that
/// reports them with a position.
/// CSV and TSV files are read as tables, as the render stage reads them. A
/// file a block reads in a format its extension does not name is met by
/// key only as the pages render; the rescan then looks for such a secret
/// in every file, the verbatim copies too, and refuses what holds it.
/// `keyless`: the preview's record of files whose parse found nothing to
/// redact (see [`Keyless`]); they are not parsed again.
pub(crate) fn learn_keyed_secrets(
    c: &Campaign,
    e: &Evidence,
    r: &Redactor,
    keyless: Option<&Keyless>,
) -> Result<()> {
    const READ_UP_TO: u64 = 64 << 20;
    let pages: std::collections::HashSet<&str> =
        c.meta.pages.iter().map(|p| p.file.as_str()).collect();
    let detector = r.detector.fingerprint();
    let mut todo = Vec::new();
    for f in &e.files {
        let jsonl = f.path.ends_with(".jsonl");
        let json = jsonl || f.path.ends_with(".json");
        let lower = f.path.to_ascii_lowercase();
        let table = lower.ends_with(".csv") || lower.ends_with(".tsv");
        let page = pages.contains(f.path.as_str());
        if !(json || table || page) || f.bytes.unwrap_or(0) > READ_UP_TO {
            continue;
        }
        // What the parse below depends on: how the file is read (its name
        // says whether a table is CSV or TSV), its verified bytes and the
        // detector.
        let key = e.verified_sha256(&f.path).map(|sha| {
            let how = match (page, jsonl, table) {
                (true, _, _) => "page",
                (_, true, _) => "jsonl",
                (_, _, true) => "table",
                _ => "json",
            };
            format!("{how}\0{}\0{sha}\0{detector}", f.path)
        });
        if keyless.zip(key.as_ref()).is_some_and(|(k, key)| k.has(key)) {
            continue;
        }
        todo.push((f.path.as_str(), Read { page, table, jsonl }, key));
    }
    // Whether the bytes kept in memory are worth parsing, asked of all at
    // once (a thousand pages took 10 ms on one core); the parse itself
    // numbers what it finds, so it goes in file order.
    let parse: Vec<Option<bool>> = todo
        .par_iter()
        .map(|(path, _, _)| e.kept(path).map(|b| worth_parsing(&b)))
        .collect();
    for ((path, how, key), parse) in todo.into_iter().zip(parse) {
        let (kept, read);
        let bytes: &[u8] = match e.kept(path) {
            Some(b) => {
                kept = b;
                &kept
            }
            None => {
                read = e.read_verified(path)?;
                &read
            }
        };
        let mut found = Counts::new();
        let worth = parse.unwrap_or_else(|| worth_parsing(bytes));
        if let Some(text) = worth.then(|| std::str::from_utf8(bytes).ok()).flatten() {
            how.learn(c, path, text, r, &mut found);
        }
        // Nothing found: the parse numbered nothing, and never will from
        // these bytes with this detector, whatever else the build holds.
        if let (Some(k), Some(key), true) = (keyless, key, found.is_empty()) {
            k.insert(key);
        }
    }
    Ok(())
}

/// Bytes that are not UTF-8 or name no secret-like key are not parsed:
/// they hold nothing to learn, as a parse finding nothing.
fn worth_parsing(bytes: &[u8]) -> bool {
    std::str::from_utf8(bytes).is_ok() && crate::redact::may_name_a_secret(bytes)
}

/// How [`learn_keyed_secrets`] reads a file: a page's `exhibit` blocks, a
/// CSV or TSV table, JSON lines, or one JSON document.
struct Read {
    page: bool,
    table: bool,
    jsonl: bool,
}

impl Read {
    /// Redact the values `text` (the file `path`) holds by key, counting
    /// them in `found`.
    fn learn(&self, c: &Campaign, path: &str, text: &str, r: &Redactor, found: &mut Counts) {
        let mut learn = |body: &str| {
            if let Ok(mut v) = serde_json::from_str::<serde_json::Value>(body) {
                r.redact_value(&mut v, found);
            }
        };
        if self.page {
            for body in exhibit_bodies(text) {
                learn(&body);
            }
        } else if self.table {
            // A CSV or TSV file read as the render stage reads it: a row
            // `HF_TOKEN,<value>` under `key,value` is a secret by its label.
            let none = |_: &str| None;
            let file = c.path(path);
            if let Ok(mut parsed) = crate::formats::read(&file, path, text, None, &none) {
                r.redact_value(&mut parsed.doc, found);
            }
        } else if self.jsonl {
            text.lines().for_each(&mut learn);
        } else {
            learn(text);
        }
    }
}

/// Files whose parse for keyed secrets found no value to redact, by how
/// they are read, their hash and the detector: kept by the preview's
/// [`crate::site::BuildCache`] so a save does not parse every JSON file
/// that names a secret-like key (`max_tokens`) again.
#[derive(Default)]
pub(crate) struct Keyless(std::sync::Mutex<std::collections::HashSet<String>>);

impl Keyless {
    fn has(&self, key: &str) -> bool {
        let known = self.0.lock().unwrap_or_else(|e| e.into_inner());
        known.contains(key)
    }

    fn insert(&self, key: String) {
        let mut known = self.0.lock().unwrap_or_else(|e| e.into_inner());
        known.insert(key);
    }
}

/// The bodies of a page's fenced `exhibit` blocks.
fn exhibit_bodies(text: &str) -> Vec<String> {
    use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
    let mut bodies = Vec::new();
    let mut open: Option<String> = None;
    for ev in Parser::new(text) {
        match ev {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info)))
                if info.split_whitespace().next() == Some("exhibit") =>
            {
                open = Some(String::new());
            }
            Event::Text(t) => {
                if let Some(body) = open.as_mut() {
                    body.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => bodies.extend(open.take()),
            _ => {}
        }
    }
    bodies
}

/// Binary by policy; verbatim when the input scan found nothing with
/// the detector the copies use, and the copy is read the same way;
/// otherwise redacted.
/// `same_detector`: the copies' detector is the one that scanned the
/// inputs (see [`Public::scanned_by`]).
fn copy_mode(p: &Public, same_detector: bool, original: &str, published: &str) -> Mode {
    use crate::redact::scan::View;
    if p.binary.contains(original) {
        Mode::Binary
    } else if same_detector
        && p.clean.contains(original)
        && View::of(Path::new(original)) == View::of(Path::new(published))
    {
        Mode::Verbatim
    } else {
        Mode::Redact
    }
}
