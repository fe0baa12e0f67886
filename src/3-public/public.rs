//! The public view of verified campaigns, made before anything renders: each
//! file scanned (text or binary), every private value numbered in file order
//! so placeholders are the same on every build, file names and campaign.json
//! redacted. Later stages publish only through this view.

use crate::campaign::{self, Campaign};
use crate::error::EvidenceFailed;
use crate::error::Result;
use crate::evidence::Evidence;
use crate::hash::HashingReader;
use crate::redact::{scan, Counts, Redactor};
use crate::sink::Staged;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Read;
use std::path::Path;

/// One campaign as the public will see it: made by [`prepare`] from the
/// campaign as loaded (which it leaves as it is) and passed to every later
/// stage.
#[derive(Debug, Default)]
pub(crate) struct Public {
    /// The metadata as published: every string redacted.
    pub(crate) meta: campaign::Meta,
    /// Page output names, from the redacted page file names.
    outputs: Outputs,
    /// original path -> public path (redacted; before any `.txt` rename);
    /// a path missing is published as it is
    names: BTreeMap<String, String>,
    /// public path -> original path; a path missing is its own original
    reverse: HashMap<String, String>,
    /// Binaries and archives, published as they are: nothing was found in
    /// them, or the policy accepts their exact bytes (original paths).
    pub(crate) binary: BTreeSet<String>,
    /// Text files in which the input scan found nothing (original paths).
    pub(crate) clean: BTreeSet<String>,
    /// What the input scan found in small text files kept in memory, as
    /// spans of the file (original paths): the copy replaces them without
    /// looking again, when its detector is the one that scanned them.
    pub(crate) hits: HashMap<String, Vec<crate::redact::Hit>>,
    /// Fingerprint of the detector that scanned them.
    pub(crate) scanned_by: String,
    /// Large text files this stage did not read (original paths): the
    /// copy stage reads each once, hashing, scanning, numbering and
    /// redacting it in one pass ([`crate::stream`]), after every other
    /// file, in path order.
    pub(crate) streamed: BTreeSet<String>,
    /// The preview's large text files (which it scans here, as a build
    /// does not) with what the input scan found, held until every other
    /// file is numbered ([`number_held`]): the preview numbers values in
    /// the order a build does.
    held: Vec<Vec<crate::redact::Hit>>,
}

impl Public {
    /// The public path of a campaign file (original path in).
    pub(crate) fn name<'a>(&'a self, original: &'a str) -> &'a str {
        self.names.get(original).map_or(original, |s| s.as_str())
    }

    /// The published path: the public path, active content renamed.
    pub(crate) fn published(&self, original: &str) -> String {
        campaign::published_name(self.name(original))
    }

    /// The original path of a file named by its public or original path.
    pub(crate) fn original<'a>(&'a self, name: &'a str) -> &'a str {
        self.reverse.get(name).map_or(name, |s| s.as_str())
    }

    /// The output file name of a page: the first page is `index.html`.
    pub(crate) fn page_output(&self, index: usize) -> String {
        self.outputs.names[index].clone()
    }

    /// Output name of the page whose source is `file`, if it is a page.
    pub(crate) fn output_of_page(&self, file: &str) -> Option<String> {
        let i = *self.outputs.by_file.get(file)?;
        Some(self.page_output(i))
    }

    /// Which page is written to `output` (`index.html`, `notes.html`).
    pub(crate) fn page_with_output(&self, output: &str) -> Option<usize> {
        self.outputs.by_output.get(output).copied()
    }
}

/// Page output names, and which page a source file or output name is.
#[derive(Debug, Clone, Default)]
struct Outputs {
    names: Vec<String>,
    by_file: HashMap<String, usize>,
    by_output: HashMap<String, usize>,
}

