//! Last stage: verify, render and write the whole site beside OUT, write
//! SHA256SUMS and audit.json per campaign, then swap the new site in. Nothing
//! is written until every campaign has verified and rendered.

use crate::blocks::LedgerEntry;
use crate::campaign::{self, Campaign};
use crate::copies::{self, Copies};
use crate::data::DataStore;
use crate::error::{EvidenceFailed, InputError};
use crate::evidence::{self, Evidence};
use crate::manifest::{self, Format as ManifestFormat};
use crate::page::{self, BlockRecord, Page};
use crate::public::{self, Public};
use crate::redact::{scan, Counts, Detector, Redactor};
use crate::render::{Theme, GENERATOR};
use crate::sink::{Files, Sink};
use anyhow::{bail, Result};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Marks a folder as written by exhibit, so a build may replace it.
pub const MARKER: &str = ".exhibit-site";

pub struct BuildOptions {
    pub root: PathBuf,
    pub out: PathBuf,
    pub theme: Option<PathBuf>,
    /// `exhibit serve`: files that differ from the manifest are published
    /// as they are now and reported in [`BuildReport::unverified`] instead
    /// of failing the build (the author is editing them).
    pub preview: bool,
    /// Also write `<id>/<id>.html`, one self-contained file per campaign.
    pub single_file: bool,
    /// The publisher's key: redacted copies get a keyed commitment to
    /// their sealed original (see [`crate::commit`]).
    pub key: Option<crate::commit::Key>,
    /// Manifest hashes the campaigns must have (`build --expect`).
    pub expect: Vec<crate::verify::Pin>,
}

#[derive(Debug)]
pub struct BuildReport {
    pub campaigns: usize,
    pub pages: usize,
    pub files: usize,
    /// Preview only: `campaign/path: verdict` of every file that did not
    /// match the manifest.
    pub unverified: Vec<String>,
}

/// `EXHIBIT_TIMINGS=1`: how long each stage of a build took, on stderr
/// (for benchmarks and profiles).
struct Phases {
    on: bool,
    last: std::time::Instant,
}

impl Phases {
    fn new() -> Self {
        Phases {
            on: std::env::var_os("EXHIBIT_TIMINGS").is_some_and(|v| v == "1"),
            last: std::time::Instant::now(),
        }
    }

    fn mark(&mut self, stage: &str) {
        if self.on {
            let now = std::time::Instant::now();
            eprintln!(
                "timing: {stage:<10} {:>8.1} ms",
                (now - self.last).as_secs_f64() * 1e3
            );
            self.last = now;
        }
    }
}

/// Load a campaign's manifest and check its files, keeping small files'
/// bytes while the build's `budget` lasts.
pub fn verify_campaign(c: &Campaign, budget: &std::sync::atomic::AtomicU64) -> Result<Evidence> {
    let m = manifest::load(&c.dir)?;
    let name = m.name.clone();
    let opts = evidence::Options {
        symlinks: c.meta.symlinks.clone(),
        ..Default::default()
    };
    evidence::verify_with(&c.dir, m, &[name.as_str()], budget, &opts)
}

/// Pages rendered by earlier preview builds, reused when nothing they
/// depend on changed (see [`page_fingerprint`]).
#[derive(Default)]
pub struct PageCache {
    /// Keep pages for the next build (the preview); a one-shot build
    /// does not pay for copies it will never use.
    pub keep: bool,
    pages: std::collections::HashMap<(String, usize), (String, std::sync::Arc<Page>)>,
    /// A page's files as written (page, downloads) and their scans, by the
    /// fingerprint of everything that went into them.
    outputs: std::collections::HashMap<(String, usize), PageFiles>,
    /// Pages rendered afresh by the last build (the others were reused).
    pub rendered: usize,
    /// What the last build wrote, so the next writes only changes.
    last: Option<Published>,
}

/// A site as the last preview build left it.
struct Published {
    out: PathBuf,
    /// Fingerprint of the detector that scanned it.
    detector: String,
    files: Files,
}

/// A page's files by fingerprint: each file's bytes (kept for the
/// preview only) and what was written.
type PageFiles = (String, Vec<(Vec<u8>, Emitted)>);

/// A generated file, written to staging and scanned there and then.
#[derive(Clone)]
struct Emitted {
    /// Path inside the campaign's output folder.
    rel: String,
    sha256: String,
    scanned: scan::Scanned,
}

/// Write a generated file of campaign `id` and scan its bytes with `det`
/// (as the rescan would read them), so the rescan need not read it back.
/// Bytes the served site already has (preview) are neither.
fn emit(sink: &Sink, id: &str, rel: &str, bytes: &[u8], det: &Detector) -> Result<Emitted> {
    let (sha256, written) = sink.write(&format!("{id}/{rel}"), bytes)?;
    Ok(Emitted {
        rel: rel.to_string(),
        sha256,
        scanned: if written {
            scan::scan_bytes(det, bytes, scan::View::of(Path::new(rel)))?
        } else {
            scan::Scanned::default()
        },
    })
}

pub fn build(opts: &BuildOptions) -> Result<BuildReport> {
    build_with(opts, &mut PageCache::default())
}

