//! First stage: find the campaigns under a root folder and load each
//! `campaign.json` into a checked [`Campaign`].

use crate::error::InputError;
use crate::error::{bail, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub(crate) const META_NAME: &str = "campaign.json";

/// Output names the build writes in a campaign folder; no page may take them.
pub(crate) const RESERVED_PAGES: &[&str] = &["index", "manifest", "ledger"];

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Meta {
    pub(crate) id: String,
    pub(crate) title: String,
    pub(crate) date: String,
    pub(crate) state: String,
    pub(crate) scope: String,
    pub(crate) decision: String,
    #[serde(default)]
    pub(crate) summary: Option<String>,
    #[serde(default = "default_pages")]
    pub(crate) pages: Vec<PageRef>,
    #[serde(default)]
    pub(crate) redaction: crate::redact::Policy,
    /// Symlinks inside the campaign (exact paths) that may be published,
    /// as copies of what they point to; any other symlink is refused.
    #[serde(default)]
    pub(crate) symlinks: Vec<String>,
    /// Consistency checks that must hold on the campaign's data.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) checks: Vec<Check>,
    /// A typed figure that matches no data fails the build, as with
    /// `exhibit build --strict`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) strict: bool,
}

/// A consistency check: two values that must compare as stated, or the
/// build stops (`{"name": ..., "equal": [A, B]}`, `"at_most"`,
/// `"at_least"`; `tolerance` with `equal`).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Check {
    pub(crate) name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) equal: Option<[Operand; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) at_most: Option<[Operand; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) at_least: Option<[Operand; 2]>,
    /// How far apart two `equal` values may be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tolerance: Option<f64>,
}

/// One side of a check: a number, or a reference `=FILE#EXPR`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
pub(crate) enum Operand {
    Number(f64),
    Reference(String),
}

/// How a check compares its two values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Relation {
    Equal,
    AtMost,
    AtLeast,
}

impl Relation {
    pub(crate) fn holds(self, a: f64, b: f64, tolerance: f64) -> bool {
        match self {
            Relation::Equal => (a - b).abs() <= tolerance,
            Relation::AtMost => a <= b,
            Relation::AtLeast => a >= b,
        }
    }

    pub(crate) fn words(self) -> &'static str {
        match self {
            Relation::Equal => "equal to",
            Relation::AtMost => "at most",
            Relation::AtLeast => "at least",
        }
    }
}

impl Check {
    /// The relation and its two operands (checked at load: exactly one).
    pub(crate) fn relation(&self) -> Option<(Relation, &[Operand; 2])> {
        [
            (Relation::Equal, &self.equal),
            (Relation::AtMost, &self.at_most),
            (Relation::AtLeast, &self.at_least),
        ]
        .into_iter()
        .find_map(|(r, o)| o.as_ref().map(|o| (r, o)))
    }

    /// Why this check is malformed, if it is.
    fn problem(&self) -> Option<String> {
        let given = [&self.equal, &self.at_most, &self.at_least]
            .iter()
            .filter(|o| o.is_some())
            .count();
        if self.name.trim().is_empty() {
            return Some("a check needs a `name`".into());
        }
        if given != 1 {
            return Some(format!(
                "check `{}` needs exactly one of `equal`, `at_most` or `at_least`",
                self.name
            ));
        }
        match self.tolerance {
            Some(t) if self.equal.is_none() => {
                return Some(format!(
                    "check `{}`: `tolerance` ({t}) goes with `equal` only",
                    self.name
                ))
            }
            Some(t) if !(t >= 0.0 && t.is_finite()) => {
                return Some(format!(
                    "check `{}`: `tolerance` must be a number of at least 0",
                    self.name
                ))
            }
            _ => {}
        }
        let (_, operands) = self.relation()?;
        operands.iter().find_map(|o| match o {
            Operand::Number(_) => None,
            Operand::Reference(r) => {
                reference_problem(r).map(|m| format!("check `{}`: `{r}`: {m}", self.name))
            }
        })
    }
}

/// Why `=FILE#EXPR` is not a reference a check can read.
fn reference_problem(r: &str) -> Option<String> {
    let Some(spec) = r.strip_prefix('=') else {
        return Some("expected a number or a reference `=FILE#EXPR`".into());
    };
    let Some((_, expr)) = spec.split_once('#') else {
        return Some("expected `=FILE#EXPR`".into());
    };
    match crate::expr::Slot::parse(expr) {
        Err(m) => Some(m),
        Ok(s) if s.format.is_some() => {
            Some("a check compares numbers: the reference takes no format".into())
        }
        Ok(_) => None,
    }
}

