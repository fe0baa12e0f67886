//! Typed figures checked against the data: every number typed by hand in
//! a page's prose (not produced by a reference) is compared with the
//! values of the campaign's data and the values its pages compute, at the
//! precision it is written with. One that matches nothing is a warning,
//! or with `--strict` (or `"strict": true`) an [`EvidenceFailed`].
//!
//! The page stage hands each page's figures ([`extract::figures`], read
//! from its pulldown-cmark text events) and computed values
//! ([`values::computed`]); the render stage calls [`check`] once every
//! page of a campaign is rendered. audit.json lists each figure as a
//! [`Record`].

mod extract;
mod values;

pub(crate) use extract::{
    ascii_json, figures, in_string, literal_of, typed_text, unmark, word_at, Figure,
};
pub(crate) use values::{captions, computed, Index, Known};

use crate::data::Source;
use crate::error::EvidenceFailed;
use crate::sink::{Held, Sink};
use rayon::prelude::*;
use serde::Serialize;
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a page hands the check.
#[derive(Debug, Clone, Default)]
pub(crate) struct PageFigures {
    /// Numbers typed in the page's prose, in page order.
    pub(crate) typed: Vec<Figure>,
    /// Numbers the page's blocks and references computed.
    pub(crate) computed: Vec<Known>,
    /// Data files the page's references read (blocks name theirs in
    /// their records).
    pub(crate) sources: Vec<String>,
}

/// A typed figure as audit.json lists it.
#[derive(Serialize)]
struct Record<'a> {
    /// The page showing the figure (campaign.json for the header's).
    page: &'a str,
    /// The file it is typed in, when not the page (a data file).
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    /// `line:col` in the file it is typed in.
    #[serde(serialize_with = "line_col")]
    at: (usize, usize),
    text: &'a str,
    /// The value it matched, or null.
    matched: Option<f64>,
    /// Where that value came from: `FILE#POINTER`, or the block or
    /// reference that computed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<&'a str>,
}

/// `line:col`, written straight into the output.
fn line_col<S: serde::Serializer>(at: &(usize, usize), to: S) -> Result<S::Ok, S::Error> {
    to.collect_str(&format_args!("{}:{}", at.0, at.1))
}

/// Every typed figure's record, written as audit.json's `figures` lists
/// them: a line each ([`crate::records::line`]), joined by `,\n`. Written
/// as the figures are checked, so a campaign of many figures holds text,
/// not a structure per figure; and kept as each page wrote them, never
/// joined into one buffer (32 MB twice over at 10,000 pages).
#[derive(Default)]
pub(crate) struct Records {
    pages: Vec<Arc<PageCheck>>,
}

impl Records {
    pub(crate) fn is_empty(&self) -> bool {
        self.pages.iter().all(|p| p.lines.is_empty())
    }

    /// Hand the lines in order to `write`, the last without its
    /// separator; lines set aside on disk are read back one page's at a
    /// time.
    pub(crate) fn write_each(
        &self,
        sink: &Sink,
        write: &mut dyn FnMut(&[u8]) -> crate::error::Result<()>,
    ) -> crate::error::Result<()> {
        let pages: Vec<&Lines> = self
            .pages
            .iter()
            .map(|p| &p.lines)
            .filter(|l| !l.is_empty())
            .collect();
        for (n, lines) in pages.iter().enumerate() {
            let read;
            let bytes = match lines {
                Lines::Here(b) => b.as_slice(),
                Lines::Held(h) => {
                    read = sink.take_held(h)?;
                    read.as_slice()
                }
            };
            let end = if n + 1 == pages.len() {
                bytes.len() - 2
            } else {
                bytes.len()
            };
            write(&bytes[..end])?;
        }
        Ok(())
    }
}

/// The audit records of a campaign's typed figures kept in memory until
/// audit.json is written; the rest waits on disk ([`Sink::hold`]).
const KEEP_RECORDS: usize = 4 << 20;

/// One page's audit lines: in memory, or (a build that keeps nothing) set
/// aside on disk until audit.json is written ([`Sink::hold`]): at 10,000
/// pages they are 33 MB, held until every campaign is rendered.
enum Lines {
    Here(Vec<u8>),
    Held(Held),
}