impl Outputs {
    /// Output names from the published page names (`public`), looked up
    /// by the loaded ones (`meta`).
    fn new(meta: &campaign::Meta, public: &campaign::Meta) -> Self {
        let names: Vec<String> = (0..public.pages.len())
            .map(|i| {
                if i == 0 {
                    crate::layout::INDEX_PAGE.to_string()
                } else {
                    let stem = public.pages[i].file.trim_end_matches(".md");
                    format!("{stem}.html")
                }
            })
            .collect();
        let mut by_file = HashMap::new();
        for (i, p) in meta.pages.iter().enumerate() {
            by_file.entry(p.file.clone()).or_insert(i);
        }
        let mut by_output = HashMap::new();
        for (i, n) in names.iter().enumerate() {
            by_output.entry(n.clone()).or_insert(i);
        }
        Outputs {
            names,
            by_file,
            by_output,
        }
    }
}

/// Files of a campaign in the order their values are numbered:
/// campaign.json, the pages in order, everything else by path, the manifest.
fn order(c: &Campaign, e: &Evidence) -> Vec<String> {
    let mut files = vec![campaign::META_NAME.to_string()];
    files.extend(c.meta.pages.iter().map(|p| p.file.clone()));
    let listed: std::collections::HashSet<String> = files.iter().cloned().collect();
    for f in &e.files {
        if !listed.contains(&f.path) {
            files.push(f.path.clone());
        }
    }
    files.push(e.manifest.name.clone());
    files
}

/// Input scans kept between builds (`exhibit serve`'s
/// [`crate::site::BuildCache`]), by detector fingerprint and file hash: a
/// file whose verified hash is unchanged is not scanned again by the same
/// detector. A one-shot build has none.
///
/// Also each campaign's metadata that the detector found nothing in, by
/// detector fingerprint and campaign.json's hash: such metadata is
/// published as it is, so a save that changes neither takes it as it was
/// (redacting the metadata of 1,000 pages string by string took 2 ms of
/// each save). Metadata with a finding is redacted every time: that
/// numbers its values, in order with every other file's.
#[derive(Default)]
pub(crate) struct ScanCache {
    /// Read from every core at once: readers share the lock.
    files: std::sync::RwLock<HashMap<(String, String), scan::Scanned>>,
    clean_meta: std::sync::Mutex<HashMap<std::path::PathBuf, CleanMeta>>,
}

/// A campaign's metadata the detector found nothing in, with what it was
/// found from: (detector fingerprint, campaign.json's hash).
type CleanMeta = ((String, String), campaign::Meta);

impl ScanCache {
    fn get(&self, key: &(String, String)) -> Option<scan::Scanned> {
        let known = self.files.read().unwrap_or_else(|e| e.into_inner());
        known.get(key).cloned()
    }

    fn insert(&self, key: (String, String), scanned: &scan::Scanned) {
        let mut known = self.files.write().unwrap_or_else(|e| e.into_inner());
        known.insert(key, scanned.clone());
    }
}

/// Campaign `c`'s metadata as published: every string redacted (taken
/// from `scans` when this detector found nothing in the same metadata).
fn public_meta(c: &Campaign, r: &Redactor, scans: Option<&ScanCache>) -> Result<campaign::Meta> {
    let key = scans.map(|_| (r.detector.fingerprint(), c.meta_sha256.clone()));
    if let Some((kept, key)) = scans.zip(key.as_ref()) {
        let clean = kept.clean_meta.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, meta)) = clean.get(&c.dir).filter(|(k, _)| k == key) {
            return Ok(meta.clone());
        }
    }
    let mut v = serde_json::to_value(&c.meta)?;
    let mut counts = Counts::new();
    r.redact_value(&mut v, &mut counts);
    let meta: campaign::Meta = serde_json::from_value(v)?;
    if let Some((kept, key)) = scans.zip(key) {
        let mut clean = kept.clean_meta.lock().unwrap_or_else(|e| e.into_inner());
        if counts.is_empty() {
            clean.insert(c.dir.clone(), (key, meta.clone()));
        } else {
            clean.remove(&c.dir);
        }
    }
    Ok(meta)
}

