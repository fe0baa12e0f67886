//! The render stage: each campaign's pages rendered (on every core, or
//! taken from the preview's cache when nothing they read changed),
//! templated, written to staging and scanned at once, then the ledger
//! page.

use super::cache::{KeptFile, PageCache, PageFiles, PageKey, Rendering};
use super::checks;
use super::nav::{base_context, Header};
use crate::blocks::LedgerEntry;
use crate::copies::Copies;
use crate::data::{DataStore, SourceKey};
use crate::error::Result;
use crate::evidence::Evidence;
use crate::layout;
use crate::page::{self, BlockRecord, Page};
use crate::public::Public;
use crate::redact::{scan, Detector, Redactor};
use crate::render::Theme;
use crate::sink::{Held, Sink};
use rayon::prelude::*;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

/// A generated file, written to staging and scanned there and then.
#[derive(Clone)]
pub(super) struct Emitted {
    /// Path inside the campaign's output folder.
    pub(crate) rel: String,
    pub(crate) sha256: String,
    pub(crate) scanned: scan::Scanned,
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

/// What the render stage hands on.
pub(super) struct Site {
    pub(crate) campaigns: Vec<Rendered>,
}

/// A campaign's pages and ledger page, rendered before anything else of
/// it is written.
pub(super) struct Rendered {
    /// Pages, downloads and the ledger page, already written and scanned.
    pub(crate) emitted: Vec<Emitted>,
    pub(crate) blocks: Vec<BlockRecord>,
    pub(crate) ledger: Vec<LedgerEntry>,
    /// The header as shown, its references resolved.
    pub(crate) header: Header,
    /// The consistency checks, all of which held.
    pub(crate) checks: Vec<checks::Outcome>,
    /// The typed figures of the pages and what each matched.
    pub(crate) figures: crate::claims::Records,
    /// Those that matched nothing, reported after the rescan.
    pub(crate) unmatched: crate::claims::Unmatched,
    /// The rendered pages, kept only for the single file.
    pub(crate) pages: Vec<Page>,
    /// Pages rendered afresh (the others came from the cache).
    pub(crate) fresh: usize,
    /// The campaign's headline figures, for the site's index.
    pub(crate) headline: Vec<super::index::Figure>,
    /// The publication digest every page shows ([`super::digest`]).
    pub(crate) digest: String,
}

/// One campaign as the render stage reads it: as loaded, verified, made
/// public and copied.
pub(super) struct Campaign<'a> {
    pub(crate) c: &'a crate::campaign::Campaign,
    pub(crate) e: &'a Evidence,
    pub(crate) p: &'a Public,
    pub(crate) k: &'a Copies,
}

/// Where and how pages are written.
pub(super) struct Target<'a> {
    pub(crate) theme: &'a Theme,
    /// The single file is written too (so pages are kept for it).
    pub(crate) single_file: bool,
    pub(crate) sink: &'a Sink<'a>,
    pub(crate) redactor: &'a Redactor,
    /// `--strict`: a typed figure that matches no data fails the build.
    pub(crate) strict: bool,
    /// The preview's build: pages show no digest ([`super::digest::IN_PREVIEW`]).
    pub(crate) preview: bool,
}