/// [`build`], reusing pages from `cache` where their inputs are unchanged.
pub fn build_with(opts: &BuildOptions, cache: &mut PageCache) -> Result<BuildReport> {
    let mut phases = Phases::new();
    let out_abs = absolute(&opts.out)?;
    let root_abs = crate::fsx::canonicalize(&opts.root)
        .map_err(|_| anyhow::anyhow!("campaign folder `{}` does not exist", opts.root.display()))?;
    if root_abs.starts_with(&out_abs) {
        bail!(
            "output `{}` would replace the input `{}`; choose another output folder",
            opts.out.display(),
            opts.root.display()
        );
    }
    check_replaceable(&opts.out)?;
    let campaigns = campaign::discover(&opts.root, Some(&opts.out))?;
    for c in &campaigns {
        if out_abs.starts_with(crate::fsx::canonicalize(&c.dir)?) {
            bail!(
                "output `{}` lies inside the campaign `{}`; choose a folder outside it",
                opts.out.display(),
                c.dir.display()
            );
        }
    }
    let ids: Vec<String> = campaigns.iter().map(|c| c.meta.id.clone()).collect();
    crate::verify::check_pins(&opts.expect, &ids)?;
    let theme = Theme::load(opts.theme.as_deref())?;
    phases.mark("load");

    let budget = std::sync::atomic::AtomicU64::new(evidence::KEEP_TOTAL);
    let mut evidences = campaigns
        .iter()
        .map(|c| verify_campaign(c, &budget))
        .collect::<Result<Vec<_>>>()?;
    let mut unverified = Vec::new();
    if opts.preview {
        for (c, e) in campaigns.iter().zip(evidences.iter_mut()) {
            for line in accept_edits(e) {
                unverified.push(format!("{}/{line}", c.meta.id));
            }
        }
    }
    let mut problems = String::new();
    for (c, e) in campaigns.iter().zip(&evidences) {
        let pin = crate::verify::pin_for(&opts.expect, &c.meta.id, campaigns.len());
        if let Some(pin) = pin.filter(|p| p.sha256 != e.manifest.sha256) {
            problems.push_str(&format!(
                "  modified        {} ({})\n",
                c.path(&e.manifest.name).display(),
                crate::verify::pin_detail(&e.manifest.sha256, pin)
            ));
        }
        if !e.all_ok() {
            problems.push_str(&format!(
                "{}: {}\n{}",
                c.dir.display(),
                e.summary(),
                e.problems()
            ));
        } else if e.verified_sha256(campaign::META_NAME) != Some(c.meta_sha256.as_str()) {
            problems.push_str(&format!(
                "  modified        {} (changed while the build read it)\n",
                c.path(campaign::META_NAME).display()
            ));
        }
    }
    if !problems.is_empty() {
        return Err(EvidenceFailed {
            report: format!(
                "refusing to publish: the evidence does not match the manifest\n{}",
                problems.trim_end()
            ),
        }
        .into());
    }

    phases.mark("verify");
    let redactor = Redactor::new(Detector::new(campaigns.iter().map(|c| &c.meta.redaction))?);
    let mut campaigns = campaigns;
    let publics = public::prepare(&mut campaigns, &evidences, &redactor)?;
    // Secrets met by key (`"api_key": ...` once parsed) are found before
    // anything is copied, so every copy is redacted of them too.
    for (c, e) in campaigns.iter().zip(&evidences) {
        copies::learn_keyed_secrets(c, e, &redactor)?;
    }
    let redactor = redactor.with_known_secrets()?;
    phases.mark("scan");
    // Pages are written to the staging folder as they are rendered; it
    // is swapped in only when everything passed.
    let staging = sibling(&opts.out, "exhibit-staging")?;
    if staging.exists() {
        crate::fsx::remove_tree(&staging)?;
    }
    crate::fsx::create_dir_all(&staging)?;
    // From here every way out, an error or a panic, removes the staging
    // folder, unless it was swapped in; one a killed build left is
    // removed above by the next.
    let mut guard = Staging {
        path: staging.clone(),
        armed: true,
    };
    // The preview writes only what changed since its last build, when that
    // build went to the same folder with the same detector.
    let scanned_by = redactor.detector.fingerprint();
    let previous: Option<Files> = cache
        .last
        .as_ref()
        .filter(|l| opts.preview && l.out == out_abs && l.detector == scanned_by)
        .filter(|_| opts.out.join(MARKER).is_file())
        .map(|l| l.files.clone());
    let sink = Sink::new(staging.clone(), previous.as_ref(), cache.keep);
    // Files are copied first: pages show the copies' hashes and sizes.
    let stage = copies::Stage {
        redactor: &redactor,
        key: opts.key.as_ref(),
        sink: &sink,
    };
    let copied = campaigns
        .iter()
        .zip(&evidences)
        .zip(&publics)
        .map(|((c, e), p)| stage.copy_campaign(c, e, p))
        .collect::<Result<Vec<Copies>>>();
    let copied = match copied {
        Ok(c) => c,
        Err(e) => {
            let _ = crate::fsx::remove_tree(&staging);
            return Err(e);
        }
    };
    phases.mark("copy");
    let rendered = campaigns
        .iter()
        .zip(&evidences)
        .zip(&publics)
        .zip(&copied)
        .map(|(((c, e), p), k)| {
            let target = Target {
                theme: &theme,
                single_file: opts.single_file,
                sink: &sink,
            };
            render_pages(c, e, p, k, &redactor, cache, &target)
        })
        .collect::<Result<Vec<_>>>()
        .and_then(|pages| Ok((pages, render_index(&campaigns, &evidences, &theme)?)));
    let (pages, index) = match rendered {
        Ok(r) => r,
        Err(e) => {
            let _ = crate::fsx::remove_tree(&staging);
            return Err(e);
        }
    };
    phases.mark("render");
    // Copies and the rescan also look for secrets the pages met by key;
    // if there are any, what was scanned while rendering is scanned again.
    let redactor = redactor.with_known_secrets()?;
    let prescanned = redactor.detector.fingerprint() == scanned_by;

    let site = Site {
        campaigns: &campaigns,
        evidences: &evidences,
        publics: &publics,
        copies: &copied,
        theme: &theme,
        single_file: opts.single_file,
        out: &opts.out,
    };
    let written = site.write(&sink, pages, &index).and_then(|written| {
        phases.mark("write");
        rescan(&staging, &redactor, &written, prescanned)?;
        if sink.is_delta() && !prescanned {
            // Secrets met by key widened the detector: what is served
            // unchanged is read again too.
            rescan(&opts.out, &redactor, &Written::default(), false)?;
        }
        Ok(())
    });
    phases.mark("rescan");
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    if sink.is_delta() {
        if let Err(e) = sink.apply(&opts.out) {
            // OUT is part old, part new: the next build writes it whole.
            cache.last = None;
            let _ = crate::fsx::remove_tree(&staging);
            return Err(e);
        }
    } else {
        swap_in(&staging, &opts.out)?;
    }
    guard.armed = false;
    if cache.keep {
        cache.last = Some(Published {
            out: out_abs.clone(),
            detector: scanned_by,
            files: sink.into_files(),
        });
    }
    phases.mark("swap");
    Ok(BuildReport {
        campaigns: campaigns.len(),
        pages: campaigns.iter().map(|c| c.meta.pages.len()).sum(),
        files: evidences.iter().map(|e| e.files.len()).sum(),
        unverified,
    })
}