/// What the input scan makes of file `f`: `None` for a large text file
/// left to the copy stage's one pass (see [`Public::streamed`]).
fn scan_input(
    r: &Redactor,
    scans: Option<(&ScanCache, &str)>,
    (c, e): (&Campaign, &Evidence),
    f: &str,
) -> Result<Option<scan::Scanned>> {
    if e.is_deferred(f) {
        let path = &c.path(f);
        if streams(c, f, path)? {
            return Ok(None);
        }
        // Not hashed yet: hashed as it is scanned, and judged.
        let check = |sha: &str, n: u64| e.check_deferred(f, sha, n);
        return scan_verified(r, path, check).map(Some);
    }
    let sha256 = e.verified_sha256(f);
    // The preview's scan of the same bytes by the same detector, if any,
    // before anything of the file is looked at.
    let key = scans
        .zip(sha256)
        .map(|((cache, detector), sha)| (cache, (detector.to_string(), sha.to_string())));
    if let Some(s) = key.as_ref().and_then(|(cache, key)| cache.get(key)) {
        return Ok(Some(s));
    }
    let path = &c.path(f);
    let scanned = match e.kept(f).as_deref() {
        Some(bytes) => scan::scan_file_named(&r.detector, bytes, path)?,
        None => scan_verified(r, path, |sha, _| match sha256 {
            Some(expected) if sha != expected => Err(changed(path)),
            _ => Ok(()),
        })?,
    };
    if let Some((cache, key)) = key {
        cache.insert(key, &scanned);
    }
    Ok(Some(scanned))
}

/// A file left to the copy stage's one pass: a large file (deferred by
/// the verify stage) that is neither campaign.json nor a page (the pages
/// are numbered before the other files) and whose first bytes are plain
/// text. Binaries, archives and UTF-16 are scanned here as they always
/// were.
fn streams(c: &Campaign, f: &str, path: &Path) -> Result<bool> {
    if f == campaign::META_NAME || c.meta.pages.iter().any(|p| p.file == f) {
        return Ok(false);
    }
    let mut head = Vec::with_capacity(scan::HEAD);
    crate::fsx::open(path)?
        .take(scan::HEAD as u64)
        .read_to_end(&mut head)
        .map_err(|e| crate::error::Error::io(path, "read", e))?;
    Ok(scan::Kind::of(&head) == scan::Kind::Text)
}

/// The refusal of a file whose bytes are no longer those verified.
fn changed(path: &Path) -> crate::error::Error {
    EvidenceFailed {
        report: format!(
            "`{}` changed after it was verified; nothing was published",
            path.display()
        ),
    }
    .into()
}

/// Scan a file from disk, hashing what is read, and hand `check` the
/// hash and size of the whole file: a file that no longer has its
/// verified bytes is refused, so "clean" always means "these bytes".
pub(crate) fn scan_verified(
    r: &Redactor,
    path: &Path,
    check: impl FnOnce(&str, u64) -> Result<()>,
) -> Result<scan::Scanned> {
    let mut reader = HashingReader::new(crate::fsx::open(path)?);
    let scanned = scan::scan_file_named(&r.detector, &mut reader, path)
        .map_err(|e| crate::error::Error::failed("read", path, e))?;
    // Read to the end, in case the scan stopped early (binary).
    reader.drain()?;
    let (sha, bytes) = reader.finish();
    check(&sha, bytes)?;
    Ok(scanned)
}

/// One file to scan: campaign index and path, in numbering order.
struct Job {
    campaign: usize,
    file: String,
}