/// The offset in campaign.json's `text` where the string `value` of
/// `key` is written (its opening quote), found after the key; serde_json
/// gives no positions for values. Falls back to the key, then the start.
pub(crate) fn value_offset(text: &str, key: &str, value: &str) -> usize {
    let key_at = text.find(&format!("\"{key}\"")).unwrap_or(0);
    let written = serde_json::to_string(value).unwrap_or_default();
    text[key_at..]
        .find(&written)
        .map(|i| key_at + i)
        .or_else(|| text.find(&written))
        .unwrap_or(key_at)
}

/// The offset in `text` of byte `at` of the string `value` of `key`.
pub(crate) fn offset_in_value(text: &str, key: &str, value: &str, at: usize) -> usize {
    let start = value_offset(text, key, value);
    // The value's text before `at`, as JSON writes it (escapes included).
    let before = serde_json::to_string(&value[..at.min(value.len())]).unwrap_or_default();
    start + before.len().saturating_sub(1)
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PageRef {
    pub(crate) file: String,
    pub(crate) title: String,
}

fn default_pages() -> Vec<PageRef> {
    vec![PageRef {
        file: "index.md".into(),
        title: "Overview".into(),
    }]
}

/// A campaign folder with its loaded metadata.
#[derive(Debug, Clone)]
pub struct Campaign {
    pub(crate) dir: PathBuf,
    pub(crate) meta: Meta,
    /// The raw bytes of campaign.json, checked against the manifest later.
    pub(crate) meta_sha256: String,
    /// campaign.json as written, for positions in later messages.
    pub(crate) text: String,
}

impl Campaign {
    /// Path of a campaign file for messages (as the user named the root).
    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }
}

/// Every campaign under `root`: the root itself, or its immediate subfolders.
/// `skip` is a folder (the output) never to be taken for a campaign.
pub(crate) fn discover(root: &Path, skip: Option<&Path>) -> Result<Vec<Campaign>> {
    if !root.is_dir() {
        bail!("`{}` is not a folder", root.display());
    }
    if root.join(META_NAME).is_file() {
        return Ok(vec![load(root)?]);
    }
    let mut dirs = Vec::new();
    let entries =
        std::fs::read_dir(root).map_err(|e| crate::error::Error::failed("list", root, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| crate::error::Error::failed("list", root, e))?;
        let path = entry.path();
        if skip.is_some_and(|s| same_path(s, &path)) {
            continue;
        }
        if path.is_dir() && path.join(META_NAME).is_file() {
            dirs.push(path);
        }
    }
    if dirs.is_empty() {
        bail!(
            "no campaign found in `{}`: it holds no {META_NAME}, and neither does any folder directly inside it",
            root.display()
        );
    }
    dirs.sort();
    let campaigns = dirs.iter().map(|d| load(d)).collect::<Result<Vec<_>>>()?;
    for (i, c) in campaigns.iter().enumerate() {
        if let Some(other) = campaigns[..i].iter().find(|o| o.meta.id == c.meta.id) {
            bail!(
                "campaigns `{}` and `{}` share the id `{}`",
                other.dir.display(),
                c.dir.display(),
                c.meta.id
            );
        }
    }
    Ok(campaigns)
}