/// Removes the staging folder when dropped while armed.
struct Staging {
    path: PathBuf,
    armed: bool,
}

impl Drop for Staging {
    fn drop(&mut self) {
        if self.armed && self.path.exists() {
            let _ = crate::fsx::remove_tree(&self.path);
        }
    }
}

/// Preview: take modified and unlisted files as they are now and forget
/// missing ones, so the pages show the author's edits; returns one
/// `path: verdict` line per file taken or dropped. Unsafe, duplicate and
/// unreadable entries still fail the build.
fn accept_edits(e: &mut Evidence) -> Vec<String> {
    use crate::evidence::Verdict;
    let mut lines = Vec::new();
    e.files.retain_mut(|f| match f.verdict {
        Verdict::Modified | Verdict::SizeMismatch | Verdict::Unlisted => {
            lines.push(format!("{}: {}", f.path, f.verdict.as_str()));
            f.verdict = Verdict::Ok;
            f.expected_sha256 = f.sha256.clone();
            f.expected_bytes = f.bytes;
            true
        }
        Verdict::Missing => {
            lines.push(format!("{}: {}", f.path, f.verdict.as_str()));
            false
        }
        _ => true,
    });
    lines
}

/// Scan the written site with the same detectors; anything found fails
/// the build, and the report names file, line and category only.
/// `prescanned`: the files scanned while they were written were scanned
/// by this same detector, so their findings stand and they are not read
/// back.
fn rescan(staging: &Path, r: &Redactor, written: &Written, prescanned: bool) -> Result<()> {
    // Binaries and archives were scanned as inputs and copied as they are
    // (findings in them refused or accepted by hash): not read again.
    // No script-capable markup, whatever wrote it (theme overrides too).
    crate::gate::check_tree(staging)?;
    let report = scan::scan_path_except(&r.detector, staging, &|rel| rel.to_string(), &|rel| {
        written.verbatim.contains(rel)
            || written.unscanned.contains(rel)
            || (prescanned && written.prescanned.contains_key(rel))
    })?;
    let unscanned = &written.unscanned;
    let mut found: Vec<(String, usize, usize, &'static str)> = report
        .findings
        .iter()
        .map(|f| (f.file.clone(), f.line, f.column, f.category.as_str()))
        .collect();
    let mut binary = report.binary.clone();
    if prescanned {
        for (rel, s) in &written.prescanned {
            found.extend(
                s.hits
                    .iter()
                    .map(|(l, c, h)| (rel.clone(), *l, *c, h.category.as_str())),
            );
            if s.binary {
                binary.push(rel.clone());
            }
        }
    }
    found.sort();
    binary.sort();
    let mut problems = String::new();
    for (file, line, column, category) in &found {
        problems.push_str(&format!("  {file}:{line}:{column}: {category}\n"));
    }
    for b in &report.skipped {
        problems.push_str(&format!("  {b}: output that could not be scanned\n"));
    }
    for b in binary.iter().filter(|b| !unscanned.contains(*b)) {
        problems.push_str(&format!("  {b}: binary output that was never scanned\n"));
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(EvidenceFailed {
        report: format!(
            "refusing to publish: the written site still holds private values (the previous site is unchanged)\n{}",
            problems.trim_end()
        ),
    }
    .into())
}

/// A campaign's pages and ledger page, rendered before anything is written.
struct Rendered {
    /// Pages, downloads and the ledger page, already written and scanned.
    emitted: Vec<Emitted>,
    blocks: Vec<BlockRecord>,
    ledger: Vec<LedgerEntry>,
    /// The rendered pages, kept only for the single file.
    pages: Vec<Page>,
}

#[derive(Serialize)]
struct Audit<'a> {
    generator: &'static str,
    campaign: &'a campaign::Meta,
    verification: Verification,
    files: Vec<AuditFile>,
    blocks: Vec<BlockRecord>,
    ledger: Vec<LedgerEntry>,
}

#[derive(Serialize)]
struct Verification {
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

#[derive(Serialize)]
struct NavItem {
    title: String,
    href: String,
    current: bool,
}

/// Campaigns with more pages than this get a short header navigation (main
/// page, the page list, ledger, manifest) and previous/next links instead
/// of one tab per page: a tab row on every page would make the site grow
/// with the square of the page count.
pub const TABS_UP_TO: usize = 12;

fn nav(c: &Campaign, current: &str) -> Vec<NavItem> {
    let pages = c.public.pages.len();
    let mut items: Vec<(String, String)> = if pages <= TABS_UP_TO {
        (0..pages)
            .map(|i| (c.public.pages[i].title.clone(), c.page_output(i)))
            .collect()
    } else {
        vec![
            (c.public.pages[0].title.clone(), "index.html".to_string()),
            (
                format!("All {pages} pages"),
                "index.html#all-pages".to_string(),
            ),
        ]
    };
    items.extend([
        ("Failure ledger".to_string(), "ledger.html".to_string()),
        ("Manifest".to_string(), "manifest.html".to_string()),
    ]);
    let mut items: Vec<NavItem> = items
        .into_iter()
        .map(|(title, href)| NavItem {
            current: href == current,
            title,
            href,
        })
        .collect();
    items.dedup_by(|a, b| a.href == b.href);
    items
}

/// Previous and next page, for campaigns too long for tabs.
fn pager(c: &Campaign, current: &str) -> Vec<NavItem> {
    let pages = c.public.pages.len();
    if pages <= TABS_UP_TO {
        return Vec::new();
    }
    let Some(i) = c.page_with_output(current) else {
        return Vec::new();
    };
    let item = |j: usize, rel: &str| NavItem {
        title: format!("{rel}: {}", c.public.pages[j].title),
        href: c.page_output(j),
        current: false,
    };
    let mut out = Vec::new();
    if i > 0 {
        out.push(item(i - 1, "Previous"));
    }
    if i + 1 < pages {
        out.push(item(i + 1, "Next"));
    }
    out
}

/// The main page of a long campaign lists every page.
fn all_pages(c: &Campaign, current: &str) -> Vec<NavItem> {
    let pages = c.public.pages.len();
    if pages <= TABS_UP_TO || current != "index.html" {
        return Vec::new();
    }
    (1..pages)
        .map(|i| NavItem {
            title: c.public.pages[i].title.clone(),
            href: c.page_output(i),
            current: false,
        })
        .collect()
}

/// What templates get as `campaign`: the header facts, not the page list
/// (which would be copied into every page's context).
#[derive(Serialize)]
struct Facts<'a> {
    id: &'a str,
    title: &'a str,
    date: &'a str,
    state: &'a str,
    scope: &'a str,
    decision: &'a str,
    summary: Option<&'a str>,
}

/// `single`: the build also writes the one-file copy, linked from the footer.
fn base_context(
    c: &Campaign,
    current: &str,
    title: &str,
    theme: &Theme,
    single: bool,
) -> tera::Context {
    let m = &c.public;
    let mut ctx = tera::Context::new();
    ctx.insert("generator", GENERATOR);
    ctx.insert("root", "../");
    ctx.insert("css", &theme.css);
    ctx.insert(
        "campaign",
        &Facts {
            id: &m.id,
            title: &m.title,
            date: &m.date,
            state: &m.state,
            scope: &m.scope,
            decision: &m.decision,
            summary: m.summary.as_deref(),
        },
    );
    ctx.insert("nav", &nav(c, current));
    ctx.insert("pager", &pager(c, current));
    ctx.insert("all_pages", &all_pages(c, current));
    ctx.insert("is_main", &(current == "index.html"));
    ctx.insert("page_title", title);
    ctx.insert("toc", &Vec::<page::Heading>::new());
    if single {
        ctx.insert("single_file", &format!("{}.html", m.id));
    }
    ctx
}

#[derive(Serialize)]
struct ManifestRow<'a> {
    path: &'a str,
    href: String,
    bytes: String,
    sha256: &'a str,
    verdict: &'static str,
    redactions: String,
    /// The copy differs from the verified original.
    redacted: bool,
    /// The keyed commitment to the original, when a key was given.
    sealed: Option<&'a str>,
    unscanned: bool,
    /// Row id in the single file's file list.
    anchor: String,
}