impl Lines {
    fn is_empty(&self) -> bool {
        match self {
            Lines::Here(b) => b.is_empty(),
            Lines::Held(_) => false,
        }
    }
}

/// One page's figures as the check reads them.
pub(crate) struct Checked<'a> {
    /// The page's name as published.
    pub(crate) page: &'a str,
    pub(crate) figures: &'a PageFigures,
    /// What the page was rendered from: the preview keeps its check by it.
    pub(crate) key: Option<&'a str>,
}

/// A campaign's unmatched figures, reported once the site passed the
/// rescan (so no message quotes a figure from a page that is refused for
/// a private value).
#[derive(Debug, Default)]
pub(crate) struct Unmatched {
    /// `PATH:LINE:COL: typed figure ...`, in page order: every one under
    /// `strict`, else the first [`SHOWN_WARNINGS`] (the rest are counted,
    /// and listed in audit.json).
    pub(crate) lines: Vec<String>,
    /// How many figures matched nothing.
    pub(crate) count: usize,
    pub(crate) strict: bool,
}

/// Match the typed figures of every page, and of the campaign's header
/// (`header`: campaign.json's figures and the values its references
/// show), against `sources` and the values computed where each is shown:
/// a page's figures against its own computed values, the header's (shown
/// on every page) against every page's. The audit records, and the
/// figures that matched nothing, named at `dir/FILE:line:col`. With
/// `hold`, pages' records past the first [`KEEP_RECORDS`] wait in its
/// scratch file ([`Lines`]).
pub(crate) fn check(
    dir: &Path,
    pages: &[Checked],
    header: &PageFigures,
    sources: &[Arc<Source>],
    strict: bool,
    cache: Option<(&CheckCache, &str)>,
    hold: Option<&Sink>,
) -> crate::error::Result<(Records, Unmatched)> {
    if header.typed.is_empty() && pages.iter().all(|p| p.figures.typed.is_empty()) {
        return Ok((Records::default(), Unmatched::default()));
    }
    // The data's values, built once a figure needs them (the preview's
    // from its last build when `cache` names the same data).
    let data_cell = std::sync::OnceLock::new();
    let data = || -> &Index {
        data_cell.get_or_init(|| match cache {
            Some((c, key)) => c.data(dir, key, || Index::new(sources, &[])),
            None => Arc::new(Index::new(sources, &[])),
        })
    };
    let kept = cache.map(|(c, _)| c.pages(dir));
    let full_key = |k: &str, data: &str| format!("{k}\0{data}\0{}\0{strict}", dir.display());
    // Where each figure is shown, and what the values computed there are.
    let mut shown: Vec<Shown> = Vec::new();
    // The preview keeps the header's check by what it reads: its figures
    // and every page's computed values (a save that changes a page's
    // prose, not its values, finds it kept).
    let header_key = cache
        .filter(|_| !header.typed.is_empty())
        .map(|(c, _)| c.header_key(dir, header, pages));
    if !header.typed.is_empty() {
        let known = cache
            .zip(header_key.as_deref())
            .is_some_and(|((_, data), k)| {
                kept.as_ref()
                    .is_some_and(|kept| kept.contains_key(&full_key(k, data)))
            });
        // Only a check not kept reads the values.
        let everywhere: Vec<Known> = if known {
            Vec::new()
        } else {
            pages
                .iter()
                .flat_map(|p| &p.figures.computed)
                .chain(&header.computed)
                .cloned()
                .collect()
        };
        shown.push(Shown {
            page: crate::campaign::META_NAME,
            typed: &header.typed,
            computed: Cow::Owned(everywhere),
            key: header_key.as_deref(),
        });
    }
    for p in pages.iter().filter(|p| !p.figures.typed.is_empty()) {
        shown.push(Shown {
            page: p.page,
            typed: &p.figures.typed,
            computed: Cow::Borrowed(&p.figures.computed),
            key: p.key,
        });
    }
    // Pages are matched and their records written on every core (or taken
    // from the preview's last build); what matched nothing is then written
    // out in page order, and only as far as it will be printed.
    let in_memory = std::sync::atomic::AtomicUsize::new(0);
    let matched: Vec<Arc<PageCheck>> = shown
        .par_iter()
        .map(|sh| {
            let key = cache.zip(sh.key).map(|((_, data), k)| full_key(k, data));
            if let Some(old) = key.as_ref().and_then(|k| kept.as_ref()?.get(k)) {
                return Ok(old.clone());
            }
            sh.check(dir, data(), strict, key, (hold, &in_memory))
                .map(Arc::new)
        })
        .collect::<crate::error::Result<_>>()?;
    if let Some((c, _)) = cache {
        c.keep(dir, &matched);
    }
    let mut unmatched = Unmatched {
        strict,
        ..Unmatched::default()
    };
    for (sh, m) in shown.iter().zip(&matched) {
        let missed = m.hits.iter().filter(|hit| !**hit).count();
        unmatched.count += missed;
        let room = if strict {
            missed
        } else {
            SHOWN_WARNINGS.saturating_sub(unmatched.lines.len())
        };
        match &m.warnings {
            Some(w) => unmatched.lines.extend(w.iter().take(room).cloned()),
            None if room > 0 => unmatched
                .lines
                .extend(sh.warnings(dir, data(), &m.hits, room)),
            None => {}
        }
    }
    Ok((Records { pages: matched }, unmatched))
}

