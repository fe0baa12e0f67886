//! The build: verify, make the public view, copy, render and write the
//! whole site beside OUT, write SHA256SUMS and audit.json per campaign,
//! rescan what was written, then swap the new site in. Nothing is
//! published until every campaign has verified and rendered.
//!
//! [`build_with`] reads as the stages it runs; each stage is a function of
//! its own file here and hands the next a value of its own:
//! [`inputs`] (load and verify) -> [`crate::public`] -> [`crate::copies`] ->
//! [`pages`] (render) -> [`write`] (+ [`audit`], [`nav`]) -> [`rescan`] ->
//! [`staging`] (swap in). State kept between builds is the caller's
//! [`BuildCache`], never the process's.

mod audit;
mod cache;
mod checks;
pub(crate) mod digest;
mod index;
mod inputs;
mod nav;
mod pages;
mod rescan;
mod staging;
mod write;

pub(crate) use crate::layout::MARKER;
pub(crate) use cache::BuildCache;

use crate::copies::{self, Copies};
use crate::error::Result;
use crate::public::Public;
use crate::redact::{Detector, Redactor};
use crate::sink::Sink;
use std::path::PathBuf;

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
    /// A typed figure that matches no data fails the build (`--strict`).
    pub strict: bool,
}

#[derive(Debug)]
pub struct BuildReport {
    pub(crate) campaigns: usize,
    pub(crate) pages: usize,
    pub(crate) files: usize,
    /// Preview only: `campaign/path: verdict` of every file that did not
    /// match the manifest.
    pub(crate) unverified: Vec<String>,
}

/// `EXHIBIT_TIMINGS=1`: how long each stage of a build took, on stderr
/// (for benchmarks and profiles).
struct Phases {
    on: bool,
    last: std::time::Instant,
    /// The process's CPU time (user and system, all threads) at `last`.
    cpu: f64,
}

impl Phases {
    fn new() -> Self {
        Phases {
            on: std::env::var_os("EXHIBIT_TIMINGS").is_some_and(|v| v == "1"),
            last: std::time::Instant::now(),
            cpu: cpu_ms(),
        }
    }

    fn mark(&mut self, stage: &str) {
        if self.on {
            let (now, cpu) = (std::time::Instant::now(), cpu_ms());
            eprintln!(
                "timing: {stage:<10} {:>8.1} ms  cpu {:>7.1} ms  peak {:>6.1} MB",
                (now - self.last).as_secs_f64() * 1e3,
                cpu - self.cpu,
                peak_mb()
            );
            (self.last, self.cpu) = (now, cpu);
        }
    }
}

/// The process's peak resident memory so far (VmHWM), in MB (0 where it
/// cannot be read).
fn peak_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// The process's CPU time so far, in ms (0 where it cannot be read).
#[cfg(unix)]
fn cpu_ms() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return 0.0;
    }
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3;
    ms(u.ru_utime) + ms(u.ru_stime)
}

#[cfg(not(unix))]
fn cpu_ms() -> f64 {
    0.0
}

/// A one-shot build: nothing is kept for a next one.
pub fn build(opts: &BuildOptions) -> Result<BuildReport> {
    build_with(opts, None, None)
}