/// Where and how pages are written.
struct Target<'a> {
    theme: &'a Theme,
    /// The single file is written too (so pages are kept for it).
    single_file: bool,
    sink: &'a Sink<'a>,
}

fn render_pages(
    c: &Campaign,
    e: &Evidence,
    p: &Public,
    k: &Copies,
    r: &Redactor,
    cache: &mut PageCache,
    target: &Target,
) -> Result<Rendered> {
    let Target {
        theme,
        single_file: keep_pages,
        sink,
    } = *target;
    let store = DataStore::new(e, r, p, k);
    let shared = shared_inputs(c, e, r);
    // Pages are independent: render them on every core, in page order,
    // unless an earlier build rendered one from the same inputs.
    let render = |store: &DataStore, i: usize| {
        let fp = page_fingerprint(c, e, &shared, i);
        match cache.pages.get(&(c.meta.id.clone(), i)) {
            Some((old, page)) if *old == fp => Ok((fp, Some(page.clone()))),
            _ => page::render(c, e, store, i).map(|p| (fp, Some(std::sync::Arc::new(p)))),
        }
    };
    let numbered = r.snapshot();
    let mut fresh: Vec<Result<(String, Option<std::sync::Arc<Page>>)>> = (0..c.meta.pages.len())
        .into_par_iter()
        .map(|i| render(&store, i))
        .collect();
    if r.grew_since(&numbered) {
        // A page met a value no input held as such (a data value read
        // differently from its file, or one put together from fields):
        // number such values in page order, not in the order threads
        // happened to reach them, with data read afresh.
        r.restore(numbered);
        let store = DataStore::new(e, r, p, k);
        fresh = (0..c.meta.pages.len()).map(|i| render(&store, i)).collect();
    }
    // The first failing page in order, whatever thread finished first.
    let fresh: Vec<(String, Option<std::sync::Arc<Page>>)> =
        fresh.into_iter().collect::<Result<_>>()?;

    let mut pages = Vec::with_capacity(fresh.len());
    let mut fingerprints = Vec::with_capacity(fresh.len());
    for (i, (fp, page)) in fresh.into_iter().enumerate() {
        let page = page.expect("every page is rendered or reused");
        let key = (c.meta.id.clone(), i);
        if cache.pages.get(&key).is_none_or(|(old, _)| *old != fp) {
            cache.rendered += 1;
        }
        if cache.keep {
            cache.pages.insert(key, (fp.clone(), page.clone()));
        }
        fingerprints.push(fp);
        pages.push(page);
    }
    page::check_anchors(&pages)?;

    // Each page and its downloads: templated, written and scanned at once,
    // or taken from the last preview build when nothing they show changed.
    let id = c.public.id.as_str();
    let det = &r.detector;
    // What a page's files depend on besides the page: theme, footer, detector.
    let around = format!(":{}:{keep_pages}:{}", theme.fingerprint, det.fingerprint());
    let out_fp = |i: usize| format!("{}{around}", fingerprints[i]);
    let (cached, keep) = (&cache.outputs, cache.keep);
    let outputs: Vec<Result<PageFiles>> = pages
        .par_iter()
        .enumerate()
        .map(|(i, p)| {
            let fp = out_fp(i);
            if let Some((old, files)) = cached.get(&(c.meta.id.clone(), i)) {
                if *old == fp {
                    for (bytes, em) in files {
                        sink.write_known(&format!("{id}/{}", em.rel), bytes, &em.sha256)?;
                    }
                    return Ok((fp, files.clone()));
                }
            }
            let mut ctx = base_context(c, &p.output, &p.title, theme, keep_pages);
            ctx.insert("content", &p.html);
            ctx.insert(
                "toc",
                &p.toc.iter().filter(|h| h.level >= 2).collect::<Vec<_>>(),
            );
            let html = theme.render("page.html", &ctx)?.into_bytes();
            let mut files = vec![(Vec::new(), emit(sink, id, &p.output, &html, det)?)];
            if keep {
                files[0].0 = html;
            }
            for d in &p.downloads {
                let em = emit(sink, id, &d.path, &d.bytes, det)?;
                files.push((if keep { d.bytes.clone() } else { Vec::new() }, em));
            }
            Ok((fp, files))
        })
        .collect();
    let mut emitted = Vec::new();
    for (i, o) in outputs.into_iter().enumerate() {
        let (fp, files) = o?;
        emitted.extend(files.iter().map(|(_, em)| em.clone()));
        if cache.keep {
            cache.outputs.insert((c.meta.id.clone(), i), (fp, files));
        }
    }

    let mut seen = BTreeSet::new();
    let ledger: Vec<LedgerEntry> = pages
        .iter()
        .flat_map(|p| p.ledger.iter())
        .filter(|l| seen.insert(l.id.clone()))
        .cloned()
        .collect();
    let mut ctx = base_context(c, "ledger.html", "Failure ledger", theme, keep_pages);
    ctx.insert("count", &ledger.len());
    ctx.insert("ledger", &crate::blocks::entries_table(&ledger));
    let ledger_page = theme.render("ledger.html", &ctx)?.into_bytes();
    emitted.push(emit(sink, id, "ledger.html", &ledger_page, det)?);
    let blocks = pages.iter().flat_map(|p| p.blocks.clone()).collect();
    let pages = if keep_pages {
        pages.iter().map(|p| Page::clone(p)).collect()
    } else {
        Vec::new()
    };
    Ok(Rendered {
        emitted,
        blocks,
        ledger,
        pages,
    })
}

