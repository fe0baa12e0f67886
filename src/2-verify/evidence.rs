//! Second stage: check every file of a folder against its manifest.
//!
//! Each file gets exactly one [`Verdict`]. Hashing streams every file with
//! constant memory and runs in parallel across files. Nothing downstream reads
//! a campaign file that is not in the resulting [`Evidence`] with verdict ok.

use crate::manifest::Manifest;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Verdict {
    Ok,
    Modified,
    Missing,
    Unlisted,
    SizeMismatch,
    UnsafePath,
    DuplicateEntry,
    Unreadable,
}

impl Verdict {
    pub(crate) const ALL: [Verdict; 8] = [
        Verdict::Ok,
        Verdict::Modified,
        Verdict::Missing,
        Verdict::Unlisted,
        Verdict::SizeMismatch,
        Verdict::UnsafePath,
        Verdict::DuplicateEntry,
        Verdict::Unreadable,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Modified => "modified",
            Verdict::Missing => "missing",
            Verdict::Unlisted => "unlisted",
            Verdict::SizeMismatch => "size-mismatch",
            Verdict::UnsafePath => "unsafe-path",
            Verdict::DuplicateEntry => "duplicate-entry",
            Verdict::Unreadable => "unreadable",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct FileCheck {
    pub(crate) path: String,
    pub(crate) verdict: Verdict,
    /// What the manifest says, when it lists the file.
    pub(crate) expected_sha256: Option<String>,
    pub(crate) expected_bytes: Option<u64>,
    /// What is on disk, when it could be read.
    pub(crate) sha256: Option<String>,
    pub(crate) bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) detail: Option<String>,
}

impl FileCheck {
    /// (path, sha256, bytes) as read from disk: a manifest entry.
    pub(crate) fn entry(&self) -> (&str, &str, u64) {
        (
            self.path.as_str(),
            self.sha256.as_deref().unwrap_or(""),
            self.bytes.unwrap_or(0),
        )
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Evidence {
    pub(crate) dir: PathBuf,
    pub(crate) manifest: Manifest,
    /// Sorted by path.
    pub(crate) files: Vec<FileCheck>,
    /// The bytes of small files, exactly as hashed, so later stages read
    /// each input once (see [`KEEP_FILE`] and [`KEEP_TOTAL`]); a page's
    /// leave once it is rendered ([`Evidence::take_verified`]).
    kept: KeptBytes,
    /// Large files not hashed here (see [`Options::defer`]): their
    /// `sha256` is the manifest's until the one pass that reads them
    /// checks it ([`Evidence::check_deferred`]).
    deferred: std::collections::HashSet<String>,
}

/// A file the preview publishes as it is now although it does not match
/// the manifest (the author is editing it), with the verdict it had.
#[derive(Debug, Clone)]
pub(crate) struct Edit {
    pub(crate) path: String,
    pub(crate) verdict: Verdict,
}

impl Evidence {
    /// The preview's evidence, made once by the verify stage: modified and
    /// unlisted files taken as they are now, missing ones forgotten, so
    /// the pages show the author's edits; each is returned as an [`Edit`]
    /// beside it. Unsafe, duplicate and unreadable entries still fail.
    pub(crate) fn accept_edits(mut self) -> (Evidence, Vec<Edit>) {
        let mut edits = Vec::new();
        self.files.retain_mut(|f| match f.verdict {
            Verdict::Modified | Verdict::SizeMismatch | Verdict::Unlisted => {
                edits.push(Edit {
                    path: f.path.clone(),
                    verdict: f.verdict,
                });
                f.verdict = Verdict::Ok;
                f.expected_sha256 = f.sha256.clone();
                f.expected_bytes = f.bytes;
                true
            }
            Verdict::Missing => {
                edits.push(Edit {
                    path: f.path.clone(),
                    verdict: f.verdict,
                });
                false
            }
            _ => true,
        });
        (self, edits)
    }
}

/// The bytes of the small files kept, by path.
#[derive(Debug, Default)]
struct KeptBytes(std::sync::RwLock<std::collections::HashMap<String, std::sync::Arc<[u8]>>>);

impl KeptBytes {
    fn map(
        &self,
    ) -> std::sync::RwLockReadGuard<'_, std::collections::HashMap<String, std::sync::Arc<[u8]>>>
    {
        self.0.read().unwrap_or_else(|e| e.into_inner())
    }
}

impl Clone for KeptBytes {
    fn clone(&self) -> Self {
        KeptBytes(std::sync::RwLock::new(self.map().clone()))
    }
}

/// Files up to this size are kept in memory after hashing...
pub(crate) const KEEP_FILE: u64 = 1 << 20;
/// ...until this much is kept (in all campaigns of a build); larger files
/// and the rest stream from disk.
pub(crate) const KEEP_TOTAL: u64 = 48 << 20;

impl Evidence {
    pub(crate) fn all_ok(&self) -> bool {
        self.files.iter().all(|f| f.verdict == Verdict::Ok)
    }

    pub(crate) fn get(&self, path: &str) -> Option<&FileCheck> {
        self.files
            .binary_search_by(|f| f.path.as_str().cmp(path))
            .ok()
            .map(|i| &self.files[i])
    }

    /// The verified hash of an ok file.
    pub(crate) fn verified_sha256(&self, path: &str) -> Option<&str> {
        self.get(path)
            .filter(|f| f.verdict == Verdict::Ok)
            .and_then(|f| f.sha256.as_deref())
    }

    /// "412 ok, 1 modified, 1 unlisted"
    pub(crate) fn summary(&self) -> String {
        let parts: Vec<String> = Verdict::ALL
            .iter()
            .filter_map(|v| {
                let n = self.files.iter().filter(|f| f.verdict == *v).count();
                (n > 0 || *v == Verdict::Ok).then(|| format!("{n} {}", v.as_str()))
            })
            .collect();
        parts.join(", ")
    }

    /// One line per file that is not ok, for error messages.
    pub(crate) fn problems(&self) -> String {
        let mut out = String::new();
        for f in self.files.iter().filter(|f| f.verdict != Verdict::Ok) {
            let path = shown(&self.dir.join(&f.path).display().to_string());
            out.push_str(&format!("  {:<15} {path}", f.verdict.as_str()));
            if let Some(d) = &f.detail {
                out.push_str(&format!(" ({d})"));
            }
            out.push('\n');
        }
        out
    }
}

/// A path as printed: control characters (a newline, an escape sequence
/// that would repaint the terminal) escaped.
pub(crate) fn shown(path: &str) -> String {
    if path.chars().any(char::is_control) {
        path.escape_debug().to_string()
    } else {
        path.to_string()
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Kind {
    File,
    Dir,
    SymlinkOutside,
    /// A named pipe, socket or device: never opened.
    Special,
    /// A symlink resolving inside the folder that no policy lets through.
    SymlinkInside,
    Other,
}

/// What a check may take beyond the defaults.
#[derive(Debug, Clone, Default)]
pub(crate) struct Options<'a> {
    /// Symlinks inside the folder that count as the file they point to
    /// (campaign.json's `symlinks`); others are refused.
    pub(crate) symlinks: Vec<String>,
    /// Folders whose contents are checked only where the manifest lists
    /// them (a site's campaign folders, which their own SHA256SUMS covers).
    pub(crate) listed_only: Vec<String>,
    /// Hashes of files unchanged since an earlier build (the preview).
    pub(crate) hashes: Option<&'a HashCache>,
    /// Listings of folders unchanged since an earlier build (the preview).
    pub(crate) listings: Option<&'a crate::listing::Listings>,
    /// A one-shot build: listed files over [`KEEP_FILE`] whose size is the
    /// manifest's are not hashed here but taken as listed, and checked by
    /// the one pass that reads them later (the copy stage hashes, scans,
    /// redacts and copies each in one read). Nothing is published unless
    /// that check passes: see [`Evidence::check_deferred`].
    pub(crate) defer: bool,
}

/// The [`Options`] of the campaign in `dir`: the symlinks its
/// campaign.json lets through. A campaign.json that does not load lets
/// none (its own check reports it).
pub(crate) fn campaign_options(dir: &Path) -> Options<'static> {
    let symlinks = crate::campaign::load(dir)
        .map(|c| c.meta.symlinks)
        .unwrap_or_default();
    Options {
        symlinks,
        ..Options::default()
    }
}

/// Check `dir` against `manifest` for a report only (the `verify`
/// command): no file's bytes are kept, so memory stays flat however many
/// files there are. `exclude` lists relative paths that are neither listed
/// nor to be reported (the manifest itself).
pub(crate) fn verify(
    dir: &Path,
    (manifest, disk): (Manifest, Disk),
    exclude: &[&str],
    opts: &Options,
) -> crate::error::Result<Evidence> {
    let keep_none = std::sync::atomic::AtomicU64::new(0);
    verify_with(dir, (manifest, disk), exclude, &keep_none, opts)
}

/// What is on disk under `dir` ([`walk`], or the preview's kept listing).
pub(crate) fn list(dir: &Path, opts: &Options) -> crate::error::Result<Disk> {
    match opts.listings {
        Some(kept) => kept.walk(dir, opts),
        None => walk(dir, opts),
    }
}

/// The manifest `load` reads and the listing of `dir`, made at once (the
/// load reads one file, the walk the folders): what [`verify_with`]
/// checks. An error of the load is the one reported when both fail, as
/// when they ran one after the other.
pub(crate) fn load_and_list(
    dir: &Path,
    opts: &Options,
    load: impl FnOnce() -> crate::error::Result<Manifest> + Send,
) -> crate::error::Result<(Manifest, Disk)> {
    let (manifest, disk) = rayon::join(load, || list(dir, opts));
    Ok((manifest?, disk?))
}

/// Every listed file judged against its entry, every unlisted one
/// reported, and those on disk hashed, keeping small files' bytes while
/// `budget` (bytes, shared by every campaign of a build) lasts. `disk` is
/// what [`list`] found under `dir`.
pub(crate) fn verify_with(
    dir: &Path,
    (manifest, mut disk): (Manifest, Disk),
    exclude: &[&str],
    budget: &std::sync::atomic::AtomicU64,
    opts: &Options,
) -> crate::error::Result<Evidence> {
    add_listed_only(dir, &manifest, opts, &mut disk)?;
    let counts = by_path(&manifest.entries);
    let listed = Listed {
        manifest: &manifest,
        disk: &disk,
        counts: &counts,
        by_case: std::sync::OnceLock::new(),
    };
    // Each name judged on every core; a check that comes out `true` is of
    // a file on disk to hash.
    let judged: Vec<(FileCheck, bool)> = pair(&counts, &disk)
        .par_iter()
        .filter_map(|&(path, entries, on_disk)| match entries {
            Some(entries) => {
                let check = listed.check(path, entries, on_disk);
                let hash = check.verdict == Verdict::Ok;
                Some((check, hash))
            }
            None => {
                let (kind, detail) = on_disk?;
                if exclude.contains(&path) || *kind == Kind::Dir {
                    return None;
                }
                let check = unlisted(path, *kind, detail);
                let hash = check.verdict == Verdict::Unlisted && *kind == Kind::File;
                Some((check, hash))
            }
        })
        .collect();
    let mut files: Vec<FileCheck> = Vec::with_capacity(judged.len());
    let mut to_hash: Vec<usize> = Vec::with_capacity(files.capacity());
    for (check, hash) in judged {
        if hash {
            to_hash.push(files.len());
        }
        files.push(check);
    }
    // Names that fold alike are found while the files are hashed.
    let ((kept, deferred), alike) = rayon::join(
        || hash_all(dir, &mut files, &to_hash, budget, opts),
        || lookalikes(&disk, &counts),
    );
    note_renames(&mut files);
    refuse_lookalikes(&mut files, alike);
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Evidence {
        dir: dir.to_path_buf(),
        manifest,
        files,
        kept: KeptBytes(std::sync::RwLock::new(kept)),
        deferred,
    })
}

/// The manifest's entries by path, those listed more than once together
/// in the manifest's order. Sorted first (a manifest mostly is already),
/// then built in one go rather than entry by entry.
fn by_path(entries: &[crate::manifest::Entry]) -> BTreeMap<&str, Vec<&crate::manifest::Entry>> {
    let mut sorted: Vec<&crate::manifest::Entry> = entries.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    let mut grouped: Vec<(&str, Vec<&crate::manifest::Entry>)> = Vec::with_capacity(sorted.len());
    for e in sorted {
        match grouped.last_mut() {
            Some((path, same)) if *path == e.path => same.push(e),
            _ => grouped.push((&e.path, vec![e])),
        }
    }
    grouped.into_iter().collect()
}

/// A name the manifest lists (its entries) or the disk holds (what is
/// there), or both.
type Paired<'a> = (
    &'a str,
    Option<&'a [&'a crate::manifest::Entry]>,
    Option<&'a (Kind, Option<String>)>,
);

