//! What a build may keep for the next one: owned by the caller (the
//! preview server) and handed to [`super::build_with`]; a one-shot build
//! has none, and no process-wide state stands in for it.

use super::pages::Emitted;
use crate::evidence::HashCache;
use crate::page::Page;
use crate::public::ScanCache;
use crate::sink::Files;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Everything kept between builds of one preview server.
#[derive(Default)]
pub(crate) struct BuildCache {
    /// Hashes of files unchanged since they were last hashed.
    pub(crate) hashes: HashCache,
    /// Each campaign's walk, while none of its folders changed.
    pub(crate) listings: crate::listing::Listings,
    /// The campaigns' manifests as last parsed.
    pub(crate) manifests: crate::manifest::KeptManifests,
    /// Input scans by detector and file hash.
    pub(crate) scans: ScanCache,
    /// Files whose parse for keyed secrets found nothing.
    pub(crate) keyless: crate::copies::Keyless,
    /// Rendered pages and their written files.
    pub(super) pages: PageCache,
    /// The manifest page's rows, a chunk at a time.
    pub(crate) rows: super::write::RowsCache,
    /// Chunks of the written site the rescan found clean.
    pub(crate) clean: crate::redact::scan::CleanChunks,
    /// Pieces of the written site's markup the output gate passed.
    pub(crate) gated: crate::redact::scan::CleanChunks,
    /// The templates as parsed, by the bytes of the theme's files.
    pub(crate) theme: crate::render::KeptTheme,
    /// Pages rendered afresh by the last build (the others were reused).
    pub(crate) rendered: usize,
    /// What the last build wrote, so the next writes only changes.
    last: Option<Published>,
}

/// A site as the last preview build left it.
struct Published {
    out: PathBuf,
    /// Fingerprint of the detector that scanned it.
    detector: String,
    /// Shared with the next build's sink, not copied (thousands of paths).
    files: Arc<Files>,
}

/// A rendered page, by (campaign id, page index): the fingerprint of its
/// inputs and the page.
pub(super) type PageKey = (String, usize);

/// Pages rendered by earlier preview builds, reused when nothing they
/// depend on changed (see [`super::pages`]'s fingerprints).
#[derive(Default)]
pub(super) struct PageCache {
    pub(crate) pages: HashMap<PageKey, Rendering>,
    /// A page's files as written (page, downloads) and their scans, by the
    /// fingerprint of everything that went into them.
    /// Shared with the build that takes them: a page whose files are
    /// unchanged costs no copy of them.
    pub(crate) outputs: HashMap<PageKey, Arc<PageFiles>>,
    /// Data files as the last build loaded them, by the fingerprint of
    /// what they were read from (see `pages::source_fingerprint`): pages
    /// taken from the cache load none, and the typed-figure check reads
    /// them all.
    pub(crate) sources: HashMap<String, (crate::data::SourceKey, Arc<crate::data::Source>)>,
    /// Each page's typed-figure check, and the data's values.
    pub(crate) checks: crate::claims::CheckCache,
}

/// A page and the fingerprint of what it was rendered from.
#[derive(Clone)]
pub(super) struct Rendering {
    pub(crate) fingerprint: String,
    pub(crate) page: Arc<Page>,
    /// Its result card's first items ([`super::index::headline`]).
    pub(crate) headline: Option<Vec<super::index::Figure>>,
}

/// A page's written files and the fingerprint of what went into them:
/// the page's inputs and what every page of the campaign is written with
/// (kept apart, so a save compares them without putting them together
/// for each page).
#[derive(Clone)]
pub(super) struct PageFiles {
    pub(crate) page_inputs: String,
    pub(crate) around: String,
    pub(crate) files: Vec<KeptFile>,
}

impl PageFiles {
    /// Were these files written from `(page inputs, around)`?
    pub(super) fn made_from(&self, (page_inputs, around): (&str, &str)) -> bool {
        self.page_inputs == page_inputs && self.around == around
    }
}

/// One written file: its bytes (kept for the preview) and what was written.
#[derive(Clone)]
pub(super) struct KeptFile {
    pub(crate) bytes: Arc<[u8]>,
    pub(crate) emitted: Emitted,
}

impl BuildCache {
    /// The files OUT holds from the last build, when a preview build goes
    /// to the same folder with the same detector: only changes are written.
    pub(super) fn served(
        &self,
        opts: &super::BuildOptions,
        out_abs: &Path,
        detector: &str,
    ) -> Option<Arc<Files>> {
        self.last
            .as_ref()
            .filter(|l| opts.preview && l.out == out_abs && l.detector == detector)
            .filter(|_| opts.out.join(crate::layout::MARKER).is_file())
            .map(|l| Arc::clone(&l.files))
    }

    /// Record the site a build swapped in; `None` when OUT may be part
    /// old, part new (the next build writes it whole).
    pub(super) fn published(&mut self, out_abs: &Path, detector: String, files: Option<Files>) {
        self.last = files.map(|files| Published {
            out: out_abs.to_path_buf(),
            detector,
            files: Arc::new(files),
        });
    }
}