impl Target<'_> {
    /// Render, write and scan a campaign's pages and its ledger page.
    pub(super) fn render_pages(
        &self,
        campaign: &Campaign,
        mut cache: Option<&mut PageCache>,
    ) -> Result<Rendered> {
        let state = numbering_state(self.redactor);
        let RenderedPages {
            pages,
            held,
            fingerprints,
            sources: loaded,
            headline,
            headlines,
            new,
        } = self.pages(campaign, cache.as_deref())?;
        let fresh = new.iter().filter(|n| **n).count();
        // Kept only when no page numbered a new value (then the next build
        // of the same inputs starts from the same numbering).
        if let Some(cache) = cache
            .as_deref_mut()
            .filter(|_| numbering_state(self.redactor) == state)
        {
            keep_sources(cache, campaign, &loaded, &state);
        }
        let digest = if self.preview {
            super::digest::IN_PREVIEW.to_string()
        } else {
            super::digest::of_campaign(campaign.k, &pages)
        };
        if let Some(cache) = cache.as_deref_mut() {
            // Pages taken from the cache are there already.
            let each = pages.iter().zip(&fingerprints).zip(headlines);
            let each = each.enumerate().filter(|(i, _)| new[*i]);
            for (i, ((page, fingerprint), headline)) in each {
                let rendering = Rendering {
                    fingerprint: fingerprint.clone(),
                    page: page.clone(),
                    headline: headline.unwrap_or_else(|| super::index::headline(&page.html)),
                };
                cache.pages.insert(key(campaign, i), rendering);
            }
        }
        page::check_anchors(&pages, |i| self.html(&pages[i], &held[i]))?;
        let ledger = ledger(&pages);
        let (header, header_figures, checks) = self.header(campaign, &pages, ledger.len())?;
        let blocks = pages.iter().flat_map(|p| p.blocks.clone()).collect();
        let single = if self.single_file {
            pages.iter().map(|p| Page::clone(p)).collect()
        } else {
            Vec::new()
        };
        let written = Written {
            header: &header,
            fingerprints: &fingerprints,
            digest: &digest,
        };
        let check = |pages: Vec<(&str, &crate::claims::PageFigures)>,
                     kept: Option<&crate::claims::CheckCache>| {
            let figures = Figures {
                pages,
                fingerprints: &fingerprints,
                header: &header_figures,
                sources: &loaded,
            };
            self.check_figures(campaign, &figures, kept)
        };
        // The ledger page needs none of the pages: made beside them.
        let ledger_page = || self.ledger_page(campaign.p, &header, &ledger, &digest);
        // A build that keeps nothing holds the only reference to each page:
        // its typed figures are taken out and checked beside the writing of
        // the pages, which needs none of them (and lets each page go once
        // written, as before). The preview's pages are shared with its
        // cache and keep their figures; it keeps each page's check by what
        // it read, then writes them.
        let taken = match cache {
            None => taken_figures(pages),
            Some(_) => Err(pages),
        };
        let (checked_figures, (pages_written, ledger_page)) = match taken {
            Ok((pages, figures)) => {
                // The figures go once checked, not once every page is written.
                let check = &check;
                let checking = move || {
                    let each = figures.iter().map(|(file, f)| (file.as_str(), f)).collect();
                    check(each, None)
                };
                let write = || self.write_pages(campaign, &written, pages, held, None);
                rayon::join(checking, || rayon::join(write, ledger_page))
            }
            Err(pages) => {
                let each = pages
                    .iter()
                    .map(|p| (p.file.as_str(), &p.figures))
                    .collect();
                let checked_figures = check(each, cache.as_deref().map(|c| &c.checks));
                let write = || self.write_pages(campaign, &written, pages, held, cache);
                (checked_figures, rayon::join(write, ledger_page))
            }
        };
        let (figures, unmatched) = checked_figures?;
        let mut emitted = pages_written?;
        emitted.push(ledger_page?);
        Ok(Rendered {
            emitted,
            header,
            checks,
            blocks,
            ledger,
            figures,
            unmatched,
            pages: single,
            fresh,
            headline,
            digest,
        })
    }

    /// The campaign's header, its references resolved now that the ledger
    /// is complete, and its checks, every one of which must hold.
    fn header(
        &self,
        campaign: &Campaign,
        pages: &[Arc<Page>],
        ledger: usize,
    ) -> Result<(Header, crate::claims::PageFigures, Vec<checks::Outcome>)> {
        let Campaign { c, e, p, k } = *campaign;
        let store = DataStore::new(e, self.redactor, p, k);
        let refs = page::Refs {
            store: &store,
            ledger: Some(ledger),
        };
        let titles = pages.iter().map(|p| p.title.clone()).collect();
        let (header, figures) = Header::resolve(c, p, &refs, titles)?;
        let outcomes = checks::run(c, &p.meta.checks, &refs)?;
        Ok((header, figures, outcomes))
    }

    /// Every page in order, with the fingerprint of its inputs and how
    /// many were rendered afresh. Pages are independent: rendered on every
    /// core, in page order, unless an earlier build rendered one from the
    /// same inputs.
    fn pages(&self, campaign: &Campaign, cache: Option<&PageCache>) -> Result<RenderedPages> {
        let Campaign { c, e, p, k } = *campaign;
        let r = self.redactor;
        let shared = shared_inputs(c, e, r);
        let cached = |i: usize, fp: &str| {
            let hit = cache.and_then(|cache| cache.pages.get(&key(campaign, i)));
            hit.filter(|old| old.fingerprint == fp)
                .map(|old| (old.page.clone(), old.headline.clone()))
        };
        // A build that keeps nothing sets each page's html aside on disk
        // until the header is known (see [`Sink::hold`]), once the pages
        // in memory hold more than [`KEEP_HTML`].
        let hold = cache.is_none() && !self.single_file;
        let in_memory = std::sync::atomic::AtomicUsize::new(0);
        let render = |store: &DataStore, i: usize| -> Result<Fresh> {
            let fingerprint = page_fingerprint(c, e, &shared, i);
            let (mut page, new, mut headline) = match cached(i, &fingerprint) {
                Some((page, headline)) => (page, false, Some(headline)),
                None => (Arc::new(page::render(c, e, store, i)?), true, None),
            };
            if cache.is_some() && headline.is_none() {
                // Kept with the page for the next build.
                headline = Some(super::index::headline(&page.html));
            }
            let over = |p: &Page| {
                let n = p.html.len();
                in_memory.fetch_add(n, std::sync::atomic::Ordering::Relaxed) + n > KEEP_HTML
            };
            let held = match Arc::get_mut(&mut page).filter(|p| hold && over(p)) {
                Some(p) => {
                    let held = self.sink.hold(p.html.as_bytes())?;
                    if held.is_some() {
                        headline = Some(super::index::headline(&p.html));
                        p.html = String::new();
                    }
                    held
                }
                None => None,
            };
            Ok(Fresh {
                fingerprint,
                page,
                new,
                held,
                headline,
            })
        };
        let numbered = r.snapshot();
        let state = numbering_state(r);
        let mut store = DataStore::new(e, r, p, k);
        seed_sources(&store, campaign, cache, &state);
        let count = c.meta.pages.len();
        let mut fresh: Vec<Result<_>> = (0..count)
            .into_par_iter()
            .map(|i| render(&store, i))
            .collect();
        if r.grew_since(&numbered) {
            // A page met a value no input held as such (a data value read
            // differently from its file, or one put together from fields):
            // number such values in page order, not in the order threads
            // happened to reach them, with data read afresh.
            r.restore(numbered);
            store = DataStore::new(e, r, p, k);
            seed_sources(&store, campaign, cache, &state);
            fresh = (0..count).map(|i| render(&store, i)).collect();
        }
        // The first failing page in order, whatever thread finished first.
        let fresh: Vec<Fresh> = fresh.into_iter().collect::<Result<_>>()?;
        // The first page showing a result card, looked for in page order
        // and no further (a held page's was read before it was set aside).
        let headline = fresh.par_iter().find_map_first(|f| match &f.headline {
            Some(known) => known.clone(),
            None => super::index::headline(&f.page.html),
        });
        let (mut fingerprints, mut pages, mut held) = (Vec::new(), Vec::new(), Vec::new());
        let (mut headlines, mut new) = (Vec::new(), Vec::new());
        for f in fresh {
            new.push(f.new);
            fingerprints.push(f.fingerprint);
            pages.push(f.page);
            held.push(f.held);
            headlines.push(f.headline);
        }
        let sources = data_read(&store, c, e, &pages);
        Ok(RenderedPages {
            pages,
            held,
            fingerprints,
            sources,
            headline: headline.unwrap_or_default(),
            headlines,
            new,
        })
    }

    /// The pages' typed figures matched against the data they read and
    /// the values they computed ([`crate::claims::check`]); the preview's
    /// `checks` keep each page's check for the next build.
    fn check_figures(
        &self,
        campaign: &Campaign,
        figures: &Figures,
        checks: Option<&crate::claims::CheckCache>,
    ) -> Result<(crate::claims::Records, crate::claims::Unmatched)> {
        let checked: Vec<_> = figures
            .pages
            .iter()
            .zip(figures.fingerprints)
            .map(|(&(file, figures), fp)| crate::claims::Checked {
                page: campaign.p.name(file),
                figures,
                key: Some(fp),
            })
            .collect();
        let strict = self.strict || campaign.c.meta.strict;
        let sources: Vec<_> = figures.sources.iter().map(|(_, s)| s.clone()).collect();
        // The data as read: which files and their verified bytes, and what
        // their published names and values depend on besides (the
        // campaign's metadata, the detector and the placeholder numbering).
        let data_key = checks.map(|_| {
            let c = campaign.c;
            let state = numbering_state(self.redactor);
            let mut text = format!("{}\0{}\0{state}\n", c.meta.id, c.meta_sha256);
            for (key, _) in figures.sources {
                let sha = campaign.e.verified_sha256(&key.0).unwrap_or("");
                text.push_str(&format!("{key:?}\0{sha}\n"));
            }
            crate::hash::sha256_bytes(text.as_bytes())
        });
        let cache = checks.zip(data_key.as_deref());
        let c = &campaign.c;
        // A build that keeps nothing sets the records aside until
        // audit.json is written.
        let hold = checks.is_none().then_some(self.sink);
        let header = figures.header;
        crate::claims::check(&c.dir, &checked, header, &sources, strict, cache, hold)
    }

    /// Each page and its downloads: templated, written and scanned at
    /// once, or taken from the last preview build when nothing they show
    /// changed.
    fn write_pages(
        &self,
        campaign: &Campaign,
        written: &Written,
        pages: Vec<Arc<Page>>,
        held: Vec<Option<Held>>,
        cache: Option<&mut PageCache>,
    ) -> Result<Vec<Emitted>> {
        let Written {
            header,
            fingerprints,
            digest,
        } = *written;
        // What a page's files depend on besides the page: theme, footer,
        // detector, the header (which reads the ledger of every page) and
        // the digest. Hashed once: the header lists every page's title, so
        // copying it into each page's fingerprint would grow with the
        // square of the page count.
        let around = crate::hash::sha256_bytes(
            format!(
                "{}:{}:{}:{header:?}:{digest}",
                self.theme.fingerprint,
                self.single_file,
                self.redactor.detector.fingerprint()
            )
            .as_bytes(),
        );
        let keep = cache.is_some();
        let cached = cache.as_deref();
        // Each page let go once written (the last reference, in a build
        // that keeps nothing): a campaign of many pages does not hold
        // every rendered page until the last is written. A page whose
        // files are kept comes back as the same files, which stay where
        // the cache has them.
        let outputs: Vec<Result<PageOutput>> = pages
            .into_par_iter()
            .zip(held)
            .enumerate()
            .map(|(i, (page, held))| {
                let fingerprint = (fingerprints[i].as_str(), around.as_str());
                let old = cached.and_then(|c| c.outputs.get(&key(campaign, i)));
                let files = match old.filter(|old| old.made_from(fingerprint)) {
                    Some(old) => return Ok((self.rewrite(campaign.p, old)?, None)),
                    None => {
                        let html = self.html(&page, &held)?;
                        let to_write = (&*page, html.as_ref());
                        self.write_page(campaign, header, to_write, (fingerprint, digest), keep)?
                    }
                };
                let emitted = files.files.iter().map(|f| f.emitted.clone()).collect();
                // Kept for the next build only (a build that keeps nothing
                // lets each page's files go here).
                Ok((emitted, keep.then(|| Arc::new(files))))
            })
            .collect();
        let mut emitted = Vec::new();
        let mut cache = cache;
        for (i, o) in outputs.into_iter().enumerate() {
            let (files, made) = o?;
            emitted.extend(files);
            if let Some((cache, made)) = cache.as_deref_mut().zip(made) {
                cache.outputs.insert(key(campaign, i), made);
            }
        }
        Ok(emitted)
    }

    /// A page's html, from where [`Sink::hold`] set it aside if it did.
    fn html<'p>(&self, page: &'p Page, held: &Option<Held>) -> Result<std::borrow::Cow<'p, str>> {
        match held {
            Some(h) => {
                let bytes = self.sink.take_held(h)?;
                let text = String::from_utf8(bytes).map_err(|_| {
                    crate::error::Error::Invalid(
                        "internal error: a page set aside came back as text that is not UTF-8"
                            .to_string(),
                    )
                })?;
                Ok(std::borrow::Cow::Owned(text))
            }
            None => Ok(std::borrow::Cow::Borrowed(&page.html)),
        }
    }

    /// A page's files as the last build wrote them, handed to the sink
    /// again (which writes them only if the served site lost them).
    fn rewrite(&self, p: &Public, old: &PageFiles) -> Result<Vec<Emitted>> {
        for f in &old.files {
            let rel = format!("{}/{}", p.meta.id, f.emitted.rel);
            self.sink.write_known(&rel, &f.bytes, &f.emitted.sha256)?;
        }
        Ok(old.files.iter().map(|f| f.emitted.clone()).collect())
    }

    /// Template a page, then write and scan it and its downloads; `keep`
    /// their bytes for the next build.
    fn write_page(
        &self,
        campaign: &Campaign,
        header: &Header,
        (page, content): (&Page, &str),
        ((page_inputs, around), digest): ((&str, &str), &str),
        keep: bool,
    ) -> Result<PageFiles> {
        let p = campaign.p;
        let (id, det) = (p.meta.id.as_str(), &self.redactor.detector);
        let mut ctx = base_context(
            p,
            header,
            &page.output,
            &page.title,
            self.theme,
            self.single_file,
        );
        ctx.insert("digest", digest);
        ctx.insert("content", content);
        let toc: Vec<_> = page.toc.iter().filter(|h| h.level >= 2).collect();
        ctx.insert("toc", &toc);
        let html = self.theme.render("page.html", &ctx)?;
        let shown = campaign.c.path(&page.file);
        refuse_literal_references(&shown.display().to_string(), &html)?;
        let html = html.into_bytes();
        let emitted = emit(self.sink, id, &page.output, &html, det)?;
        let kept = |bytes: &[u8]| -> Arc<[u8]> {
            if keep {
                bytes.into()
            } else {
                Arc::from([])
            }
        };
        let mut files = vec![KeptFile {
            bytes: kept(&html),
            emitted,
        }];
        for d in &page.downloads {
            let emitted = emit(self.sink, id, &d.path, &d.bytes, det)?;
            files.push(KeptFile {
                bytes: kept(&d.bytes),
                emitted,
            });
        }
        Ok(PageFiles {
            page_inputs: page_inputs.to_string(),
            around: around.to_string(),
            files,
        })
    }

    /// The ledger page: every entry the pages show, once.
    fn ledger_page(
        &self,
        p: &Public,
        h: &Header,
        ledger: &[LedgerEntry],
        digest: &str,
    ) -> Result<Emitted> {
        let title = "Failure ledger";
        let single = self.single_file;
        let mut ctx = base_context(p, h, layout::LEDGER_PAGE, title, self.theme, single);
        ctx.insert("digest", digest);
        ctx.insert("count", &ledger.len());
        ctx.insert("ledger", &crate::blocks::entries_table(ledger));
        let html = self.theme.render("ledger.html", &ctx)?;
        refuse_literal_references(&format!("{}/{}", p.meta.id, layout::LEDGER_PAGE), &html)?;
        let bytes = html.into_bytes();
        let det = &self.redactor.detector;
        emit(self.sink, &p.meta.id, layout::LEDGER_PAGE, &bytes, det)
    }
}