/// Every name of the manifest and of the disk once, in order, with what
/// each side has of it: the two sorted maps walked side by side.
fn pair<'a>(
    counts: &'a BTreeMap<&'a str, Vec<&'a crate::manifest::Entry>>,
    disk: &'a Disk,
) -> Vec<Paired<'a>> {
    use std::cmp::Ordering;
    let mut out: Vec<Paired<'a>> = Vec::with_capacity(counts.len().max(disk.len()));
    let (mut listed, mut found) = (counts.iter().peekable(), disk.iter().peekable());
    loop {
        let order = match (listed.peek(), found.peek()) {
            (None, None) => return out,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some((l, _)), Some((d, _))) => (**l).cmp(d.as_str()),
        };
        let l = (order != Ordering::Greater)
            .then(|| listed.next())
            .flatten();
        let d = (order != Ordering::Less).then(|| found.next()).flatten();
        let path = l.map_or_else(|| d.map_or("", |(p, _)| p.as_str()), |(p, _)| *p);
        out.push((path, l.map(|(_, e)| e.as_slice()), d.map(|(_, k)| k)));
    }
}

/// What [`walk`] found on disk: relative path -> kind and why it cannot
/// be read, if so.
pub(crate) type Disk = BTreeMap<String, (Kind, Option<String>)>;