/// Where typed figures are shown, and the values computed there.
struct Shown<'a> {
    page: &'a str,
    typed: &'a [Figure],
    computed: Cow<'a, [Known]>,
    /// What the check reads, as the preview keeps it: a page's
    /// fingerprint, or for the header a digest of its figures and every
    /// page's computed values ([`CheckCache::header_key`]).
    key: Option<&'a str>,
}

impl Shown<'_> {
    /// Match each figure and write its audit record. `key`: the result is
    /// kept for the preview's next build, so the lines of the figures that
    /// match nothing are written now, as many as a build prints.
    fn check(
        &self,
        dir: &Path,
        data: &Index,
        strict: bool,
        key: Option<String>,
        hold: (Option<&Sink>, &std::sync::atomic::AtomicUsize),
    ) -> crate::error::Result<PageCheck> {
        let own = Index::new(&[], &self.computed);
        let mut lines = Vec::with_capacity(self.typed.len() * 80);
        let mut hits = Vec::with_capacity(self.typed.len());
        for f in self.typed {
            let hit = data.matching(f).or_else(|| own.matching(f));
            hits.push(hit.is_some());
            let record = Record {
                page: self.page,
                file: f.file.as_deref(),
                at: (f.line, f.col),
                text: &f.text,
                matched: hit.map(|k| k.value),
                source: hit.map(|k| k.source.as_str()),
            };
            crate::records::line(&mut lines, &record).expect("a record serializes");
            lines.extend_from_slice(b",\n");
        }
        let over = || {
            let n = lines.len();
            hold.1.fetch_add(n, std::sync::atomic::Ordering::Relaxed) + n > KEEP_RECORDS
        };
        let held = match hold.0.filter(|_| !lines.is_empty() && over()) {
            Some(sink) => sink.hold(&lines)?,
            None => None,
        };
        let lines = match held {
            Some(h) => Lines::Held(h),
            None => {
                lines.shrink_to_fit();
                Lines::Here(lines)
            }
        };
        let warnings = key.as_ref().map(|_| {
            let room = if strict { usize::MAX } else { SHOWN_WARNINGS };
            self.warnings_with(dir, data, &own, &hits, room)
        });
        Ok(PageCheck {
            key,
            hits,
            lines,
            warnings,
        })
    }

    /// The first `room` figures that matched nothing, as warning lines.
    fn warnings(&self, dir: &Path, data: &Index, hits: &[bool], room: usize) -> Vec<String> {
        let own = Index::new(&[], &self.computed);
        self.warnings_with(dir, data, &own, hits, room)
    }

    fn warnings_with(
        &self,
        dir: &Path,
        data: &Index,
        own: &Index,
        hits: &[bool],
        room: usize,
    ) -> Vec<String> {
        let missed = self.typed.iter().zip(hits).filter(|(_, hit)| !**hit);
        missed
            .take(room)
            .map(|(f, _)| {
                let nearest = closer(f, data.nearest(f), own.nearest(f));
                let file = f.file.as_deref().unwrap_or(self.page);
                unmatched_line(&dir.join(file), f, nearest)
            })
            .collect()
    }
}