/// The pages without their typed figures, and the figures with each
/// page's file, when every page is held here alone (a build that keeps
/// nothing: the figures are checked while the pages are written, and at
/// 10,000 pages are 40 MB, let go once checked); the pages as they are
/// otherwise (the preview's are shared with its cache and keep theirs).
type Taken = (Vec<Arc<Page>>, Vec<(String, crate::claims::PageFigures)>);

fn taken_figures(mut pages: Vec<Arc<Page>>) -> std::result::Result<Taken, Vec<Arc<Page>>> {
    if !pages.iter_mut().all(|p| Arc::get_mut(p).is_some()) {
        return Err(pages);
    }
    let figures = pages
        .iter_mut()
        .filter_map(Arc::get_mut)
        .map(|p| (p.file.clone(), std::mem::take(&mut p.figures)))
        .collect();
    Ok((pages, figures))
}

/// A finished page must show no reference as literal text: one would mean
/// a number the reader cannot see (a field exhibit did not resolve).
/// `page` names the page (its Markdown file, or the generated page).
fn refuse_literal_references(page: &str, html: &str) -> Result<()> {
    match page::unresolved(html) {
        None => Ok(()),
        Some(literal) => crate::error::bail!(
            "`{page}` would publish the reference {literal} as text instead of its value; write references where they are resolved (see FORMAT.md, Inline references)"
        ),
    }
}