/// What every page of a campaign reads besides its own Markdown: the
/// campaign's metadata, every file that is not a page (data, artifacts),
/// and the placeholder numbering.
fn shared_inputs(c: &Campaign, e: &Evidence, r: &Redactor) -> String {
    let pages: BTreeSet<&str> = c.meta.pages.iter().map(|p| p.file.as_str()).collect();
    let mut text = format!("{}\n{}\n", c.meta_sha256, r.digest());
    for f in e.files.iter().filter(|f| !pages.contains(f.path.as_str())) {
        text.push_str(&format!(
            "{}\0{}\0{}\n",
            f.path,
            f.verdict.as_str(),
            f.expected_sha256.as_deref().unwrap_or("")
        ));
    }
    crate::hash::sha256_bytes(text.as_bytes())
}

/// A page's inputs: its index and Markdown, and what all pages share. Two
/// builds with the same fingerprint render the page identically.
fn page_fingerprint(c: &Campaign, e: &Evidence, shared: &str, i: usize) -> String {
    let file = &c.meta.pages[i].file;
    format!(
        "{shared}:{i}:{file}:{}",
        e.verified_sha256(file).unwrap_or("")
    )
}

#[derive(Serialize)]
struct IndexEntry<'a> {
    id: &'a str,
    title: &'a str,
    date: &'a str,
    state: &'a str,
    decision: &'a str,
    summary: Option<&'a str>,
    files: usize,
}

