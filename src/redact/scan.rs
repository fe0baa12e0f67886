//! Reading files for redaction: text in chunks that end at line breaks (so
//! memory stays flat on huge logs and no finding is cut in two), binary files
//! told apart, and whole folders scanned in parallel into a report of
//! file:line:column and category, never the value.

use super::{Category, Detector, Hit};
use anyhow::Result;
use rayon::prelude::*;
use serde::Serialize;
use std::borrow::Cow;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Target chunk size; a chunk may run longer to keep a PEM block whole.
pub const CHUNK: usize = 4 << 20;
const PEM_SLACK: usize = 1 << 20;

/// Feed `reader` to `f` in chunks ending at a line break (a very long line
/// is cut at a space or comma), never inside a PEM private key block.
pub fn for_each_chunk(mut reader: impl Read, mut f: impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
    // Both grow only as far as the input needs: most files are small.
    let mut buf: Vec<u8> = Vec::new();
    let mut block = vec![0u8; 64 << 10];
    let mut eof = false;
    loop {
        while !eof && buf.len() < CHUNK {
            let n = reader.read(&mut block)?;
            eof = n == 0;
            buf.extend_from_slice(&block[..n]);
        }
        if eof {
            if !buf.is_empty() {
                f(&buf)?;
            }
            return Ok(());
        }
        let mut cut = cut_point(&buf);
        // Keep an unterminated PEM block for the next chunk, reading on
        // until it ends (or the slack runs out).
        while let Some(begin) = open_pem(&buf[..cut]) {
            if buf.len() >= CHUNK + PEM_SLACK || eof {
                break;
            }
            let n = reader.read(&mut block)?;
            eof = n == 0;
            buf.extend_from_slice(&block[..n]);
            cut = if eof {
                buf.len()
            } else {
                cut_point(&buf).max(begin)
            };
        }
        f(&buf[..cut])?;
        buf.drain(..cut);
    }
}

fn cut_point(buf: &[u8]) -> usize {
    if let Some(i) = buf.iter().rposition(|&b| b == b'\n') {
        return i + 1;
    }
    if let Some(i) = buf.iter().rposition(|&b| matches!(b, b' ' | b',' | b'\t')) {
        return i + 1;
    }
    // One enormous token: cut at a character boundary.
    let mut i = buf.len();
    while i > 1 && (buf[i - 1] & 0xC0) == 0x80 {
        i -= 1;
    }
    i.saturating_sub(1).max(1)
}

/// Where an unterminated PEM block begins in `chunk`, if one does.
fn open_pem(chunk: &[u8]) -> Option<usize> {
    let tail = &chunk[chunk.len().saturating_sub(PEM_SLACK)..];
    let begin = rfind(tail, b"-----BEGIN")?;
    let after = &tail[begin..];
    if find(after, b"-----END").is_some() {
        return None;
    }
    Some(chunk.len() - tail.len() + begin)
}

fn find(h: &[u8], n: &[u8]) -> Option<usize> {
    h.windows(n.len()).position(|w| w == n)
}

fn rfind(h: &[u8], n: &[u8]) -> Option<usize> {
    h.windows(n.len()).rposition(|w| w == n)
}

/// Is this chunk text (UTF-8 without NUL bytes)?
pub fn is_text(chunk: &[u8]) -> bool {
    !chunk.contains(&0) && std::str::from_utf8(chunk).is_ok()
}

/// A finding as reported: where, and what kind; never the value.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Finding {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub category: Category,
}

/// What scanning one file found.
#[derive(Default, Clone)]
pub struct Scanned {
    pub binary: bool,
    /// (line, column, hit) in file order.
    pub hits: Vec<(usize, usize, Hit)>,
}

/// How a file's text is read besides as it is: the forms a reader (or a
/// parser) will see, so nothing hides behind markup or escapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Plain,
    /// Markdown: also with character references decoded.
    Markdown,
    /// HTML, SVG, XML: references decoded, and also the text with the
    /// tags taken out (`10.0.<em>0</em>.5` reads as an address).
    Markup,
    /// JSON and JSONL: also with `\uXXXX` and `\/` escapes decoded.
    Json,
}

impl View {
    pub fn of(path: &Path) -> View {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        match ext.to_ascii_lowercase().as_str() {
            "html" | "htm" | "xhtml" | "svg" | "xml" => View::Markup,
            "md" | "markdown" => View::Markdown,
            "json" | "jsonl" => View::Json,
            _ => View::Plain,
        }
    }
}