/// The html of a campaign's pages kept in memory until they are written;
/// the rest waits on disk ([`Sink::hold`]): a campaign of a few hundred
/// pages of prose and tables reads nothing back.
const KEEP_HTML: usize = 4 << 20;

/// A page's files as [`Target::write_pages`] wrote them, and the files to
/// keep for the next build when they were made afresh (`None`: the
/// cache's are the same, or the build keeps nothing).
type PageOutput = (Vec<Emitted>, Option<Arc<PageFiles>>);

/// What every page of a campaign is written with besides itself.
struct Written<'a> {
    header: &'a Header,
    /// What each page was rendered from.
    fingerprints: &'a [String],
    digest: &'a str,
}

/// What the typed-figure check reads of a campaign's rendered pages.
struct Figures<'a> {
    /// Each page's file and typed figures, in page order.
    pages: Vec<(&'a str, &'a crate::claims::PageFigures)>,
    fingerprints: &'a [String],
    header: &'a crate::claims::PageFigures,
    sources: &'a [(SourceKey, Arc<crate::data::Source>)],
}

/// A campaign's pages as rendered (see [`Target::pages`]): the pages,
/// their fingerprints, which were rendered afresh, and the data they read.
struct RenderedPages {
    pages: Vec<Arc<Page>>,
    /// Each page's html where it was set aside ([`Sink::hold`]); its
    /// `html` is then empty.
    held: Vec<Option<Held>>,
    /// What each page was rendered from.
    fingerprints: Vec<String>,
    /// The data files the pages read.
    sources: Vec<(SourceKey, Arc<crate::data::Source>)>,
    /// The campaign's headline figures ([`super::index::headline`]).
    headline: Vec<super::index::Figure>,
    /// Each page's result card, where it was read.
    headlines: Vec<Option<Headline>>,
    /// Which pages were rendered afresh (the others came from the cache).
    new: Vec<bool>,
}