/// Scan every file of every campaign and number what was found, then
/// make each campaign's public view: redacted file names and metadata,
/// page output names. The campaigns stay as loaded.
pub(crate) fn prepare(
    campaigns: &[Campaign],
    evidences: &[Evidence],
    r: &Redactor,
    scans: Option<&ScanCache>,
) -> Result<Vec<Public>> {
    let jobs: Vec<Job> = campaigns
        .iter()
        .zip(evidences)
        .enumerate()
        .flat_map(|(i, (c, e))| {
            order(c, e)
                .into_iter()
                .map(move |file| Job { campaign: i, file })
        })
        .collect();
    let detector = r.detector.fingerprint();
    let scans_by = scans.map(|s| (s, detector.as_str()));
    let scanned: Vec<Result<(Option<scan::Scanned>, bool)>> = jobs
        .par_iter()
        .map(|job| {
            let (c, e) = (&campaigns[job.campaign], &evidences[job.campaign]);
            let s = scan_input(r, scans_by, (c, e), &job.file)?;
            let held = match &s {
                Some(s) if held(e, &job.file, s) => streams(c, &job.file, &c.path(&job.file))?,
                _ => false,
            };
            Ok((s, held))
        })
        .collect();
    let mut publics: Vec<Public> = campaigns
        .iter()
        .map(|_| Public {
            scanned_by: detector.clone(),
            ..Public::default()
        })
        .collect();
    // File names are read one by one only if one of them could hold a
    // value; each is also tried as an absolute path (`home/alice/...`).
    let rooted: Vec<String> = jobs.iter().map(|j| format!("/{}", j.file)).collect();
    let check_names = r
        .detector
        .any_candidate_in(rooted.iter().map(String::as_str));
    let mut refused = Refused::default();
    for (job, s) in jobs.iter().zip(scanned) {
        let (c, e) = (&campaigns[job.campaign], &evidences[job.campaign]);
        if check_names {
            r.register_name(&job.file);
        }
        let p = &mut publics[job.campaign];
        match s? {
            (Some(s), true) => p.hold(&job.file, s),
            (Some(s), false) => p.take_scan(c, e, r, &job.file, s, &mut refused),
            (None, _) => {
                p.streamed.insert(job.file.clone());
            }
        }
    }
    refused.check()?;
    for ((c, e), p) in campaigns.iter().zip(evidences).zip(&mut publics) {
        p.name_files(c, e, r, check_names);
        p.meta = public_meta(c, r, scans)?;
        p.outputs = Outputs::new(&c.meta, &p.meta);
    }
    Ok(publics)
}

/// A file a one-shot build would have left to the copy stage's one pass
/// but that was scanned here (the preview hashes every file, so defers
/// none): a text file over [`crate::evidence::KEEP_FILE`]; [`streams`]
/// says the rest.
fn held(e: &Evidence, f: &str, s: &scan::Scanned) -> bool {
    let large = e.get(f).and_then(|f| f.bytes) > Some(crate::evidence::KEEP_FILE);
    large && !e.is_deferred(f) && !s.binary && s.skipped.is_empty()
}

/// Number what the preview's large text files hold, campaign by campaign
/// and file by file, after every other file and the secrets met by key:
/// where a one-shot build's copy stage numbers them.
pub(crate) fn number_held(publics: &mut [Public], r: &Redactor) {
    for p in publics {
        for hits in std::mem::take(&mut p.held) {
            r.register(&hits);
        }
    }
}

/// Binaries and archives whose findings cannot be redacted in place.
#[derive(Default)]
struct Refused {
    /// The report's lines: file, place and category.
    lines: String,
    /// The `redaction.binary` entries that would accept them.
    accept: Vec<String>,
}

impl Refused {
    /// A file that is not text is published only as it is, so only if
    /// nothing was found in it (or the policy accepts these exact bytes).
    fn binary(&mut self, c: &Campaign, e: &Evidence, r: &Redactor, f: &str, s: &scan::Scanned) {
        let sha = e.verified_sha256(f);
        if (s.found() || !s.skipped.is_empty()) && !c.meta.redaction.accepts(f, sha) {
            let shown = scan::mask(&r.detector, &c.path(f).display().to_string());
            self.lines.push_str(&refusal(&shown, s));
            self.accept.push(format!(
                "{{\"path\": \"{}\", \"sha256\": \"{}\"}}",
                scan::mask(&r.detector, f),
                sha.unwrap_or("<its SHA-256>")
            ));
        }
    }