/// Entries under `opts.listed_only` folders, which [`walk`] does not
/// enter: looked up one by one.
fn add_listed_only(
    dir: &Path,
    manifest: &Manifest,
    opts: &Options,
    disk: &mut Disk,
) -> crate::error::Result<()> {
    for e in &manifest.entries {
        let under_skipped = opts.listed_only.iter().any(|d| {
            e.path
                .strip_prefix(d.as_str())
                .is_some_and(|r| r.starts_with('/'))
        });
        if under_skipped && !disk.contains_key(&e.path) && unsafe_reason(&e.path, "").is_none() {
            if let Ok(m) = std::fs::symlink_metadata(dir.join(&e.path)) {
                let kind = kind_of(
                    &dir.join(&e.path),
                    m.file_type(),
                    &e.path,
                    &canonical(dir)?,
                    opts,
                );
                disk.insert(e.path.clone(), (kind, None));
            }
        }
    }
    Ok(())
}

/// The listed files' checks before hashing.
struct Listed<'a> {
    manifest: &'a Manifest,
    disk: &'a Disk,
    counts: &'a BTreeMap<&'a str, Vec<&'a crate::manifest::Entry>>,
    /// Disk names by lower case, made when a file is first found missing.
    by_case: std::sync::OnceLock<std::collections::HashMap<String, Vec<&'a String>>>,
}