/// Scan a file's text in every [`View`] of it. Stops at the first chunk
/// that is not text. Positions are those of the first view; a value seen
/// only in a later one is reported once, at its line.
pub fn scan_reader(det: &Detector, reader: impl Read, view: View) -> Result<Scanned> {
    scan_chunks(det, view, |f| for_each_chunk(reader, f))
}

/// [`scan_reader`] over bytes in memory, without copying them when they
/// fit one chunk.
pub fn scan_bytes(det: &Detector, bytes: &[u8], view: View) -> Result<Scanned> {
    if bytes.len() <= CHUNK {
        scan_chunks(det, view, |f| f(bytes))
    } else {
        scan_reader(det, bytes, view)
    }
}

fn scan_chunks(
    det: &Detector,
    view: View,
    feed: impl FnOnce(&mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()>,
) -> Result<Scanned> {
    let mut out = Scanned::default();
    let mut line = 1;
    feed(&mut |chunk: &[u8]| {
        if out.binary || !is_text(chunk) {
            out.binary = true;
            return Ok(());
        }
        let text = std::str::from_utf8(chunk).unwrap_or_default();
        let views: Vec<Cow<'_, str>> = match view {
            View::Plain => vec![Cow::Borrowed(text)],
            View::Markdown => vec![decode_entities(text)],
            View::Markup => {
                let decoded = decode_entities(text);
                let stripped = strip_tags(text);
                let stripped = match decode_entities(&stripped) {
                    Cow::Borrowed(_) => Cow::Owned(stripped),
                    Cow::Owned(d) => Cow::Owned(d),
                };
                vec![decoded, stripped]
            }
            View::Json => vec![Cow::Borrowed(text), decode_json_escapes(text)],
        };
        let first = out.hits.len();
        let mut seen: std::collections::HashSet<(usize, String)> = std::collections::HashSet::new();
        for (n, v) in views.iter().enumerate() {
            if n > 0 && *v == views[0] {
                continue;
            }
            for (l, c, h) in locate(v.as_bytes(), det.find(v.as_bytes()), line) {
                if seen.insert((l, h.key.clone())) {
                    out.hits.push((l, c, h));
                }
            }
        }
        out.hits[first..].sort_by_key(|(l, c, _)| (*l, *c));
        line += memchr::memchr_iter(b'\n', chunk).count();
        Ok(())
    })?;
    Ok(out)
}

/// Line and column (1-based, in characters) of each hit; `line` is the
/// line the text starts on.
fn locate(bytes: &[u8], hits: Vec<Hit>, mut line: usize) -> Vec<(usize, usize, Hit)> {
    let mut out = Vec::with_capacity(hits.len());
    // The column is counted on from the previous hit, never again from the
    // line's start: one long line of many hits stays linear. `bytes` come
    // from a `str`, so characters are the bytes that start one.
    let (mut at, mut column) = (0, 1);
    for h in hits {
        for &b in &bytes[at..h.start] {
            if b == b'\n' {
                line += 1;
                column = 1;
            } else if b & 0xC0 != 0x80 {
                column += 1;
            }
        }
        at = h.start;
        out.push((line, column, h));
    }
    out
}

pub fn scan_file(det: &Detector, path: &Path) -> Result<Scanned> {
    let f = crate::fsx::open_regular(path)
        .map_err(|e| anyhow::anyhow!("failed to open `{}`: {e}", path.display()))?;
    scan_reader(det, f, View::of(path))
        .map_err(|e| anyhow::anyhow!("failed to read `{}`: {e}", path.display()))
}

/// Inline elements, whose tags a reader does not see as a break (names
/// in lower case).
fn inline(name: &[u8]) -> bool {
    matches!(
        name,
        b"a" | b"abbr"
            | b"b"
            | b"bdi"
            | b"bdo"
            | b"cite"
            | b"code"
            | b"data"
            | b"del"
            | b"dfn"
            | b"em"
            | b"i"
            | b"ins"
            | b"kbd"
            | b"mark"
            | b"q"
            | b"s"
            | b"samp"
            | b"small"
            | b"span"
            | b"strong"
            | b"sub"
            | b"sup"
            | b"time"
            | b"tspan"
            | b"u"
            | b"var"
            | b"wbr"
    )
}