fn render_index(campaigns: &[Campaign], evidences: &[Evidence], theme: &Theme) -> Result<Vec<u8>> {
    let mut entries: Vec<IndexEntry> = campaigns
        .iter()
        .zip(evidences)
        .map(|(c, e)| IndexEntry {
            id: &c.public.id,
            title: &c.public.title,
            date: &c.public.date,
            state: &c.public.state,
            decision: &c.public.decision,
            summary: c.public.summary.as_deref(),
            files: e.files.len(),
        })
        .collect();
    entries.sort_by(|a, b| b.date.cmp(a.date).then(a.id.cmp(b.id)));
    let mut ctx = tera::Context::new();
    ctx.insert("generator", GENERATOR);
    ctx.insert("root", "");
    ctx.insert("css", &theme.css);
    ctx.insert("campaigns", &entries);
    ctx.insert("toc", &Vec::<page::Heading>::new());
    Ok(theme.render("index.html", &ctx)?.into_bytes())
}

/// Everything the write stage reads.
struct Site<'a> {
    campaigns: &'a [Campaign],
    evidences: &'a [Evidence],
    publics: &'a [Public],
    copies: &'a [Copies],
    theme: &'a Theme,
    single_file: bool,
    /// OUT, whose files a preview build that writes only changes keeps.
    out: &'a Path,
}

/// Files the rescan treats apart (paths relative to the staging folder).
#[derive(Default)]
struct Written {
    /// Binaries and archives published as they are (scanned as inputs).
    unscanned: BTreeSet<String>,
    /// Exact copies of inputs the same detector found clean: only their
    /// names are scanned again.
    verbatim: BTreeSet<String>,
    /// Generated files scanned as they were written, with what was found.
    prescanned: BTreeMap<String, scan::Scanned>,
}