impl Listed<'_> {
    /// A listed file's check: a verdict other than ok is final; ok means
    /// it is a file on disk, to be hashed.
    fn check(
        &self,
        path: &str,
        entries: &[&crate::manifest::Entry],
        on_disk: Option<&(Kind, Option<String>)>,
    ) -> FileCheck {
        let first = entries[0];
        let mut check = FileCheck {
            path: path.to_string(),
            verdict: Verdict::Ok,
            expected_sha256: Some(first.sha256.clone()),
            expected_bytes: first.bytes,
            sha256: None,
            bytes: None,
            detail: None,
        };
        let (verdict, detail) = if entries.len() > 1 {
            let agree = entries
                .iter()
                .all(|e| e.sha256 == first.sha256 && e.bytes == first.bytes);
            let detail = format!(
                "listed {} times{}",
                entries.len(),
                if agree { "" } else { " with different hashes" }
            );
            (Verdict::DuplicateEntry, Some(detail))
        } else if let Some(why) = unsafe_reason(path, &self.manifest.name) {
            (Verdict::UnsafePath, Some(why.to_string()))
        } else if let Some(why) = crate::campaign::name_problem(path) {
            (Verdict::UnsafePath, Some(why))
        } else {
            self.on_disk(path, on_disk)
        };
        check.verdict = verdict;
        check.detail = detail;
        check
    }

    /// What is on disk at a listed path.
    fn on_disk(
        &self,
        path: &str,
        found: Option<&(Kind, Option<String>)>,
    ) -> (Verdict, Option<String>) {
        match found.map(|(k, _)| *k) {
            None => (Verdict::Missing, self.other_case(path)),
            Some(Kind::Dir) => (
                Verdict::Missing,
                Some("a folder is there, not a file".into()),
            ),
            Some(Kind::SymlinkOutside) => (
                Verdict::UnsafePath,
                Some("symlink pointing outside the folder".into()),
            ),
            Some(Kind::SymlinkInside) => (Verdict::UnsafePath, Some(SYMLINK_INSIDE.into())),
            Some(Kind::Other | Kind::Special) => {
                let what = found.and_then(|(_, d)| d.clone());
                (
                    Verdict::Unreadable,
                    what.or_else(|| Some("not a regular file".into())),
                )
            }
            Some(Kind::File) => (Verdict::Ok, None),
        }
    }

    /// A missing file's unlisted namesake but for case, if any.
    fn other_case(&self, path: &str) -> Option<String> {
        let disk = self.disk;
        let by_case = self.by_case.get_or_init(|| {
            let mut m: std::collections::HashMap<String, Vec<&String>> =
                std::collections::HashMap::new();
            for k in disk.keys() {
                m.entry(k.to_ascii_lowercase()).or_default().push(k);
            }
            m
        });
        by_case
            .get(&path.to_ascii_lowercase())
            .into_iter()
            .flatten()
            .find(|k| !self.counts.contains_key(k.as_str()))
            .map(|other| format!("`{other}` differs only in case"))
    }
}

/// An unlisted file's check before hashing: unlisted, unless its kind or
/// name makes it unsafe or unreadable.
fn unlisted(path: &str, kind: Kind, detail: &Option<String>) -> FileCheck {
    let mut check = FileCheck {
        path: path.to_string(),
        verdict: Verdict::Unlisted,
        expected_sha256: None,
        expected_bytes: None,
        sha256: None,
        bytes: None,
        detail: detail.clone(),
    };
    let bad_name = if detail.is_none() {
        crate::campaign::name_problem(path)
    } else {
        None
    };
    match kind {
        Kind::SymlinkOutside => {
            check.verdict = Verdict::UnsafePath;
            check.detail = Some("unlisted symlink pointing outside the folder".into());
        }
        Kind::SymlinkInside => {
            check.verdict = Verdict::UnsafePath;
            check.detail = Some(SYMLINK_INSIDE.into());
        }
        _ if bad_name.is_some() => {
            check.verdict = Verdict::UnsafePath;
            check.detail = bad_name;
        }
        Kind::Special => check.verdict = Verdict::Unreadable,
        _ => {}
    }
    check
}

/// The bytes of small files kept, and the large files left for a later
/// pass to hash.
type Kept = (
    std::collections::HashMap<String, std::sync::Arc<[u8]>>,
    std::collections::HashSet<String>,
);

/// Hash the files at `to_hash` on every core and judge each (large ones
/// deferred when `opts.defer` says so); returns the bytes of the small
/// files kept and the paths deferred.
fn hash_all(
    dir: &Path,
    files: &mut [FileCheck],
    to_hash: &[usize],
    budget: &std::sync::atomic::AtomicU64,
    opts: &Options,
) -> Kept {
    let progress = Progress::new(dir, files, to_hash, opts.defer);
    let hashed: Vec<(usize, Result<Hashed, String>)> = to_hash
        .par_iter()
        .map(|&i| {
            let path = dir.join(&files[i].path);
            if let Some(h) = opts.defer.then(|| deferred(&path, &files[i])).flatten() {
                return (i, Ok(h));
            }
            let r = hash_stable(&path, &progress, budget, opts.hashes);
            (i, r)
        })
        .collect();
    progress.finish();
    let mut kept = std::collections::HashMap::new();
    let mut deferred = std::collections::HashSet::new();
    for (i, result) in hashed {
        let f = &mut files[i];
        match result {
            Err(why) => {
                f.verdict = Verdict::Unreadable;
                f.detail = Some(why);
            }
            Ok(h) => {
                judge(f, &h.sha256, h.bytes);
                f.sha256 = Some(h.sha256);
                f.bytes = Some(h.bytes);
                if let Some(content) = h.content {
                    kept.insert(f.path.clone(), content);
                }
                if h.deferred {
                    deferred.insert(f.path.clone());
                }
            }
        }
    }
    (kept, deferred)
}

/// A listed regular file over [`KEEP_FILE`] whose size is the manifest's
/// (or the manifest gives none), taken as listed for now: its hash is the
/// manifest's until the pass that reads it checks it. Whether a file is
/// deferred depends on its size only, never on timing, so a build numbers
/// its values in the same order on any thread count.
fn deferred(path: &Path, f: &FileCheck) -> Option<Hashed> {
    let expected = f.expected_sha256.as_ref()?;
    let m = std::fs::metadata(path).ok()?;
    let size = m.len();
    let fits = f.expected_bytes.is_none_or(|b| b == size);
    (m.is_file() && size > KEEP_FILE && fits).then(|| Hashed {
        sha256: expected.clone(),
        bytes: size,
        content: None,
        deferred: true,
    })
}