/// One page from [`Target::pages`].
struct Fresh {
    /// What it was rendered from.
    fingerprint: String,
    page: Arc<Page>,
    /// Rendered afresh, not taken from the preview's last build.
    new: bool,
    /// Where its html was set aside.
    held: Option<Held>,
    /// Its result card's first items, if it shows one (`Some(None)`: it
    /// shows none). Read when its html is set aside and in the preview
    /// (kept with the page); otherwise `None`, and the pages are read in
    /// order until one has a card.
    headline: Option<Headline>,
}

/// A page's result card's first items, if it shows one.
type Headline = Option<Vec<super::index::Figure>>;

/// What a data file's loaded form depends on: its bytes, the campaign's
/// metadata, the detector and the placeholder numbering. `None` for a
/// glob (its members may come and go), which is loaded afresh.
fn source_fingerprint(campaign: &Campaign, key: &SourceKey, state: &str) -> Option<String> {
    let Campaign { c, e, .. } = *campaign;
    let sha = e.verified_sha256(&key.0)?;
    Some(format!(
        "{}\0{}\0{:?}\0{sha}\0{}\0{state}",
        c.meta.id, key.0, key.1, c.meta_sha256
    ))
}

/// The detector and the placeholder numbering, as a fingerprint.
fn numbering_state(r: &Redactor) -> String {
    format!("{}:{}", r.detector.fingerprint(), r.digest())
}