impl Site<'_> {
    /// Write the whole site into `staging`.
    /// The root SHA256SUMS covers every file outside the campaign folders
    /// and each campaign's SHA256SUMS, so `exhibit verify` (or
    /// `sha256sum -c` at the root) checks every file the site serves.
    fn write(&self, sink: &Sink, pages: Vec<Rendered>, index: &[u8]) -> Result<Written> {
        let mut sums: BTreeMap<String, String> = BTreeMap::new();
        let mut root = |rel: &str, bytes: &[u8]| -> Result<()> {
            let (sha, _) = sink.write(rel, bytes)?;
            sums.insert(rel.to_string(), sha);
            Ok(())
        };
        root(
            MARKER,
            b"Written by exhibit. `exhibit build` replaces this folder whole.\n",
        )?;
        root("index.html", index)?;
        for a in &self.theme.assets {
            root(&a.path, &a.bytes)?;
        }
        let mut written = Written::default();
        for (i, rendered) in pages.into_iter().enumerate() {
            let sha = self.write_campaign(sink, i, rendered, &mut written)?;
            let rel = format!("{}/{}", self.campaigns[i].public.id, manifest::SUMS_NAME);
            sums.insert(rel, sha);
        }
        let text: String = sums
            .iter()
            .map(|(p, h)| manifest::sums_line(h, p))
            .collect();
        sink.write(manifest::SUMS_NAME, text.as_bytes())?;
        Ok(written)
    }

    fn write_campaign(
        &self,
        sink: &Sink,
        i: usize,
        rendered: Rendered,
        written: &mut Written,
    ) -> Result<String> {
        let (c, e, p) = (&self.campaigns[i], &self.evidences[i], &self.publics[i]);
        let copies = &self.copies[i];
        let id = c.public.id.as_str();
        // Compared as a case-insensitive disk would (`Audit.json` is
        // `audit.json` there).
        let mut taken: BTreeSet<String> = rendered
            .emitted
            .iter()
            .map(|em| campaign::fold_name(&em.rel))
            .collect();
        taken.extend([
            campaign::fold_name("manifest.html"),
            campaign::fold_name("audit.json"),
            campaign::fold_name(manifest::SUMS_NAME),
        ]);
        for f in &copies.files {
            if !taken.insert(campaign::fold_name(&f.path)) {
                return Err(InputError::new(&c.path(&f.original), 0, 0, format!("`{}` would collide with another file of the published campaign; rename this file", f.path)).into());
            }
        }
        let write_one = |rel: &String, bytes: &Vec<u8>| -> Result<(String, String)> {
            let (sha, _) = sink.write(&format!("{id}/{rel}"), bytes)?;
            Ok((rel.clone(), sha))
        };

        let single = if self.single_file {
            let name = format!("{}.html", c.public.id);
            if !taken.insert(campaign::fold_name(&name)) {
                return Err(InputError::new(&c.path(campaign::META_NAME), 0, 0, format!("the single file `{name}` would replace a page or file of the campaign; rename that page")).into());
            }
            Some((name, self.single_file(i, &rendered, sink)?))
        } else {
            None
        };
        let mut generated = vec![("manifest.html".to_string(), self.manifest_page(i)?)];
        generated.extend(single);
        // published path -> sha256
        let mut sums: BTreeMap<String, String> = BTreeMap::new();
        for em in &rendered.emitted {
            sums.insert(em.rel.clone(), em.sha256.clone());
            written
                .prescanned
                .insert(format!("{}/{}", c.public.id, em.rel), em.scanned.clone());
        }
        for (rel, bytes) in &generated {
            let (rel, sha) = write_one(rel, bytes)?;
            sums.insert(rel, sha);
        }
        for f in &copies.files {
            sums.insert(f.path.clone(), f.public_sha256().to_string());
        }
        let audit = Audit {
            generator: GENERATOR,
            campaign: &c.public,
            verification: Verification {
                manifest: copies
                    .manifest()
                    .map(|m| m.path.clone())
                    .unwrap_or_default(),
                format: e.manifest.format,
                sha256: copies
                    .manifest()
                    .map(|m| m.public_sha256().to_string())
                    .unwrap_or_default(),
                rewritten: copies.manifest().is_some_and(copies::Published::redacted),
                sealed: copies.manifest().and_then(|m| m.sealed.clone()),
                summary: e.summary(),
                all_ok: e.all_ok(),
            },
            files: e
                .files
                .iter()
                .zip(copies.evidence_files())
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
                .collect(),
            blocks: rendered.blocks,
            ledger: rendered.ledger,
        };
        let mut audit = serde_json::to_string_pretty(&audit)?;
        audit.push('\n');
        let (rel, sha) = write_one(&"audit.json".to_string(), &audit.into_bytes())?;
        sums.insert(rel, sha);
        let text: String = sums
            .iter()
            .map(|(p, h)| manifest::sums_line(h, p))
            .collect();
        let (_, sums_sha) = write_one(&manifest::SUMS_NAME.to_string(), &text.into_bytes())?;
        for f in &copies.files {
            let rel = format!("{}/{}", c.public.id, f.path);
            match f.mode {
                public::Mode::Binary => written.unscanned.insert(rel),
                public::Mode::Verbatim => written.verbatim.insert(rel),
                public::Mode::Redact => false,
            };
        }
        Ok(sums_sha)
    }

    fn manifest_rows(&self, i: usize) -> Vec<ManifestRow<'_>> {
        let (e, p, copies) = (&self.evidences[i], &self.publics[i], &self.copies[i]);
        let thousands = crate::expr::Format::parse(",").unwrap_or_default();
        e.files
            .iter()
            .zip(copies.evidence_files())
            .enumerate()
            .map(|(n, (f, k))| ManifestRow {
                path: p.name(&f.path),
                href: k.path.clone(),
                bytes: thousands.apply(k.public_bytes() as f64),
                sha256: k.public_sha256(),
                verdict: f.verdict.as_str(),
                redactions: crate::redact::describe(&k.copied.redactions),
                redacted: k.redacted(),
                sealed: k.sealed.as_ref().map(|s| s.hmac_sha256.as_str()),
                unscanned: k.copied.binary,
                anchor: format!("file-{}", n + 1),
            })
            .collect()
    }

    /// The context the manifest page and the single file share.
    fn files_context(&self, i: usize, title: &str, current: &str) -> tera::Context {
        let (c, e) = (&self.campaigns[i], &self.evidences[i]);
        let copied = self.copies[i].evidence_files();
        let redacted: usize = copied
            .iter()
            .flat_map(|k| k.copied.redactions.values())
            .sum();
        let mut ctx = base_context(c, current, title, self.theme, self.single_file);
        ctx.insert("summary", &e.summary());
        ctx.insert("all_ok", &e.all_ok());
        ctx.insert("redacted", &redacted);
        ctx.insert(
            "redacted_files",
            &copied.iter().filter(|k| k.redacted()).count(),
        );
        ctx.insert("manifest", &self.manifest_facts(i));
        ctx
    }

    /// The published manifest: its name, link, and hash as published.
    fn manifest_facts(&self, i: usize) -> serde_json::Value {
        let m = self.copies[i].manifest();
        serde_json::json!({
            "name": m.map_or("", |m| m.path.as_str()),
            "href": m.map_or("", |m| m.path.as_str()),
            "sha256": m.map_or("", |m| m.public_sha256()),
            "rewritten": m.is_some_and(copies::Published::redacted),
        })
    }

    fn manifest_page(&self, i: usize) -> Result<Vec<u8>> {
        let mut ctx = self.files_context(i, "Manifest", "manifest.html");
        // Rows are rendered in chunks on every core: a campaign may list
        // tens of thousands of files.
        let rows = self.manifest_rows(i);
        let chunks: Vec<Result<String>> = rows
            .par_chunks(512)
            .map(|chunk| {
                let mut c = tera::Context::new();
                c.insert("files", chunk);
                self.theme.render("manifest_rows.html", &c)
            })
            .collect();
        let rows: String = chunks.into_iter().collect::<Result<Vec<_>>>()?.concat();
        ctx.insert("rows", &rows);
        Ok(self.theme.render("manifest.html", &ctx)?.into_bytes())
    }

    /// The one-file copy: every page, the ledger and the file list, with
    /// the stylesheet inline. Images are read back from the published
    /// copies in `dir`.
    fn single_file(&self, i: usize, rendered: &Rendered, sink: &Sink) -> Result<Vec<u8>> {
        let id = &self.campaigns[i].public.id;
        // A published copy is staged, or (preview) served unchanged.
        let (staged, served) = (sink.staging.join(id), self.out.join(id));
        let rows = self.manifest_rows(i);
        let listed: Vec<crate::single::Listed> = rows
            .iter()
            .map(|r| crate::single::Listed {
                href: &r.href,
                anchor: r.anchor.clone(),
            })
            .collect();
        let published: BTreeSet<&str> = rows.iter().map(|r| r.href.as_str()).collect();
        let images = |path: &str| -> Option<Vec<u8>> {
            published
                .contains(path)
                .then(|| {
                    std::fs::read(staged.join(path))
                        .or_else(|_| std::fs::read(served.join(path)))
                        .ok()
                })
                .flatten()
        };
        let linker = crate::single::Linker::new(&rendered.pages, &listed);
        let sections = linker.sections(&rendered.pages, &images);
        let mut ctx = self.files_context(i, "Offline copy", "");
        ctx.insert("files", &rows);
        ctx.insert("css", self.theme.css_text());
        ctx.insert("sections", &sections);
        ctx.insert("count", &rendered.ledger.len());
        ctx.insert(
            "ledger",
            &linker.fragment(&crate::blocks::entries_table(&rendered.ledger)),
        );
        Ok(self.theme.render("single.html", &ctx)?.into_bytes())
    }
}