fn judge(f: &mut FileCheck, sha: &str, bytes: u64) {
    let Some(expected) = &f.expected_sha256 else {
        return; // unlisted: the verdict stands
    };
    if expected != sha {
        f.verdict = Verdict::Modified;
        if let Some(eb) = f.expected_bytes.filter(|eb| *eb != bytes) {
            f.detail = Some(format!("{bytes} bytes, manifest says {eb}"));
        }
    } else if f.expected_bytes.is_some_and(|eb| eb != bytes) {
        f.verdict = Verdict::SizeMismatch;
        f.detail = Some(format!(
            "hash matches but manifest says {} bytes, file has {bytes}",
            f.expected_bytes.unwrap_or_default()
        ));
    }
}

const SYMLINK_INSIDE: &str =
    "symlink inside the folder; list it in campaign.json's `symlinks` to publish a copy";

/// The names on disk and the names in the manifest that fold alike
/// ([`alike`]). Names on disk are grouped apart from names in the
/// manifest: a manifest's `notes.md` beside a disk's `Notes.md` is a
/// rename (missing plus unlisted, noted as such), not two files.
fn lookalikes<'a>(
    disk: &'a BTreeMap<String, (Kind, Option<String>)>,
    listed: &BTreeMap<&'a str, Vec<&crate::manifest::Entry>>,
) -> Vec<Vec<&'a str>> {
    let mut groups = alike(disk.keys().map(String::as_str), disk.len());
    groups.extend(alike(listed.keys().copied(), listed.len()));
    groups
}

/// Names that a case-insensitive or normalising disk (or archive) takes
/// for one ([`lookalikes`]) are refused, each naming the others: which
/// file a reader gets would depend on where the site is unpacked.
/// Folders count too.
fn refuse_lookalikes(files: &mut Vec<FileCheck>, groups: Vec<Vec<&str>>) {
    if groups.is_empty() {
        return; // the usual case: no index of the files is needed
    }
    let mut at: std::collections::HashMap<String, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.path.clone(), i))
        .collect();
    for names in &groups {
        for &name in names {
            let first = names.iter().find(|o| **o != name).copied().unwrap_or("");
            let how = crate::campaign::how_alike(name, first);
            // Forms that look the same are shown by code point.
            let show = |n: &str| -> String {
                if how.contains("normalisation") {
                    n.chars()
                        .map(|c| {
                            if c.is_ascii() {
                                c.to_string()
                            } else {
                                format!("\\u{{{:x}}}", u32::from(c))
                            }
                        })
                        .collect()
                } else {
                    n.to_string()
                }
            };
            let others: Vec<String> = names
                .iter()
                .filter(|o| **o != name)
                .map(|o| format!("`{}`", show(o)))
                .collect();
            let detail = if how.contains("normalisation") {
                let how = how.replace("differs", "differ");
                format!("`{}` and {} {how}", show(name), others.join(", "))
            } else {
                format!("{} {how}", others.join(", "))
            };
            let i = *at.entry(name.to_string()).or_insert_with(|| {
                files.push(FileCheck {
                    path: name.to_string(),
                    verdict: Verdict::UnsafePath,
                    expected_sha256: None,
                    expected_bytes: None,
                    sha256: None,
                    bytes: None,
                    detail: None,
                });
                files.len() - 1
            });
            // Not hashed either: `seal` must not write such a name down.
            files[i].verdict = Verdict::UnsafePath;
            files[i].detail = Some(detail);
            files[i].sha256 = None;
            files[i].bytes = None;
        }
    }
}

/// The names of `names` (sorted, without repeats) that fold alike
/// ([`crate::campaign::fold_name`]), in groups of two or more, each
/// sorted.
fn alike<'a>(names: impl Iterator<Item = &'a str>, count: usize) -> Vec<Vec<&'a str>> {
    let mut first: std::collections::HashMap<std::borrow::Cow<'a, str>, (&'a str, Option<usize>)> =
        std::collections::HashMap::with_capacity(count);
    let mut groups: Vec<Vec<&'a str>> = Vec::new();
    for name in names {
        match first.entry(crate::campaign::fold_name(name)) {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert((name, None));
            }
            std::collections::hash_map::Entry::Occupied(mut o) => match o.get().1 {
                Some(g) => groups[g].push(name),
                None => {
                    o.get_mut().1 = Some(groups.len());
                    groups.push(vec![o.get().0, name]);
                }
            },
        }
    }
    groups
}

/// An unlisted file with the content of a missing one was probably renamed.
fn note_renames(files: &mut [FileCheck]) {
    let missing: BTreeMap<String, String> = files
        .iter()
        .filter(|f| f.verdict == Verdict::Missing)
        .filter_map(|f| Some((f.expected_sha256.clone()?, f.path.clone())))
        .collect();
    for f in files
        .iter_mut()
        .filter(|f| f.verdict == Verdict::Unlisted && f.detail.is_none())
    {
        if let Some(from) = f.sha256.as_ref().and_then(|s| missing.get(s)) {
            f.detail = Some(format!("same content as missing `{from}`"));
        }
    }
}