/// One page's check: whether each figure matched, its records as
/// audit.json lines, and (kept by the preview) its first warnings.
struct PageCheck {
    /// The preview's key for it.
    key: Option<String>,
    hits: Vec<bool>,
    lines: Lines,
    warnings: Option<Vec<String>>,
}

/// What the preview's [`crate::site::BuildCache`] keeps of the check: the
/// data's values by the fingerprint of the campaign's files, each page's
/// check by what the page was rendered from, and the header's by what it
/// reads (see [`CheckCache::header_key`]). A campaign of a
/// thousand pages is then checked again only where a save changed it.
/// Each campaign's, by its folder.
#[derive(Default)]
pub(crate) struct CheckCache {
    data: std::sync::Mutex<HashMap<PathBuf, (String, Arc<Index>)>>,
    /// Shared with the build that reads them, not copied (a thousand
    /// pages' keys).
    pages: std::sync::Mutex<HashMap<PathBuf, Arc<KeptChecks>>>,
    /// A digest of each page's computed values, by the page's key.
    computed: std::sync::Mutex<HashMap<PathBuf, HashMap<String, Digest>>>,
}

/// A SHA-256 digest.
type Digest = [u8; 32];

/// A campaign's page checks, by the page's full key.
type KeptChecks = HashMap<String, Arc<PageCheck>>;

impl CheckCache {
    fn data(&self, dir: &Path, key: &str, make: impl FnOnce() -> Index) -> Arc<Index> {
        let mut kept = self.data.lock().unwrap_or_else(|e| e.into_inner());
        match kept.get(dir) {
            Some((k, index)) if k == key => index.clone(),
            _ => {
                let index = Arc::new(make());
                kept.insert(dir.to_path_buf(), (key.to_string(), index.clone()));
                index
            }
        }
    }

    /// What the header's check reads, as a digest: the header's typed
    /// figures and computed values, and every page's computed values in
    /// page order (each page's digest kept by its key, so a save hashes
    /// only the pages it changed).
    fn header_key(&self, dir: &Path, header: &PageFigures, pages: &[Checked]) -> String {
        use sha2::Digest as _;
        let mut kept = self.computed.lock().unwrap_or_else(|e| e.into_inner());
        let last = kept.remove(dir).unwrap_or_default();
        let mut now = HashMap::with_capacity(pages.len());
        let mut all = sha2::Sha256::new();
        all.update(b"header\0");
        all.update((header.typed.len() as u64).to_le_bytes());
        for f in &header.typed {
            hash_figure(&mut all, f);
        }
        all.update(digest_of(&header.computed));
        for p in pages {
            let digest = match p.key.and_then(|k| last.get(k)) {
                Some(d) => *d,
                None => digest_of(&p.figures.computed),
            };
            if let Some(k) = p.key {
                now.insert(k.to_string(), digest);
            }
            all.update(digest);
        }
        kept.insert(dir.to_path_buf(), now);
        crate::hash::hex(&all.finalize())
    }

    fn pages(&self, dir: &Path) -> Arc<KeptChecks> {
        let kept = self.pages.lock().unwrap_or_else(|e| e.into_inner());
        kept.get(dir).cloned().unwrap_or_default()
    }

    /// Keep this build's checks of the campaign in `dir`, and only those
    /// (the cache does not grow with the number of saves).
    fn keep(&self, dir: &Path, checks: &[Arc<PageCheck>]) {
        let mut all = self.pages.lock().unwrap_or_else(|e| e.into_inner());
        // A save that changed no page's check keeps the same ones.
        let same = |old: &KeptChecks| {
            let keyed = || checks.iter().filter_map(|c| Some((c.key.as_ref()?, c)));
            keyed().count() == old.len()
                && keyed().all(|(k, c)| old.get(k).is_some_and(|o| Arc::ptr_eq(o, c)))
        };
        if all.get(dir).is_some_and(|old| same(old)) {
            return;
        }
        let kept = checks
            .iter()
            .filter_map(|c| Some((c.key.clone()?, c.clone())))
            .collect();
        all.insert(dir.to_path_buf(), Arc::new(kept));
    }
}

