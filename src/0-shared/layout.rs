//! The names of what a build writes: the marker that lets a build replace
//! a folder, the checksum and audit files, the generated pages, and the
//! hidden folders beside OUT. The write stage ([`crate::site`]) and the
//! stages that read a site back ([`crate::verify`], [`crate::seal`],
//! [`crate::serve`]) take them from here, not from each other.

use crate::error::Result;
use std::path::{Path, PathBuf};

/// Marks a folder as written by exhibit, so a build may replace it.
pub(crate) const MARKER: &str = ".exhibit-site";

/// What the marker file says.
pub(crate) const MARKER_TEXT: &[u8] =
    b"Written by exhibit. `exhibit build` replaces this folder whole.\n";

/// The checksum list of a site and of each campaign folder (also a
/// campaign's manifest format).
pub(crate) const SUMS: &str = "SHA256SUMS";

/// A campaign's machine-readable record of what was verified and published.
pub(crate) const AUDIT: &str = "audit.json";

/// The site's (and each campaign's first page's) entry page.
pub(crate) const INDEX_PAGE: &str = "index.html";

/// The site's Atom feed of campaigns, beside the index.
pub(crate) const FEED: &str = "feed.xml";

/// A campaign's file list page.
pub(crate) const MANIFEST_PAGE: &str = "manifest.html";

/// A campaign's failure ledger page.
pub(crate) const LEDGER_PAGE: &str = "ledger.html";

/// Files every campaign folder gets besides its pages and copies.
pub(crate) const GENERATED: [&str; 4] = [MANIFEST_PAGE, LEDGER_PAGE, AUDIT, SUMS];

/// Beside OUT: the site being written, swapped in when everything passed.
pub(crate) const STAGING: &str = "exhibit-staging";

/// Beside OUT: the previous site while the new one is swapped in.
pub(crate) const OLD: &str = "exhibit-old";

/// Beside OUT (preview): the files a save replaced, until the files it
/// writes last are in place too (see [`written_last`]).
pub(crate) const BEFORE: &str = "exhibit-before";

/// A hidden folder next to `out`: `.NAME.TAG`.
pub(crate) fn sibling(out: &Path, tag: &str) -> Result<PathBuf> {
    let name = out.file_name().ok_or_else(|| {
        crate::error::Error::Invalid(format!("output `{}` has no folder name", out.display()))
    })?;
    Ok(parent_of(out).join(format!(".{}.{tag}", name.to_string_lossy())))
}

/// The folder holding `p`: `.` for a bare name.
pub(crate) fn parent_of(p: &Path) -> &Path {
    p.parent()
        .filter(|x| !x.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The files a build writes last, as they list or describe all the others
/// (site-relative, `/`-separated): the root SHA256SUMS and each campaign's
/// SHA256SUMS, audit.json and manifest page. The preview announces a save
/// before these are in place, and holds requests for them until they are.
/// Names are compared ignoring ASCII case, as a case-insensitive disk
/// would serve them.
pub(crate) fn written_last(rel: &str) -> bool {
    let is = |name: &str, of: &[&str]| of.iter().any(|n| n.eq_ignore_ascii_case(name));
    match rel.split_once('/') {
        None => is(rel, &[SUMS]),
        Some((_, name)) => is(name, &[SUMS, AUDIT, MANIFEST_PAGE]),
    }
}