/// Why a manifest path is refused, if it is.
fn unsafe_reason(path: &str, manifest_name: &str) -> Option<&'static str> {
    if path.is_empty() {
        return Some("empty path");
    }
    // A drive letter (`C:x`) is refused by the name check, for its `:`.
    if path.starts_with('/') || path.starts_with('\\') {
        return Some("absolute path");
    }
    if path.split('/').any(|c| c == "..") {
        return Some("path leaves the folder with `..`");
    }
    if path.split('/').any(|c| c.is_empty() || c == ".") {
        return Some("path is not in normal form");
    }
    if path == manifest_name {
        return Some("the manifest cannot list itself");
    }
    None
}

/// Hash a file and make sure it did not change while being read.
/// A file's identity for reusing its hash: size, modification and change
/// times, inode. Any write moves the change time.
type Stamp = (u64, Option<std::time::SystemTime>, i64, i64, u64);

fn stamp_of(m: &std::fs::Metadata) -> Stamp {
    #[cfg(unix)]
    let (ctime, ctime_ns, ino) = {
        use std::os::unix::fs::MetadataExt;
        (m.ctime(), m.ctime_nsec(), m.ino())
    };
    #[cfg(not(unix))]
    let (ctime, ctime_ns, ino) = (0, 0, 0);
    (m.len(), m.modified().ok(), ctime, ctime_ns, ino)
}

/// Hashes kept between builds (`exhibit serve`'s [`crate::site::BuildCache`]),
/// keyed by path and [`Stamp`], so an edit rehashes only the files it
/// touched. A one-shot build has none. Looked up from every core at once
/// (each save of a 1,000-page campaign asks for 2,000 files), so readers
/// share the lock.
#[derive(Debug, Default)]
pub(crate) struct HashCache(std::sync::RwLock<std::collections::HashMap<PathBuf, (Stamp, String)>>);

impl HashCache {
    fn known(&self, path: &Path, stamp: &Stamp) -> Option<String> {
        let known = self.0.read().unwrap_or_else(|e| e.into_inner());
        known
            .get(path)
            .filter(|(s, _)| s == stamp)
            .map(|(_, sha)| sha.clone())
    }

    fn remember(&self, path: &Path, stamp: Stamp, sha256: &str) {
        let mut known = self.0.write().unwrap_or_else(|e| e.into_inner());
        known.insert(path.to_path_buf(), (stamp, sha256.to_string()));
    }
}

thread_local! {
    /// The buffer each hashing thread streams files through, reused from
    /// one file to the next.
    static STREAM_BUF: std::cell::RefCell<Vec<u8>> =
        std::cell::RefCell::new(vec![0; crate::hash::BUF]);
}

/// A file's hash, size and, when small enough and within budget, its bytes.
struct Hashed {
    sha256: String,
    bytes: u64,
    content: Option<std::sync::Arc<[u8]>>,
    /// Not hashed: see [`deferred`].
    deferred: bool,
}

fn hash_stable(
    path: &Path,
    progress: &Progress,
    budget: &std::sync::atomic::AtomicU64,
    hashes: Option<&HashCache>,
) -> Result<Hashed, String> {
    use std::sync::atomic::Ordering;
    let (file, before) = match hashes {
        // With no hashes kept, the file is opened at once and stamped as
        // opened: the stamp is compared with the file as read below.
        None => match crate::fsx::open_walked_file(path) {
            Some((file, seen)) => (file, stamp_of(&seen)),
            None => open_seen(path)?,
        },
        // The preview looks its stamp up first: a known file is not opened.
        Some(h) => {
            let seen = std::fs::metadata(path).map_err(io_reason)?;
            let before = stamp_of(&seen);
            if let Some(sha256) = h.known(path, &before) {
                return Ok(Hashed {
                    sha256,
                    bytes: before.0,
                    content: None,
                    deferred: false,
                });
            }
            // The file as opened is compared with the path as first
            // seen: the same inode, size and times, or it changed.
            let file = crate::fsx::open_regular_seen(path, &seen).map_err(io_reason)?;
            (file, before)
        }
    };
    // Small files are read whole and kept while the budget lasts.
    let keep = before.0 <= KEEP_FILE
        && budget
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(before.0)
            })
            .is_ok();
    let hashed = read_stamped(&file, &before, keep, progress)?;
    if let Some(h) = hashes {
        h.remember(path, before, &hashed.sha256);
    }
    Ok(hashed)
}

/// Hash `file` (kept whole when `keep`), which was `before` when opened.
/// At most one byte more than the size stamped is read: a file whose
/// size says less than it holds (`/proc`, a stale network mount) is read
/// past it and refused, not hashed short, and one that grew, shrank or
/// was written meanwhile has another stamp after.
fn read_stamped(
    file: &std::fs::File,
    before: &Stamp,
    keep: bool,
    progress: &Progress,
) -> Result<Hashed, String> {
    let measured = std::io::Read::take(file, before.0 + 1);
    let (sha256, bytes, content) = if keep {
        let mut data = Vec::with_capacity(before.0 as usize);
        std::io::Read::read_to_end(&mut { measured }, &mut data).map_err(io_reason)?;
        progress.add(data.len() as u64);
        let sha = crate::hash::sha256_bytes(&data);
        let n = data.len() as u64;
        (sha, n, Some(std::sync::Arc::from(data)))
    } else {
        // Through this thread's buffer: memory stays flat however many
        // files there are, and no buffer is allocated per file.
        let (sha, n) = STREAM_BUF
            .with_borrow_mut(|buf| {
                crate::hash::sha256_reader_in(measured, buf, |n| progress.add(n))
            })
            .map_err(io_reason)?;
        (sha, n, None)
    };
    let after = stamp_of(&file.metadata().map_err(io_reason)?);
    if *before != after || before.0 != bytes {
        return Err("changed while being read".into());
    }
    Ok(Hashed {
        sha256,
        bytes,
        content,
        deferred: false,
    })
}