    fn check(self) -> Result<()> {
        if self.lines.is_empty() {
            return Ok(());
        }
        Err(EvidenceFailed {
            report: format!(
                "refusing to publish files whose private values cannot be redacted in place:\n{}\nremove the values from these files, or accept each exact file as it is under `redaction.binary` in {}: [{}]",
                self.lines.trim_end(),
                campaign::META_NAME,
                self.accept.join(", ")
            ),
        }
        .into())
    }
}

impl Public {
    /// Record what the input scan found in file `f`: binaries are
    /// published as they are (or refused), text is numbered and its hits
    /// kept for the copy.
    fn take_scan(
        &mut self,
        c: &Campaign,
        e: &Evidence,
        r: &Redactor,
        f: &str,
        s: scan::Scanned,
        refused: &mut Refused,
    ) {
        if s.binary || !s.skipped.is_empty() {
            refused.binary(c, e, r, f, &s);
            self.binary.insert(f.to_string());
            return;
        }
        if s.hits.is_empty() {
            self.clean.insert(f.to_string());
            return;
        }
        let hits: Vec<_> = s.hits.into_iter().map(|(_, _, h)| h).collect();
        r.register(&hits);
        // One chunk of plain bytes: the hits are spans of the file itself.
        if e.kept(f).is_some_and(|b| {
            b.len() < scan::CHUNK
                && scan::Kind::of(&b[..b.len().min(scan::HEAD)]) == scan::Kind::Text
        }) {
            self.hits.insert(f.to_string(), hits);
        }
    }

    /// A large text file's scan, its numbering held (see [`Public::held`]).
    fn hold(&mut self, f: &str, s: scan::Scanned) {
        if s.hits.is_empty() {
            self.clean.insert(f.to_string());
        }
        self.held
            .push(s.hits.into_iter().map(|(_, _, h)| h).collect());
    }

    /// Every file's public name (redacted when a name could hold a value).
    /// When none could, every name is its own and none is listed.
    fn name_files(&mut self, c: &Campaign, e: &Evidence, r: &Redactor, check_names: bool) {
        if !check_names {
            return;
        }
        for f in order(c, e) {
            let public = r.redact_name(&f).into_owned();
            self.reverse.insert(public.clone(), f.clone());
            self.names.insert(f, public);
        }
    }
}

/// The lines of a refusal for one binary or archive: where each finding
/// is and its category, never the value.
fn refusal(shown: &str, s: &scan::Scanned) -> String {
    let mut out = String::new();
    for (line, column, h) in &s.hits {
        out.push_str(&format!(
            "  {shown}:{line}:{column}: {} in a binary file\n",
            h.category.as_str()
        ));
    }
    for (member, line, column, category) in &s.inner {
        let at = if *line == 0 {
            " (member name)".to_string()
        } else {
            format!(":{line}:{column}")
        };
        out.push_str(&format!(
            "  {shown} > {member}{at}: {} in an archive member\n",
            category.as_str()
        ));
    }
    for why in &s.skipped {
        out.push_str(&format!("  {shown}: skipped, not scanned: {why}\n"));
    }
    out
}

/// A large file the copy stage's one pass found not to be text (a NUL
/// byte after its first bytes): scanned as the input scan scans binaries,
/// judged as it judges them, then copied as it is by the caller.
pub(crate) fn scan_binary(c: &Campaign, e: &Evidence, r: &Redactor, f: &str) -> Result<()> {
    let s = scan_verified(r, &c.path(f), |sha, n| e.check_deferred(f, sha, n))?;
    let mut refused = Refused::default();
    refused.binary(c, e, r, f, &s);
    refused.check()
}

/// What publishing one file did.
#[derive(Debug, Clone)]
pub(crate) struct Copied {
    /// The original's verified hash: never published for a redacted copy.
    pub(crate) sha256: String,
    pub(crate) published_sha256: String,
    /// The original's size.
    pub(crate) bytes: u64,
    /// The published copy's size.
    pub(crate) published_bytes: u64,
    pub(crate) redactions: Counts,
    /// A binary or archive published as it is.
    pub(crate) binary: bool,
    /// The published bytes as scanned while they were written (by
    /// [`crate::stream`]), with what was found in them: the rescan need
    /// not read them back.
    pub(crate) scanned: Option<scan::Scanned>,
}