fn same_path(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Load and check `dir/campaign.json`.
pub fn load(dir: &Path) -> Result<Campaign> {
    let path = dir.join(META_NAME);
    let bytes = crate::fsx::read(&path)?;
    let meta_sha256 = crate::hash::sha256_bytes(&bytes);
    let text = String::from_utf8(bytes).map_err(|e| {
        // Positioned at the first byte that is not UTF-8.
        let offset = e.utf8_error().valid_up_to();
        let lossy = String::from_utf8_lossy(e.as_bytes()).into_owned();
        InputError::at_offset(
            &path,
            &lossy,
            offset,
            format!("{META_NAME} is not valid UTF-8"),
        )
    })?;
    let meta: Meta =
        serde_json::from_str(&text).map_err(|e| InputError::json(&path, &text, 0, &e))?;
    check(&path, &text, &meta)?;
    Ok(Campaign {
        dir: dir.to_path_buf(),
        meta,
        meta_sha256,
        text,
    })
}

/// Field checks serde cannot express; positioned at the field's key.
fn check(path: &Path, text: &str, meta: &Meta) -> Result<()> {
    let at = |key: &str, msg: String| -> crate::error::Error {
        let offset = text.find(&format!("\"{key}\"")).unwrap_or(0);
        InputError::at_offset(path, text, offset, msg).into()
    };
    let id_ok = meta
        .id
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && meta
            .id
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric());
    if !id_ok {
        return Err(at("id", format!("id `{}` must be lowercase letters, digits and `-`, starting with a letter or digit", meta.id)));
    }
    if is_reserved_device(&meta.id) {
        return Err(at(
            "id",
            format!(
                "id `{}` is a reserved device name on Windows; the campaign folder could not be opened there",
                meta.id
            ),
        ));
    }
    if !is_date(&meta.date) {
        return Err(at(
            "date",
            format!("date `{}` must be YYYY-MM-DD", meta.date),
        ));
    }
    for (key, value) in [
        ("title", &meta.title),
        ("state", &meta.state),
        ("scope", &meta.scope),
        ("decision", &meta.decision),
    ] {
        if value.trim().is_empty() {
            return Err(at(key, format!("`{key}` must not be empty")));
        }
    }
    if meta.pages.is_empty() {
        return Err(at("pages", "`pages` must list at least one page".into()));
    }
    let mut seen = std::collections::HashSet::new();
    for (i, page) in meta.pages.iter().enumerate() {
        let stem = page.file.strip_suffix(".md").unwrap_or("");
        if stem.is_empty() || stem.contains(['/', '\\']) || stem.starts_with('.') {
            return Err(at(
                "pages",
                format!(
                    "page `{}` must be a `.md` file directly in the campaign folder",
                    page.file
                ),
            ));
        }
        if i > 0 && RESERVED_PAGES.contains(&stem) {
            return Err(at(
                "pages",
                format!(
                    "page `{}` would be written over the generated `{stem}.html`; rename it",
                    page.file
                ),
            ));
        }
        if !seen.insert(page.file.as_str()) {
            return Err(at("pages", format!("page `{}` is listed twice", page.file)));
        }
    }
    for c in &meta.checks {
        if let Some(m) = c.problem() {
            let offset = value_offset(text, "checks", &c.name);
            return Err(InputError::at_offset(path, text, offset, m).into());
        }
    }
    meta.redaction.check_patterns(path, text)?;
    Ok(())
}

/// Why a relative `/` path cannot be published under one meaning on every
/// disk and archive: a component Windows reserves or cannot hold. The
/// reason names the component.
pub(crate) fn name_problem(path: &str) -> Option<String> {
    for part in path.split('/') {
        if let Some(c) = part.chars().find(|c| c.is_control()) {
            return Some(format!(
                "`{}` holds the control character U+{:04X}",
                part.escape_debug(),
                u32::from(c)
            ));
        }
        if let Some(c) = part.chars().find(|c| WINDOWS_FORBIDDEN.contains(c)) {
            return Some(format!(
                "`{part}` holds `{c}`, which Windows does not allow in a file name"
            ));
        }
        if part.ends_with('.') && part != "." && part != ".." {
            return Some(format!(
                "`{part}` ends with a dot, which Windows drops from a file name"
            ));
        }
        if part.ends_with(' ') {
            return Some(format!(
                "`{part}` ends with a space, which Windows drops from a file name"
            ));
        }
        if is_reserved_device(part) {
            return Some(format!(
                "`{part}` is a reserved device name on Windows (whatever its extension)"
            ));
        }
    }
    None
}

/// Characters Windows refuses in a file name (`/` separates components;
/// `\\` would be read as a separator there).
const WINDOWS_FORBIDDEN: &[char] = &['<', '>', ':', '"', '|', '?', '*', '\\'];

/// `CON`, `nul.txt`, `COM1.log`: Windows opens the device, not the file,
/// whatever the case and extension (and spaces before the extension).
pub(crate) fn is_reserved_device(part: &str) -> bool {
    let stem = part.split('.').next().unwrap_or("").trim_end_matches(' ');
    // Every such name starts with one of these letters: most names are
    // ruled out without an upper-case copy.
    if let Some(c) = stem.chars().next().filter(char::is_ascii) {
        if !matches!(c.to_ascii_uppercase(), 'C' | 'P' | 'A' | 'N' | 'L') {
            return false;
        }
    }
    let upper = stem.to_uppercase();
    match upper.as_str() {
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$" => true,
        _ => {
            let mut chars = upper.chars();
            let head: String = chars.by_ref().take(3).collect();
            let rest: Vec<char> = chars.collect();
            (head == "COM" || head == "LPT")
                && rest.len() == 1
                && matches!(rest[0], '0'..='9' | '\u{b9}' | '\u{b2}' | '\u{b3}')
        }
    }
}

/// The form two names share when a case-insensitive or normalising disk
/// would take them for one: NFC, then lower case. A name already in that
/// form (lower-case ASCII, most names) is returned as it is, not copied.
pub(crate) fn fold_name(name: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    use unicode_normalization::UnicodeNormalization;
    if name.is_ascii() {
        // ASCII is its own NFC: the same answer without the normaliser.
        if !name.bytes().any(|b| b.is_ascii_uppercase()) {
            return Cow::Borrowed(name);
        }
        return Cow::Owned(name.to_ascii_lowercase());
    }
    Cow::Owned(name.nfc().collect::<String>().to_lowercase())
}