/// `path` stamped (symlinks followed), then opened if it is a regular file.
fn open_seen(path: &Path) -> Result<(std::fs::File, Stamp), String> {
    let seen = std::fs::metadata(path).map_err(io_reason)?;
    let file = crate::fsx::open_regular_seen(path, &seen).map_err(io_reason)?;
    Ok((file, stamp_of(&seen)))
}

fn io_reason(e: std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Every entry under `dir`, by relative `/` path. Symlinks are not followed;
/// one that resolves inside `dir` counts as a file only when `opts` lets it.
/// Folders in `opts.listed_only` are not entered.
pub(crate) fn walk(dir: &Path, opts: &Options) -> crate::error::Result<Disk> {
    let root = canonical(dir)?;
    let mut out = BTreeMap::new();
    let skip = |e: &walkdir::DirEntry| {
        e.depth() == 1
            && e.file_type().is_dir()
            && opts
                .listed_only
                .iter()
                .any(|d| e.file_name() == std::ffi::OsStr::new(d))
    };
    for entry in walkdir::WalkDir::new(dir)
        .follow_links(false)
        .min_depth(1)
        .into_iter()
        .filter_entry(|e| !skip(e))
    {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let path = e
                    .path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                crate::error::bail!("failed to list `{path}`: {e}");
            }
        };
        let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path());
        let mut detail = None;
        let name = match rel.to_str() {
            Some(s) => s.replace(std::path::MAIN_SEPARATOR, "/"),
            None => {
                let lossy = rel
                    .to_string_lossy()
                    .replace(std::path::MAIN_SEPARATOR, "/");
                detail = Some("file name is not valid UTF-8".to_string());
                lossy
            }
        };
        let ft = entry.file_type();
        let kind = kind_of(entry.path(), ft, &name, &root, opts);
        if kind == Kind::Special {
            detail = crate::fsx::special_kind(&ft).map(|k| format!("not a regular file: {k}"));
        }
        let kind = if detail.is_some() && kind == Kind::File {
            Kind::Other
        } else {
            kind
        };
        out.insert(name, (kind, detail));
    }
    Ok(out)
}

fn canonical(dir: &Path) -> crate::error::Result<PathBuf> {
    crate::fsx::canonicalize(dir)
}

/// What an entry at `path` (relative name `name`) is, symlinks unfollowed.
fn kind_of(path: &Path, ft: std::fs::FileType, name: &str, root: &Path, opts: &Options) -> Kind {
    if ft.is_dir() {
        Kind::Dir
    } else if ft.is_file() {
        Kind::File
    } else if ft.is_symlink() {
        match std::fs::canonicalize(path) {
            Ok(target) if target.starts_with(root) => {
                if !opts.symlinks.iter().any(|s| s == name) {
                    Kind::SymlinkInside
                } else if target.is_dir() {
                    Kind::Dir
                } else {
                    Kind::File
                }
            }
            _ => Kind::SymlinkOutside,
        }
    } else if crate::fsx::special_kind(&ft).is_some() {
        Kind::Special
    } else {
        Kind::Other
    }
}

impl Evidence {
    /// The bytes of a verified file as they were hashed, if they were kept.
    pub(crate) fn kept(&self, rel: &str) -> Option<std::sync::Arc<[u8]>> {
        self.verified_sha256(rel)?;
        self.kept.map().get(rel).cloned()
    }

    /// [`Evidence::read_verified`] for the last reader of a file (the
    /// render stage of a page's Markdown): its kept bytes are let go, so
    /// a campaign of many pages does not hold every page's source and
    /// every rendered page at once. A later read goes to the disk and is
    /// checked against the hash again.
    pub(crate) fn take_verified(&self, rel: &str) -> crate::error::Result<Vec<u8>> {
        let bytes = self.read_verified(rel)?;
        let mut kept = self.kept.0.write().unwrap_or_else(|e| e.into_inner());
        kept.remove(rel);
        Ok(bytes)
    }

    /// Read a verified file whole, re-checking its hash so that what is
    /// parsed is exactly what was verified.
    pub(crate) fn read_verified(&self, rel: &str) -> crate::error::Result<Vec<u8>> {
        let path = self.dir.join(rel);
        let expected = self.verified_sha256(rel).ok_or_else(|| {
            crate::error::Error::Invalid(format!(
                "`{}` is not a verified file of the campaign",
                path.display()
            ))
        })?;
        if let Some(kept) = self.kept(rel) {
            return Ok(kept.to_vec());
        }
        let bytes = crate::fsx::read(&path)?;
        let sha = crate::hash::sha256_bytes(&bytes);
        if self.is_deferred(rel) {
            self.check_deferred(rel, &sha, bytes.len() as u64)?;
        } else if sha != expected {
            return Err(crate::error::EvidenceFailed {
                report: format!("`{}` changed after it was verified", path.display()),
            }
            .into());
        }
        Ok(bytes)
    }
}

impl Evidence {
    /// A large file not hashed by the verify stage (see [`Options::defer`]):
    /// whatever reads it first must call [`Evidence::check_deferred`].
    pub(crate) fn is_deferred(&self, rel: &str) -> bool {
        self.deferred.contains(rel)
    }