/// `OUT` may be replaced only when it is absent, empty, or written by exhibit.
fn check_replaceable(out: &Path) -> Result<()> {
    if !out.exists() {
        return Ok(());
    }
    if !out.is_dir() {
        bail!("output `{}` exists and is not a folder", out.display());
    }
    let empty = std::fs::read_dir(out)
        .map(|mut d| d.next().is_none())
        .unwrap_or(false);
    if !empty && !out.join(MARKER).is_file() {
        bail!(
            "refusing to replace `{}`: it is not empty and was not written by exhibit (it has no {MARKER}); choose another output folder or remove it",
            out.display()
        );
    }
    Ok(())
}

/// A hidden folder next to `out`: `.NAME.TAG`.
fn sibling(out: &Path, tag: &str) -> Result<PathBuf> {
    let name = out
        .file_name()
        .ok_or_else(|| anyhow::anyhow!("output `{}` has no folder name", out.display()))?;
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Ok(parent.join(format!(".{}.{tag}", name.to_string_lossy())))
}

fn swap_in(staging: &Path, out: &Path) -> Result<()> {
    if !out.exists() {
        return crate::fsx::rename(staging, out);
    }
    let old = sibling(out, "exhibit-old")?;
    if old.exists() {
        crate::fsx::remove_dir_all(&old)?;
    }
    crate::fsx::rename(out, &old)?;
    if let Err(e) = crate::fsx::rename(staging, out) {
        let _ = std::fs::rename(&old, out);
        let _ = std::fs::remove_dir_all(staging);
        return Err(e);
    }
    crate::fsx::remove_tree(&old)
}

/// An absolute form of a path that may not exist yet.
fn absolute(p: &Path) -> Result<PathBuf> {
    if let Ok(c) = p.canonicalize() {
        return Ok(c);
    }
    let name = p
        .file_name()
        .ok_or_else(|| anyhow::anyhow!("`{}` has no folder name", p.display()))?;
    let parent = p
        .parent()
        .filter(|x| !x.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let parent = parent
        .canonicalize()
        .map_err(|_| anyhow::anyhow!("the folder holding `{}` does not exist", p.display()))?;
    Ok(parent.join(name))
}