/// Publish `bytes` (a kept file, exactly as verified) with `hits` (what
/// the input scan found in them, by the copy's own detector) replaced:
/// the same bytes [`copy`] would write, without finding them again.
pub(crate) fn copy_found(
    r: &Redactor,
    bytes: &[u8],
    hits: &[crate::redact::Hit],
    mut to: Staged,
    expected: &str,
) -> Result<Copied> {
    let mut counts = Counts::new();
    let published = r.replace(bytes, hits, &mut counts);
    to.write_all(&published)?;
    to.finish()?;
    Ok(Copied {
        sha256: expected.to_string(),
        published_sha256: crate::hash::sha256_bytes(&published),
        bytes: bytes.len() as u64,
        published_bytes: published.len() as u64,
        redactions: counts,
        binary: false,
        scanned: None,
    })
}

/// How [`copy`] treats a file's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Text: redacted on the way.
    Redact,
    /// Text the same detector already found clean: copied as it is.
    Verbatim,
    /// A binary or archive: copied as it is (nothing found in it, or
    /// accepted by hash).
    Binary,
}

/// Copy `from` (or its `kept` bytes, exactly as verified) to `to`,
/// redacting text on the way unless `mode` says otherwise, and check the
/// original still has the verified hash. Text is redacted in every view
/// the scan reads it in (a value behind a Markdown escape or a JSON
/// `\u` escape is replaced where it is written); UTF-16 is decoded,
/// redacted and encoded again.
pub(crate) fn copy(
    r: &Redactor,
    from: &Path,
    kept: Option<&[u8]>,
    mut to: Staged,
    expected: &str,
    mode: Mode,
) -> Result<Copied> {
    let source: Box<dyn std::io::Read + '_> = match kept {
        Some(bytes) => Box::new(bytes),
        None => Box::new(crate::fsx::open(from)?),
    };
    let mut reader = HashingReader::new(source);
    let (mut publ, mut published_bytes) = (Sha256::new(), 0u64);
    let mut counts = Counts::new();
    let read_err = |e: crate::error::Error| crate::error::Error::failed("read", from, e);
    let mut write = |bytes: &[u8]| -> Result<()> {
        publ.update(bytes);
        published_bytes += bytes.len() as u64;
        to.write_all(bytes)
    };
    if mode == Mode::Redact {
        let view = scan::View::of(from);
        let seams = Some(scan::Seams {
            det: &r.detector,
            view,
        });
        let (head, mut rest) = scan::peek(&mut reader).map_err(read_err)?;
        if let scan::Kind::Utf16 { big_endian } = scan::Kind::of(&head) {
            let mut bom = [0u8; 2];
            rest.read_exact(&mut bom)?;
            write(&bom)?;
            scan::for_each_chunk(scan::Utf16Reader::new(rest, big_endian), seams, |chunk| {
                let redacted = scan::redact_view(r, chunk, view, &mut counts);
                write(&scan::encode_utf16(&redacted, big_endian))
            })
        } else {
            scan::for_each_chunk(rest, seams, |chunk| {
                write(&scan::redact_view(r, chunk, view, &mut counts))
            })
        }
        .map_err(read_err)?;
    } else {
        // Copied as it is: where it is cut does not matter.
        scan::for_each_chunk(&mut reader, None, |chunk| write(chunk)).map_err(read_err)?;
    }
    // Read to the end whatever the copy left unread.
    reader.drain()?;
    to.finish()?;
    let (sha256, bytes) = reader.finish();
    if sha256 != expected {
        return Err(EvidenceFailed {
            report: format!(
                "`{}` changed after it was verified; nothing was published",
                from.display()
            ),
        }
        .into());
    }
    Ok(Copied {
        sha256,
        published_sha256: crate::hash::hex(&publ.finalize()),
        bytes,
        published_bytes,
        redactions: counts,
        binary: mode == Mode::Binary,
        scanned: None,
    })
}