    /// Judge a deferred file by the hash and size of what was read: a
    /// file that does not match its manifest entry fails the build with
    /// the report the verify stage would have given (it names the file;
    /// nothing was published).
    pub(crate) fn check_deferred(
        &self,
        rel: &str,
        sha256: &str,
        bytes: u64,
    ) -> crate::error::Result<()> {
        let Ok(i) = self.files.binary_search_by(|f| f.path.as_str().cmp(rel)) else {
            // Never judged: not published as if it had been.
            return Err(crate::error::Error::Invalid(format!(
                "internal error: `{}` was read as a verified file of the campaign but is not one",
                self.dir.join(rel).display()
            )));
        };
        let mut f = self.files[i].clone();
        judge(&mut f, sha256, bytes);
        if f.verdict == Verdict::Ok {
            return Ok(()); // the manifest's hash (and size, if it gives one)
        }
        let mut files = self.files.clone();
        f.sha256 = Some(sha256.to_string());
        f.bytes = Some(bytes);
        files[i] = f;
        let judged = Evidence {
            dir: self.dir.clone(),
            manifest: self.manifest.clone(),
            files,
            kept: Default::default(),
            deferred: std::collections::HashSet::new(),
        };
        Err(crate::error::EvidenceFailed {
            report: format!(
                "refusing to publish: the evidence does not match the manifest\n{}: {}\n{}",
                self.dir.display(),
                judged.summary(),
                judged.problems().trim_end()
            ),
        }
        .into())
    }
}

/// A byte-counting progress bar on stderr, shown only when stderr is a
/// terminal and the work is large enough to wait for.
struct Progress(Option<indicatif::ProgressBar>);

const PROGRESS_MIN_BYTES: u64 = 256 * 1024 * 1024;
const PROGRESS_MIN_FILES: usize = 5_000;

impl Progress {
    /// `defer`: the files [`deferred`] takes are not hashed, so not counted
    /// (told by size alone here: the bar's total is an estimate).
    fn new(dir: &Path, files: &[FileCheck], to_hash: &[usize], defer: bool) -> Progress {
        use std::io::IsTerminal;
        if !std::io::stderr().is_terminal() {
            return Progress(None);
        }
        // Sizes as the manifest gives them, where it does: a folder is not
        // read twice over to size a bar that may not be shown (2,000
        // stat calls, 4 ms of each preview save in a terminal at 1,000
        // pages). A file of another size is caught by its hash.
        let size = |f: &FileCheck| {
            let on_disk = || std::fs::metadata(dir.join(&f.path)).ok().map(|m| m.len());
            f.expected_bytes.or_else(on_disk)
        };
        let total: u64 = to_hash
            .iter()
            .map(|&i| &files[i])
            .filter_map(|f| size(f).map(|n| (f, n)))
            .filter(|(f, n)| !(defer && f.expected_sha256.is_some() && *n > KEEP_FILE))
            .map(|(_, n)| n)
            .sum();
        if total < PROGRESS_MIN_BYTES && to_hash.len() < PROGRESS_MIN_FILES {
            return Progress(None);
        }
        let bar = indicatif::ProgressBar::new(total);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "hashing {bar:40} {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
        ) {
            bar.set_style(style);
        }
        Progress(Some(bar))
    }

    fn add(&self, n: u64) {
        if let Some(bar) = &self.0 {
            bar.inc(n);
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let path =
            std::env::temp_dir().join(format!("exhibit-stamped-{name}-{}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        path
    }

    fn stamped(path: &Path) -> (std::fs::File, Stamp) {
        let (file, meta) = crate::fsx::open_walked_file(path).unwrap();
        (file, stamp_of(&meta))
    }

    /// A file that grows or shrinks after its stamp is caught by its
    /// stamp after the read, kept whole or streamed alike.
    #[test]
    fn a_file_that_grows_or_shrinks_after_its_stamp_is_refused() {
        let data = vec![b'x'; 70_000];
        for keep in [false, true] {
            let path = scratch(&format!("same-{keep}"), &data);
            let (file, before) = stamped(&path);
            let h = read_stamped(&file, &before, keep, &Progress(None)).unwrap();
            assert_eq!(
                (h.sha256, h.bytes),
                (crate::hash::sha256_bytes(&data), 70_000)
            );
            assert_eq!(h.content.is_some(), keep);

            let grown = scratch(&format!("grown-{keep}"), &data);
            let (file, before) = stamped(&grown);
            std::io::Write::write_all(
                &mut std::fs::OpenOptions::new()
                    .append(true)
                    .open(&grown)
                    .unwrap(),
                b"more",
            )
            .unwrap();
            let r = read_stamped(&file, &before, keep, &Progress(None));
            assert_eq!(r.err().as_deref(), Some("changed while being read"));

            let shrunk = scratch(&format!("shrunk-{keep}"), &data);
            let (file, before) = stamped(&shrunk);
            std::fs::OpenOptions::new()
                .write(true)
                .open(&shrunk)
                .unwrap()
                .set_len(10)
                .unwrap();
            let r = read_stamped(&file, &before, keep, &Progress(None));
            assert_eq!(r.err().as_deref(), Some("changed while being read"));
            for p in [path, grown, shrunk] {
                std::fs::remove_file(p).unwrap();
            }
        }
    }

    /// A file whose size says less than it holds (`/proc` files say 0)
    /// is read past its size and refused, never hashed short: its stamp
    /// does not move, only the bytes read tell.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_file_holding_more_than_its_size_says_is_refused() {
        for keep in [false, true] {
            let (file, before) = stamped(Path::new("/proc/self/status"));
            assert_eq!(before.0, 0);
            let r = read_stamped(&file, &before, keep, &Progress(None));
            assert_eq!(r.err().as_deref(), Some("changed while being read"));
        }
    }
}