/// [`build`], reusing from `cache` (the preview server's) the hashes,
/// scans and pages whose inputs are unchanged, and writing only what
/// changed since the last build into the same folder. `announce`
/// (the preview's): called once the pages are in place, before the files
/// that list them ([`crate::layout::written_last`]) are written; if those
/// then fail, OUT is put back as it was.
pub(crate) fn build_with(
    opts: &BuildOptions,
    mut cache: Option<&mut BuildCache>,
    announce: Option<&dyn Fn(&BuildReport)>,
) -> Result<BuildReport> {
    let mut phases = Phases::new();
    let loaded = inputs::load(opts, cache.as_deref())?;
    phases.mark("load");
    let verified = inputs::verify(opts, &loaded.campaigns, cache.as_deref())?;
    phases.mark("verify");
    let (publics, redactor) = public_view(&loaded, &verified.evidences, cache.as_deref())?;
    phases.mark("scan");
    let staging = staging::Staging::create(&opts.out)?;
    let mut scanned_by = redactor.detector.fingerprint();
    let previous = cache
        .as_deref()
        .and_then(|c| c.served(opts, &loaded.out_abs, &scanned_by));
    let sink = Sink::new(staging.path.clone(), previous.as_deref(), cache.is_some());
    let stages = Stages {
        opts,
        loaded: &loaded,
        verified: &verified,
        publics: &publics,
        sink: &sink,
    };
    let mut copied = stages.copy(&redactor)?;
    // A large text file, read only by the copy stage, may hold a secret
    // met by key that no other file did: then every copy is made again by
    // the detector that knows it (reading those files a second time), as
    // if the public stage had found it.
    let streamed = publics.iter().any(|p| !p.streamed.is_empty());
    let redactor = if streamed {
        redactor.with_known_secrets()?
    } else {
        redactor
    };
    if redactor.detector.fingerprint() != scanned_by {
        copied = stages.copy(&redactor)?;
        scanned_by = redactor.detector.fingerprint();
    }
    phases.mark("copy");
    let page_cache = cache.as_deref_mut().map(|c| &mut c.pages);
    let mut rendered = stages.render(&redactor, &copied, page_cache)?;
    let unmatched: Vec<_> = rendered
        .campaigns
        .iter_mut()
        .map(|c| std::mem::take(&mut c.unmatched))
        .collect();
    if let Some(cache) = cache.as_deref_mut() {
        cache.rendered = rendered.campaigns.iter().map(|c| c.fresh).sum();
    }
    phases.mark("render");
    // Copies and the rescan also look for secrets the pages met by key;
    // if there are any, what was scanned while rendering is scanned again.
    let redactor = redactor.with_known_secrets()?;
    let prescanned = redactor.detector.fingerprint() == scanned_by;
    let kept = cache.as_deref();
    if let Some(c) = kept {
        c.clean.next_build();
        c.gated.next_build();
    }
    let theme = loaded.theme.get()?;
    let site = stages.site(&theme, &copied, kept);
    let rescan = |written: &write::Written, prescanned: bool| {
        stages.rescan(&redactor, (written, prescanned), kept)
    };
    let early = announce.filter(|_| sink.is_delta());
    let (written, last) = if early.is_some() {
        let (written, last) = site.write_first(&sink, rendered.campaigns)?;
        (written, Some(last))
    } else {
        (site.write(&sink, rendered.campaigns)?, None)
    };
    phases.mark("write");
    rescan(&written, prescanned)?;
    phases.mark("rescan");
    crate::claims::report(&unmatched)?;
    let report = verified.report(&loaded.campaigns);
    let finish = |sink: &Sink| -> Result<()> {
        if let Some(last) = last {
            site.write_last(sink, last)?;
            // What the first part staged was scanned already: it is told
            // apart the same way if it is still staged (a save that drops
            // a file moves everything at once).
            rescan(&written, true)?;
        }
        Ok(())
    };
    let announced = match early {
        Some(announce) => staging.publish_in_two(&sink, &opts.out, finish, &mut || {
            phases.mark("swap");
            announce(&report);
        }),
        None => staging.publish(&sink, &opts.out),
    };
    let (files, published) = match announced {
        Ok(()) => (Some(sink.into_files()), Ok(())),
        Err(e) => (None, Err(e)),
    };
    if let Some(cache) = cache {
        cache.published(&loaded.out_abs, scanned_by, files);
    }
    published?;
    phases.mark(if early.is_some() { "last" } else { "swap" });
    // What the build read and made is let go on a thread of its own: the
    // preview announces the new site as soon as it is in place (freeing
    // it took 1.5 to 2 ms of each save at 1,000 pages).
    crate::sink::drop_apart((loaded, verified, publics, copied, redactor));
    Ok(report)
}