/// The text of markup with its tags taken out: inline tags vanish, other
/// tags leave a space; line breaks inside tags are kept, so lines still
/// match the file. A view for scanning only, never output.
pub fn strip_tags(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len());
    let mut text_from = 0;
    while let Some(lt) = memchr::memchr(b'<', &bytes[text_from..]) {
        let i = text_from + lt;
        let Some(len) = memchr::memchr(b'>', &bytes[i..]) else {
            break;
        };
        out.extend_from_slice(&bytes[text_from..i]);
        let tag = &bytes[i + 1..i + len];
        let skip = tag.iter().take_while(|&&b| b == b'/').count();
        let bare = &tag[skip..];
        let n = bare
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        let mut name = [0u8; 8];
        let is_inline = n <= name.len() && {
            for (d, b) in name.iter_mut().zip(bare) {
                *d = b.to_ascii_lowercase();
            }
            inline(&name[..n])
        };
        if !is_inline {
            out.push(b' ');
        }
        if memchr::memchr(b'\n', tag).is_some() {
            out.extend(tag.iter().filter(|&&b| b == b'\n'));
        }
        text_from = i + len + 1;
    }
    out.extend_from_slice(&bytes[text_from..]);
    // Only whole tags (ASCII `<`..`>`) were taken out, so this is UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// JSON string escapes a parser will turn back into text: `\uXXXX` and
/// `\/`. A decoded line break becomes a space.
pub fn decode_json_escapes(s: &str) -> Cow<'_, str> {
    if !s.contains('\\') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('/') => {
                chars.next();
                out.push('/');
            }
            Some('u') => {
                let hex: String = chars.clone().skip(1).take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(d) if hex.len() == 4 => {
                        for _ in 0..5 {
                            chars.next();
                        }
                        out.push(if d == '\n' || d == '\r' { ' ' } else { d });
                    }
                    _ => out.push(c),
                }
            }
            Some(&n) => {
                // Keep other escapes (`\\`, `\n`) as they are.
                chars.next();
                out.push(c);
                out.push(n);
            }
            None => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Decode the character references a page may hide text behind. A decoded
