//! The publication digest: the one value a reader cites for a published
//! campaign. A page cannot hold the hash of a list that names the page's
//! own hash, so the digest is the SHA-256 of the campaign's SHA256SUMS
//! with the lines of the files that show it left out: every `.html` file
//! (the pages, the ledger and manifest pages, the single file) and
//! audit.json. It covers every published copy, the published manifest and
//! every data download. With coreutils:
//!
//! ```text
//! grep -v -E '\.html$|^[0-9a-f]{64}  audit\.json$' SHA256SUMS | sha256sum
//! ```

use crate::copies::Copies;
use crate::hash::sha256_bytes;
use crate::layout;
use crate::manifest;
use crate::page::Page;
use sha2::{Digest as _, Sha256};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What the preview shows in the digest's place. A digest covers every
/// published file, so each save would change it on every page, and every
/// page would be written, gated and scanned again; a draft being edited
/// has no digest to cite anyway. `exhibit build` computes it.
pub(crate) const IN_PREVIEW: &str = "not computed in the preview (exhibit build computes it)";

/// What the digest is written with: `sha256:` and 64 hex digits.
pub(crate) const PREFIX: &str = "sha256:";

/// A SHA256SUMS line the digest leaves out: a file that shows the digest.
/// `line` is the line as written, without its line break.
fn left_out(line: &str) -> bool {
    if line.ends_with(".html") {
        return true;
    }
    line.split_once("  ").is_some_and(|(hash, path)| {
        path == layout::AUDIT
            && hash.len() == 64
            && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// The digest of a SHA256SUMS file's text, as the documented shell
/// command computes it.
pub(crate) fn of_sums_text(text: &str) -> String {
    let mut h = Sha256::new();
    for line in text.split_inclusive('\n') {
        if !left_out(line.strip_suffix('\n').unwrap_or(line)) {
            h.update(line.as_bytes());
        }
    }
    format!("{PREFIX}{}", crate::hash::hex(&h.finalize()))
}

/// The digest of SHA256SUMS entries (published path -> SHA-256).
pub(crate) fn of_sums(sums: &BTreeMap<String, String>) -> String {
    let text: String = sums
        .iter()
        .map(|(p, h)| manifest::sums_line(h, p))
        .collect();
    of_sums_text(&text)
}

/// A campaign's digest from what it publishes besides its pages: the
/// copies and the pages' data downloads. Known before any page is
/// templated, so every page can show it; the write stage checks it
/// against the SHA256SUMS it writes.
pub(crate) fn of_campaign(copies: &Copies, pages: &[Arc<Page>]) -> String {
    let mut sums = BTreeMap::new();
    for p in pages {
        for d in &p.downloads {
            sums.insert(d.path.clone(), sha256_bytes(&d.bytes));
        }
    }
    for f in &copies.files {
        sums.insert(f.path.clone(), f.public_sha256().to_string());
    }
    of_sums(&sums)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_and_audit_are_left_out() {
        let h = "a".repeat(64);
        let kept = format!("{h}  data/run.log\n{h}  downloads/t.csv\n{h}  x/audit.json\n");
        let all = format!(
            "{h}  audit.json\n{h}  data/run.log\n{h}  downloads/t.csv\n{h}  index.html\n{h}  notes/a.html\n{h}  x/audit.json\n"
        );
        assert_eq!(
            of_sums_text(&all),
            format!("{PREFIX}{}", sha256_bytes(kept.as_bytes()))
        );
        assert_eq!(
            of_sums_text(""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