/// The public stage: every file scanned and its values numbered
/// ([`crate::public::prepare`]), and the secrets met by key (`"api_key":
/// ...` once parsed) found before anything is copied, so every copy is
/// redacted of them too.
fn public_view(
    loaded: &inputs::Loaded,
    evidences: &[crate::evidence::Evidence],
    cache: Option<&BuildCache>,
) -> Result<(Vec<Public>, Redactor)> {
    let campaigns = &loaded.campaigns;
    let redactor = Redactor::new(Detector::new(campaigns.iter().map(|c| &c.meta.redaction))?);
    let scans = cache.map(|c| &c.scans);
    let mut publics = crate::public::prepare(campaigns, evidences, &redactor, scans)?;
    for (c, e) in campaigns.iter().zip(evidences) {
        copies::learn_keyed_secrets(c, e, &redactor, cache.map(|c| &c.keyless))?;
    }
    crate::public::number_held(&mut publics, &redactor);
    Ok((publics, redactor.with_known_secrets()?))
}

/// What the stages after the public view read: each hands its result to
/// the next as a value.
struct Stages<'a> {
    opts: &'a BuildOptions,
    loaded: &'a inputs::Loaded,
    verified: &'a inputs::Verified,
    publics: &'a [Public],
    sink: &'a Sink<'a>,
}

impl Stages<'_> {
    /// The copy stage, before any page: pages show the copies' hashes and
    /// sizes.
    fn copy(&self, redactor: &Redactor) -> Result<Vec<Copies>> {
        let stage = copies::Stage {
            redactor,
            key: self.opts.key.as_ref(),
            sink: self.sink,
            buffers: Default::default(),
        };
        let campaigns = self.loaded.campaigns.iter();
        campaigns
            .zip(&self.verified.evidences)
            .zip(self.publics)
            .map(|((c, e), p)| stage.copy_campaign(c, e, p))
            .collect()
    }

    /// The render stage: every campaign's pages (written to staging as
    /// they are rendered).
    fn render(
        &self,
        redactor: &Redactor,
        copied: &[Copies],
        mut cache: Option<&mut cache::PageCache>,
    ) -> Result<pages::Site> {
        let theme = self.loaded.theme.get()?;
        let target = pages::Target {
            theme: &theme,
            single_file: self.opts.single_file,
            sink: self.sink,
            redactor,
            strict: self.opts.strict,
            preview: self.opts.preview,
        };
        let campaigns = self.loaded.campaigns.iter();
        let campaigns = campaigns
            .zip(&self.verified.evidences)
            .zip(self.publics)
            .zip(copied)
            .map(|(((c, e), p), k)| {
                let campaign = pages::Campaign { c, e, p, k };
                target.render_pages(&campaign, cache.as_deref_mut())
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(pages::Site { campaigns })
    }

    /// The write stage's view of the build.
    fn site<'b>(
        &'b self,
        theme: &'b crate::render::Theme,
        copied: &'b [Copies],
        cache: Option<&'b BuildCache>,
    ) -> write::Site<'b> {
        write::Site {
            campaigns: &self.loaded.campaigns,
            evidences: &self.verified.evidences,
            publics: self.publics,
            copies: copied,
            theme,
            single_file: self.opts.single_file,
            out: &self.opts.out,
            rows: cache.map(|c| &c.rows),
        }
    }

    /// The rescan of what is staged. `prescanned`: `redactor` is the
    /// detector the pages were scanned with as they were written.
    fn rescan(
        &self,
        redactor: &Redactor,
        written: (&write::Written, bool),
        cache: Option<&BuildCache>,
    ) -> Result<()> {
        let memo = cache.map(|c| (&c.clean, &c.gated));
        rescan::rescan(&self.sink.staging, redactor, written, memo)?;
        if self.sink.is_delta() && !written.1 {
            // Secrets met by key widened the detector: what is served
            // unchanged is read again too.
            let none = write::Written::default();
            rescan::rescan(&self.opts.out, redactor, (&none, false), memo)?;
        }
        Ok(())
    }
}