/// line break becomes a space so line numbers still match the file.
pub fn decode_entities(s: &str) -> Cow<'_, str> {
    if memchr::memchr(b'&', s.as_bytes()).is_none() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = memchr::memchr(b'&', rest.as_bytes()) {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        // A reference is at most 12 bytes long: look no further for its `;`.
        let window = &rest.as_bytes()[1..rest.len().min(13)];
        let end = memchr::memchr(b';', window).map(|e| e + 1);
        let decoded = end.and_then(|e| {
            let name = &rest[1..e];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some(' '),
                _ => {
                    let n = name.strip_prefix('#')?;
                    let code = match n.strip_prefix(['x', 'X']) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                        None => n.parse().ok()?,
                    };
                    char::from_u32(code)
                }
            }?;
            Some((if c == '\n' || c == '\r' { ' ' } else { c }, e + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// A folder (or one file) scanned.
#[derive(Debug, Serialize)]
pub struct Report {
    pub path: PathBuf,
    pub files: usize,
    /// Files that are not text and so could not be scanned.
    pub binary: Vec<String>,
    pub findings: Vec<Finding>,
}

impl Report {
    pub fn clean(&self) -> bool {
        self.findings.is_empty()
    }

    pub fn to_json(&self) -> Result<String> {
        let mut s = serde_json::to_string_pretty(&serde_json::json!({
            "schema": 1,
            "path": self.path,
            "clean": self.clean(),
            "files": self.files,
            "binary": self.binary,
            "findings": self.findings,
        }))?;
        s.push('\n');
        Ok(s)
    }

    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for f in &self.findings {
            let at = if f.line == 0 {
                format!("{} (file name)", f.file)
            } else {
                format!("{}:{}:{}", f.file, f.line, f.column)
            };
            s.push_str(&format!("{at}: {}\n", f.category.as_str()));
        }
        for b in &self.binary {
            s.push_str(&format!("{b}: binary, not scanned\n"));
        }
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        let scanned = self.files - self.binary.len();
        if self.findings.is_empty() {
            s.push_str(&format!(
                "no private values found in {scanned} file{}",
                plural(scanned)
            ));
        } else {
            let mut with: Vec<&str> = self.findings.iter().map(|f| f.file.as_str()).collect();
            with.dedup();
            s.push_str(&format!(
                "{} finding{} in {} of {scanned} file{} scanned",
                self.findings.len(),
                plural(self.findings.len()),
                with.len(),
                plural(scanned)
            ));
        }
        if !self.binary.is_empty() {
            s.push_str(&format!(
                "; {} binary file{} not scanned",
                self.binary.len(),
                plural(self.binary.len())
            ));
        }
        s.push('\n');
        s
    }
}

/// Scan every file under `path` (or `path` itself), names included.
/// `display` names a file for the report from its path relative to `path`.
pub fn scan_path(
    det: &Detector,
    path: &Path,
    display: &(dyn Fn(&str) -> String + Sync),
) -> Result<Report> {
    scan_path_except(det, path, display, &|_| false)
}

/// [`scan_path`], reading only the names of files `known_clean` accepts
/// (files whose bytes this same detector already found clean).
pub fn scan_path_except(
    det: &Detector,
    path: &Path,
    display: &(dyn Fn(&str) -> String + Sync),
    known_clean: &(dyn Fn(&str) -> bool + Sync),
) -> Result<Report> {
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    if path.is_file() {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        files.push((name, path.to_path_buf()));
    } else if path.is_dir() {
        for entry in walkdir::WalkDir::new(path) {
            let entry =
                entry.map_err(|e| anyhow::anyhow!("failed to walk `{}`: {e}", path.display()))?;
            if entry.file_type().is_file() {
                let rel = entry.path().strip_prefix(path).unwrap_or(entry.path());
                files.push((
                    rel.to_string_lossy().replace('\\', "/"),
                    entry.path().to_path_buf(),
                ));
            } else {
                crate::fsx::refuse_special(entry.path())?;
            }
        }
        // In path order; sorting names here is cheaper than walkdir
        // comparing the file names of entries (parsed anew each time).
        files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    } else {
        anyhow::bail!("`{}` does not exist", path.display());
    }
    // Names are checked one by one only if one of them could hold a value.
    // (each also as an absolute path: see `names`).
    let rooted: Vec<String> = files.iter().map(|(rel, _)| format!("/{rel}")).collect();
    let check_names = det.any_candidate_in(rooted.iter().map(String::as_str));
    let results: Vec<Result<(Vec<Finding>, bool)>> = files
        .par_iter()
        .map(|(rel, full)| {
            // A report names the file, but not a private value in its name.
            let shown = display(&super::mask_name(det, rel));
            let name_hits = if check_names {
                super::names::find(det, rel)
            } else {
                Vec::new()
            };
            let mut findings: Vec<Finding> = name_hits
                .into_iter()
                .map(|h| Finding {
                    file: shown.clone(),
                    line: 0,
                    column: 0,
                    category: h.category,
                })
                .collect();
            if known_clean(rel) {
                return Ok((findings, false));
            }
            let scanned = scan_file(det, full)?;
            findings.extend(scanned.hits.into_iter().map(|(line, column, h)| Finding {
                file: shown.clone(),
                line,
                column,
                category: h.category,
            }));
            Ok((findings, scanned.binary))
        })
        .collect();
    let mut report = Report {
        path: path.to_path_buf(),
        files: files.len(),
        binary: Vec::new(),
        findings: Vec::new(),
    };
    for ((rel, _), r) in files.iter().zip(results) {
        let (findings, binary) = r?;
        report.findings.extend(findings);
        if binary {
            report.binary.push(display(rel));
        }
    }
    Ok(report)
}

/// `exhibit scan PATH`: the built-in rules plus the redaction policy of any
/// campaign.json at PATH, beside a file PATH, or one folder below PATH.
pub fn scan_command(path: &Path) -> Result<Report> {
    if !path.exists() {
        anyhow::bail!("`{}` does not exist", path.display());
    }
    let mut metas = Vec::new();
    let base = if path.is_file() {
        path.parent().unwrap_or(Path::new("."))
    } else {
        path
    };
    metas.push(base.join(crate::campaign::META_NAME));
    if path.is_dir() {
        let entries = std::fs::read_dir(path)
            .map_err(|e| anyhow::anyhow!("failed to list `{}`: {e}", path.display()))?;
        let mut subs: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path().join(crate::campaign::META_NAME)))
            .collect();
        subs.sort();
        metas.extend(subs);
    }
    let mut policies = Vec::new();
    for m in metas.iter().filter(|m| m.is_file()) {
        policies.push(load_policy(m)?);
    }
    let det = Detector::new(&policies)?;
    let shown = |rel: &str| {
        if path.is_file() {
            path.display().to_string()
        } else {
            path.join(rel).display().to_string()
        }
    };
    scan_path(&det, path, &shown)
}

/// Only the `redaction` part of a campaign.json.
fn load_policy(path: &Path) -> Result<crate::campaign::Policy> {
    #[derive(serde::Deserialize)]
    struct Only {
        #[serde(default)]
        redaction: crate::campaign::Policy,
    }
    let text = crate::fsx::read_to_string(path)?;
    let only: Only = serde_json::from_str(&text)
        .map_err(|e| crate::error::InputError::json(path, &text, 0, &e))?;
    for p in &only.redaction.patterns {
        super::check_pattern(p).map_err(|e| {
            anyhow::anyhow!(
                "{}: redaction pattern `{p}` is not a valid regex: {e}",
                path.display()
            )
        })?;
    }
    Ok(only.redaction)
}