/// Seed `store` with the data files an earlier preview build loaded from
/// the same inputs.
fn seed_sources(store: &DataStore, campaign: &Campaign, cache: Option<&PageCache>, state: &str) {
    let Some(cache) = cache else {
        return;
    };
    for (fp, (key, source)) in &cache.sources {
        if source_fingerprint(campaign, key, state).as_ref() == Some(fp) {
            store.seed(key.clone(), source.clone());
        }
    }
}

/// Keep this build's data files for the next preview build (replacing the
/// campaign's earlier ones, so the cache does not grow).
fn keep_sources(
    cache: &mut PageCache,
    campaign: &Campaign,
    loaded: &[(SourceKey, Arc<crate::data::Source>)],
    state: &str,
) {
    let prefix = format!("{}\0", campaign.c.meta.id);
    cache.sources.retain(|fp, _| !fp.starts_with(&prefix));
    for (key, source) in loaded {
        if let Some(fp) = source_fingerprint(campaign, key, state) {
            cache.sources.insert(fp, (key.clone(), source.clone()));
        }
    }
}

/// The campaign's data, for typed figures to be checked against: every
/// file the pages read (loaded while rendering, or again for pages taken
/// from the cache) and every file under `data/`. Read only when some page,
/// or a string of campaign.json's header, has a typed figure.
fn data_read(
    store: &DataStore,
    c: &crate::campaign::Campaign,
    e: &Evidence,
    pages: &[Arc<Page>],
) -> Vec<(SourceKey, Arc<crate::data::Source>)> {
    let m = &c.meta;
    let header = [&m.title, &m.state, &m.scope, &m.decision]
        .into_iter()
        .chain(&m.summary)
        .chain(m.pages.iter().map(|p| &p.title));
    let header_typed = header
        .into_iter()
        .any(|t| t.bytes().any(|b| b.is_ascii_digit()));
    if !header_typed && pages.iter().all(|p| p.figures.typed.is_empty()) {
        return Vec::new();
    }
    let named = pages.iter().flat_map(|p| {
        let blocks = p.blocks.iter().filter_map(|b| b.source.as_deref());
        blocks.chain(p.figures.sources.iter().map(String::as_str))
    });
    let data = e.files.iter().map(|f| f.path.as_str());
    let named = named.chain(data.filter(|f| f.starts_with("data/")));
    for path in named {
        // A page's source was loaded (or its failure reported) as it was
        // rendered; a file under data/ in no format exhibit reads is not
        // data.
        let _ = store.load(path);
    }
    store.loaded()
}

fn key(campaign: &Campaign, i: usize) -> PageKey {
    (campaign.c.meta.id.clone(), i)
}

/// The ledger entries of all pages, each once, in page order.
fn ledger(pages: &[Arc<Page>]) -> Vec<LedgerEntry> {
    let mut seen = BTreeSet::new();
    pages
        .iter()
        .flat_map(|p| p.ledger.iter())
        .filter(|l| seen.insert(l.id.clone()))
        .cloned()
        .collect()
}

/// What every page of a campaign reads besides its own Markdown: the
/// campaign's metadata, every file that is not a page (data, artifacts),
/// and the placeholder numbering.
fn shared_inputs(c: &crate::campaign::Campaign, e: &Evidence, r: &Redactor) -> String {
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
fn page_fingerprint(c: &crate::campaign::Campaign, e: &Evidence, shared: &str, i: usize) -> String {
    let file = &c.meta.pages[i].file;
    format!(
        "{shared}:{i}:{file}:{}",
        e.verified_sha256(file).unwrap_or("")
    )
}