/// How two different names that fold alike differ, for messages.
pub(crate) fn how_alike(a: &str, b: &str) -> &'static str {
    use unicode_normalization::UnicodeNormalization;
    if a.nfc().eq(b.nfc()) {
        "differs only in Unicode normalisation"
    } else {
        "differs only in case"
    }
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if !(digits(0..4) && digits(5..7) && digits(8..10)) {
        return false;
    }
    let month: u32 = s[5..7].parse().unwrap_or(0);
    let day: u32 = s[8..10].parse().unwrap_or(0);
    (1..=12).contains(&month) && (1..=31).contains(&day)
}

/// File extensions published under their own name: types no browser runs
/// (text shown as text, images, PDF, archives). This is an allow-list:
/// every other name (`.html`, `.shtml`, `.xht`, `.svgz`, `.xsl`, `.mht`,
/// `.js`, an unknown type, a name with no extension, a dotfile such as
/// `.htaccess`) is published with `.txt` appended, so that no browser or
/// server executes it, and pages link to that name.
const INERT: &[&str] = &[
    "txt", "log", "out", "err", "json", "jsonl", "ndjson", "csv", "tsv", "md", "png", "jpg",
    "jpeg", "gif", "webp", "avif", "pdf", "zip", "tar", "tgz", "gz", "zst", "xz", "bz2", "parquet",
    "sha256",
];

/// Compression suffixes: a server may send `x.html.gz` as HTML with a
/// gzip encoding, so the name before them must be inert too.
const COMPRESSED: &[&str] = &["gz", "zst", "xz", "bz2"];

/// Is the file name `name` (no folders) safe to publish as it is?
fn inert_name(name: &str) -> bool {
    let ext = |n: &str| {
        std::path::Path::new(n)
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
    };
    let Some(last) = ext(name) else {
        return false;
    };
    if !INERT.contains(&last.as_str()) {
        return false;
    }
    if !COMPRESSED.contains(&last.as_str()) {
        return true;
    }
    let inner = &name[..name.len() - last.len() - 1];
    ext(inner).is_some_and(|e| INERT.contains(&e.as_str()) && !COMPRESSED.contains(&e.as_str()))
}

/// The path under which a campaign file is published in the site.
pub(crate) fn published_name(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    if path.ends_with('/') || inert_name(name) {
        path.to_string()
    } else {
        format!("{path}.txt")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_found_where_written() {
        let text = "{\"title\": \"x\",\n \"pages\": [{\"title\": \"a \\\"q\\\" `=d#/n`\"}]}";
        let value = "a \"q\" `=d#/n`";
        let at = value.find('`').unwrap();
        let offset = offset_in_value(text, "pages", value, at);
        assert_eq!(&text[offset..offset + 6], "`=d#/n");
        // A value not written as serde writes it falls back to its key.
        assert_eq!(
            value_offset(text, "pages", "absent"),
            text.find("\"pages\"").unwrap()
        );
    }

    #[test]
    fn dates() {
        assert!(is_date("2026-09-08"));
        assert!(!is_date("2026-13-08"));
        assert!(!is_date("26-09-08"));
    }

    #[test]
    fn windows_names() {
        for bad in [
            "CON",
            "nul.txt",
            "a/COM1",
            "lpt9.log",
            "com\u{b9}",
            "a:b",
            "x.",
            "x ",
            "q?",
            "<a>",
            "p|q",
            "s*",
            "\"q\"",
            "a\tb",
            "a\\b",
        ] {
            assert!(name_problem(bad).is_some(), "{bad:?}");
        }
        for good in ["console.txt", "com10", "a/b.c", "nullable", ".hidden"] {
            assert_eq!(name_problem(good), None, "{good:?}");
        }
        assert_eq!(
            fold_name("Re\u{301}sume\u{301}"),
            fold_name("r\u{e9}sum\u{e9}")
        );
    }

    #[test]
    fn only_inert_types_keep_their_name() {
        for keep in [
            "a/run.log",
            "r.JSON",
            "x.csv",
            "p.png",
            "logs.tar.gz",
            "d/.x/a.md",
        ] {
            assert_eq!(published_name(keep), keep);
        }
        for active in [
            "a.html",
            "a.shtml",
            "a.xht",
            "a.svgz",
            "a.xsl",
            "a.mht",
            ".htaccess",
            "Makefile",
            "a.html.gz",
            "a.gz",
            "a.js",
            "a.",
            "d/.txt",
        ] {
            assert_eq!(published_name(active), format!("{active}.txt"));
        }
    }
}