/// Every field of a typed figure, each told from the next (strings by
/// their length).
fn hash_figure(h: &mut sha2::Sha256, f: &Figure) {
    use crate::hash::update_text as text;
    use sha2::Digest as _;
    // Every field, so a field added to the figure cannot be left out.
    let Figure {
        offset,
        line,
        col,
        text: written,
        scaled,
        decimals,
        percent,
        sign,
        file,
    } = f;
    for n in [*offset as u64, *line as u64, *col as u64, *scaled] {
        h.update(n.to_le_bytes());
    }
    h.update(decimals.to_le_bytes());
    h.update([u8::from(*percent)]);
    h.update(u32::from(sign.unwrap_or('\0')).to_le_bytes());
    text(h, written);
    match file {
        Some(file) => {
            h.update([1]);
            text(h, file);
        }
        None => h.update([0]),
    }
}

/// A digest of computed values, in order: each value's bits and source.
fn digest_of(values: &[Known]) -> Digest {
    use sha2::Digest as _;
    let mut h = sha2::Sha256::new();
    h.update((values.len() as u64).to_le_bytes());
    for Known { value, source } in values {
        h.update(value.to_bits().to_le_bytes());
        crate::hash::update_text(&mut h, source);
    }
    h.finalize().into()
}

/// Of two candidates for the value nearest `f`, the closer (the first on
/// a tie: data before computed values).
fn closer<'a>(f: &Figure, a: Option<&'a Known>, b: Option<&'a Known>) -> Option<&'a Known> {
    let m = f.magnitude();
    match (a, b) {
        (Some(a), Some(b)) if (b.value.abs() - m).abs() < (a.value.abs() - m).abs() => Some(b),
        (Some(a), _) => Some(a),
        (None, b) => b,
    }
}

/// Unmatched figures printed as warnings; under `strict` (a campaign's or
/// the build's) they fail the build instead (exit 1).
pub(crate) fn report(all: &[Unmatched]) -> crate::error::Result<()> {
    let strict: Vec<&String> = all
        .iter()
        .filter(|u| u.strict)
        .flat_map(|u| &u.lines)
        .collect();
    if !strict.is_empty() {
        let n = strict.len();
        let unmatched: Vec<&str> = strict.iter().map(|s| s.as_str()).collect();
        let report = format!(
            "{}\n{n} typed figure{} match{} no value of the data (strict): correct {}, quote the data with a reference, or mark a figure quoted from elsewhere `[~FIGURE]`",
            unmatched.join("\n"),
            if n == 1 { "" } else { "s" },
            if n == 1 { "es" } else { "" },
            if n == 1 { "it" } else { "them" },
        );
        return Err(EvidenceFailed { report }.into());
    }
    // Each campaign kept its first lines: the first overall are among them.
    let lines: Vec<&String> = all.iter().flat_map(|u| &u.lines).collect();
    let shown = lines.len().min(SHOWN_WARNINGS);
    for line in &lines[..shown] {
        eprintln!("warning: {line}");
    }
    let total: usize = all.iter().map(|u| u.count).sum();
    if total > shown {
        let more = total - shown;
        eprintln!(
            "warning: {more} more typed figure{} match{} no value of the data: audit.json lists every figure; `--strict` prints them all",
            if more == 1 { "" } else { "s" },
            if more == 1 { "es" } else { "" },
        );
    }
    Ok(())
}

/// How many unmatched figures a build prints one by one: a campaign of
/// prose with no data (thousands of figures) would otherwise bury the
/// output; the rest are counted, listed in audit.json, and printed in full
/// under `--strict`.
const SHOWN_WARNINGS: usize = 20;

/// `PATH:LINE:COL: typed figure `X` matches no value of the data (nearest: V, SOURCE)`.
fn unmatched_line(path: &Path, f: &Figure, nearest: Option<&Known>) -> String {
    let nearest = match nearest {
        Some(k) => format!("nearest: {}, {}", shown(k.value), k.source),
        None => "the campaign's pages read no numeric data".to_string(),
    };
    format!(
        "{}:{}:{}: typed figure `{}` matches no value of the data ({nearest})",
        path.display(),
        f.line,
        f.col,
        f.text
    )
}

/// A value as a message shows it: 12 significant digits at most.
fn shown(v: f64) -> String {
    let v = format!("{v:.11e}").parse::<f64>().unwrap_or(v);
    format!("{v}")
}
