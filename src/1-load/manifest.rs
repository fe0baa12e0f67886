//! The campaign manifest: `manifest.json` or a coreutils `SHA256SUMS` file,
//! parsed into a list of expected (path, sha256, bytes) entries.

use crate::error::InputError;
use crate::error::{bail, Result};
use serde::{Deserialize, Deserializer};
use std::path::{Path, PathBuf};

pub(crate) const JSON_NAME: &str = "manifest.json";
pub(crate) const SUMS_NAME: &str = crate::layout::SUMS;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Json,
    Sha256sums,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: String,
    /// Lowercase hex.
    pub sha256: String,
    pub(crate) bytes: Option<u64>,
    /// 1-based line of the entry in a SHA256SUMS file; 0 for JSON.
    pub(crate) line: usize,
}

#[derive(Debug, Clone)]
pub struct Manifest {
    /// File name relative to the campaign folder.
    pub(crate) name: String,
    pub(crate) format: Format,
    pub entries: Vec<Entry>,
    /// Hash of the manifest file itself.
    pub(crate) sha256: String,
    pub(crate) bytes: u64,
}

/// Load the manifest of `dir`: exactly one of manifest.json and SHA256SUMS.
pub fn load(dir: &Path) -> Result<Manifest> {
    load_kept(dir, None)
}

/// The manifests the preview parsed, by path, each with the SHA-256 of
/// the bytes it was parsed from: a save that leaves a campaign's manifest
/// as it was (most do) reads and hashes it, but does not parse it again
/// (1.5 ms a save for the 2,000 entries of a 1,000-page campaign).
#[derive(Default)]
pub(crate) struct KeptManifests(std::sync::Mutex<std::collections::HashMap<PathBuf, Manifest>>);

/// [`load`], taking from `kept` a manifest parsed from the same bytes.
pub(crate) fn load_kept(dir: &Path, kept: Option<&KeptManifests>) -> Result<Manifest> {
    let json = dir.join(JSON_NAME);
    let sums = dir.join(SUMS_NAME);
    let (path, format) = match (json.is_file(), sums.is_file()) {
        (true, true) => bail!(
            "`{}` has both {JSON_NAME} and {SUMS_NAME}; keep one manifest",
            dir.display()
        ),
        (true, false) => (json, Format::Json),
        (false, true) => (sums, Format::Sha256sums),
        (false, false) => bail!(
            "`{}` has no manifest: write one with `exhibit seal {}`",
            dir.display(),
            dir.display()
        ),
    };
    let Some(kept) = kept else {
        return load_file(&path, format);
    };
    let bytes = crate::fsx::read(&path)?;
    let sha256 = crate::hash::sha256_bytes(&bytes);
    let mut kept = kept.0.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(m) = kept
        .get(&path)
        .filter(|m| m.sha256 == sha256 && m.format == format)
    {
        return Ok(m.clone());
    }
    let m = parse(&path, format, bytes, sha256)?;
    kept.insert(path, m.clone());
    Ok(m)
}

pub fn load_file(path: &Path, format: Format) -> Result<Manifest> {
    let bytes = crate::fsx::read(path)?;
    let sha256 = crate::hash::sha256_bytes(&bytes);
    parse(path, format, bytes, sha256)
}

/// The manifest `path` holds as `bytes` (whose SHA-256 is `sha256`).
fn parse(path: &Path, format: Format, bytes: Vec<u8>, sha256: String) -> Result<Manifest> {
    let len = bytes.len() as u64;
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let offset = e.utf8_error().valid_up_to();
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            return Err(
                InputError::at_offset(path, &text, offset, "manifest is not valid UTF-8").into(),
            );
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let entries = match format {
        Format::Json => parse_json(path, text)?,
        Format::Sha256sums => parse_sums(path, text)?,
    };
    Ok(Manifest {
        name: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        format,
        entries,
        sha256,
        bytes: len,
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonManifest {
    files: Vec<JsonEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonEntry {
    path: String,
    #[serde(deserialize_with = "de_hash")]
    sha256: String,
    bytes: Option<u64>,
}

fn de_hash<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    check_hash(&s).map_err(serde::de::Error::custom)
}

/// A SHA-256 digest: 64 hex digits, either case; returned lowercase.
pub(crate) fn check_hash(s: &str) -> Result<String, String> {
    match hash_problem(s) {
        Some(why) => Err(why),
        None => Ok(s.to_ascii_lowercase()),
    }
}

/// Why `s` is not a SHA-256 digest, if it is not ([`check_hash`] without
/// the lowercase copy).
fn hash_problem(s: &str) -> Option<String> {
    if s.len() != 64 {
        return Some(format!(
            "sha256 must be 64 hex digits, found {} characters",
            s.chars().count()
        ));
    }
    // Every byte looked at, without a branch per byte: the digits and
    // letters of a digest come in no order a branch could predict.
    let hex = |b: u8| (b.wrapping_sub(b'0') < 10) | ((b | 0x20).wrapping_sub(b'a') < 6);
    if s.bytes().fold(true, |all, b| all & hex(b)) {
        return None;
    }
    let c = s.chars().find(|c| !c.is_ascii_hexdigit())?;
    Some(format!("sha256 has a non-hex character {c:?}"))
}

pub fn parse_json(path: &Path, text: &str) -> Result<Vec<Entry>> {
    let m: JsonManifest =
        serde_json::from_str(text).map_err(|e| InputError::json(path, text, 0, &e))?;
    Ok(m.files
        .into_iter()
        .map(|f| Entry {
            path: f.path,
            sha256: f.sha256,
            bytes: f.bytes,
            line: 0,
        })
        .collect())
}

/// coreutils `sha256sum` output: `HASH  path`, `HASH *path`, a leading `\`
/// for escaped names, and BSD tags `SHA256 (path) = HASH`; CRLF tolerated.
pub fn parse_sums(path: &Path, text: &str) -> Result<Vec<Entry>> {
    let mut entries = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if line.trim().is_empty() {
            continue;
        }
        let lineno = i + 1;
        let err = |col: usize, msg: String| -> crate::error::Error {
            let mut e = InputError::new(path, lineno, col, msg);
            e.source_line = Some(line.to_string());
            e.into()
        };
        let (escaped, body) = match line.strip_prefix('\\') {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        let col0 = usize::from(escaped) + 1;
        let (sha256, name) = if let Some(rest) = body.strip_prefix("SHA256 (") {
            let Some(close) = rest.rfind(") = ") else {
                return Err(err(
                    col0,
                    "BSD-style line must read `SHA256 (path) = HASH`".into(),
                ));
            };
            let hash = &rest[close + 4..];
            (check_hash(hash).map_err(|m| err(col0, m))?, &rest[..close])
        } else {
            let Some((hash, rest)) = body.split_once(' ') else {
                return Err(err(
                    col0,
                    "expected `HASH  path` or `SHA256 (path) = HASH`".into(),
                ));
            };
            let sha256 = check_hash(hash).map_err(|m| err(col0, m))?;
            let name = rest
                .strip_prefix(' ')
                .or_else(|| rest.strip_prefix('*'))
                .ok_or_else(|| {
                    err(
                        col0 + hash.len() + 1,
                        "expected two spaces or ` *` between hash and path".into(),
                    )
                })?;
            (sha256, name)
        };
        let name = if escaped {
            unescape(name).map_err(|m| err(col0, m))?
        } else {
            name.to_string()
        };
        if name.is_empty() {
            return Err(err(col0, "entry has no path".into()));
        }
        entries.push(Entry {
            path: name,
            sha256,
            bytes: None,
            line: lineno,
        });
    }
    Ok(entries)
}

fn unescape(s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            other => {
                return Err(format!(
                    "unknown escape `\\{}` in file name",
                    other.map(String::from).unwrap_or_default()
                ))
            }
        }
    }
    Ok(out)
}

/// A manifest's text in `format`, one (path, sha256, bytes) per file: what
/// `exhibit seal` writes, and what a site publishes as the manifest of its
/// redacted copies.
pub(crate) fn render(format: Format, files: &[(&str, &str, u64)]) -> Result<String> {
    Ok(match format {
        Format::Json => {
            #[derive(serde::Serialize)]
            struct Entry<'a> {
                path: &'a str,
                sha256: &'a str,
                bytes: u64,
            }
            #[derive(serde::Serialize)]
            struct Doc<'a> {
                files: Vec<Entry<'a>>,
            }
            let files = files
                .iter()
                .map(|&(path, sha256, bytes)| Entry {
                    path,
                    sha256,
                    bytes,
                })
                .collect();
            let mut s = serde_json::to_string_pretty(&Doc { files })?;
            s.push('\n');
            s
        }
        Format::Sha256sums => files
            .iter()
            .map(|(path, sha256, _)| sums_line(sha256, path))
            .collect(),
    })
}

/// One SHA256SUMS line for `path`, escaped the way coreutils does.
pub fn sums_line(sha256: &str, path: &str) -> String {
    if path.contains(['\\', '\n', '\r']) {
        let esc = path
            .replace('\\', "\\\\")
            .replace('\n', "\\n")
            .replace('\r', "\\r");
        format!("\\{sha256}  {esc}\n")
    } else {
        format!("{sha256}  {path}\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

    /// The check without a branch per byte takes exactly the ASCII hex
    /// digits, in either case, wherever in the digest the odd one is.
    #[test]
    fn a_digest_is_64_hex_digits_of_either_case_and_nothing_else() {
        for b in 0u8..128 {
            for at in [0, 31, 63] {
                let mut d = H.as_bytes().to_vec();
                d[at] = b;
                let d = String::from_utf8(d).unwrap();
                let why = hash_problem(&d);
                assert_eq!(
                    why.is_none(),
                    b.is_ascii_hexdigit(),
                    "{b:#x} at {at}: {why:?}"
                );
                if let Some(why) = why {
                    assert_eq!(
                        why,
                        format!("sha256 has a non-hex character {:?}", b as char)
                    );
                }
            }
        }
        assert_eq!(hash_problem(&H.to_ascii_uppercase()), None);
        // 64 bytes, but one character of two bytes (0x80 and over).
        let wide = format!("{}\u{e9}", &H[..62]);
        assert_eq!(wide.len(), 64);
        let why = hash_problem(&wide).unwrap();
        assert_eq!(why, "sha256 has a non-hex character '\u{e9}'");
        let short = hash_problem(&H[1..]).unwrap();
        assert_eq!(short, "sha256 must be 64 hex digits, found 63 characters");
    }

    /// The preview's kept manifest is the one parsed from the same bytes:
    /// a manifest sealed again (or turned into SHA256SUMS) is parsed again.
    #[test]
    fn a_kept_manifest_is_used_only_for_the_same_bytes() {
        let dir = std::env::temp_dir().join(format!("exhibit-kept-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let json =
            |path: &str| format!("{{\"files\": [{{\"path\": \"{path}\", \"sha256\": \"{H}\"}}]}}");
        let kept = KeptManifests::default();
        let paths =
            |m: Manifest| -> Vec<String> { m.entries.into_iter().map(|e| e.path).collect() };
        std::fs::write(dir.join(JSON_NAME), json("a.txt")).unwrap();
        assert_eq!(paths(load_kept(&dir, Some(&kept)).unwrap()), ["a.txt"]);
        assert_eq!(paths(load_kept(&dir, Some(&kept)).unwrap()), ["a.txt"]);
        std::fs::write(dir.join(JSON_NAME), json("b.txt")).unwrap();
        let m = load_kept(&dir, Some(&kept)).unwrap();
        assert_eq!(
            m.sha256,
            crate::hash::sha256_bytes(json("b.txt").as_bytes())
        );
        assert_eq!(paths(m), ["b.txt"]);
        std::fs::remove_file(dir.join(JSON_NAME)).unwrap();
        std::fs::write(dir.join(SUMS_NAME), format!("{H}  c.txt\n")).unwrap();
        let m = load_kept(&dir, Some(&kept)).unwrap();
        assert_eq!(
            (m.format, paths(m)),
            (Format::Sha256sums, vec!["c.txt".to_string()])
        );
        // A manifest that does not parse is an error every time.
        std::fs::write(dir.join(SUMS_NAME), "not a hash  c.txt\n").unwrap();
        assert!(load_kept(&dir, Some(&kept)).is_err());
        assert!(load_kept(&dir, Some(&kept)).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn sums_formats() {
        let upper = H.to_ascii_uppercase();
        let text = format!(
            "\u{feff}{H}  a.txt\r\n{H} *bin/b.dat\n\\{H}  c\\\\d\\nx\nSHA256 (e f) = {upper}\n"
        );
        let text = text.strip_prefix('\u{feff}').unwrap();
        let e = parse_sums(Path::new("S"), text).unwrap();
        let names: Vec<_> = e.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(names, ["a.txt", "bin/b.dat", "c\\d\nx", "e f"]);
        assert!(e.iter().all(|e| e.sha256 == H));
    }

    #[test]
    fn sums_line_round_trips() {
        let line = sums_line(H, "we\\ird\nname");
        let e = parse_sums(Path::new("S"), &line).unwrap();
        assert_eq!(e[0].path, "we\\ird\nname");
    }

    #[test]
    fn bad_hash_names_line() {
        let err = parse_sums(Path::new("S"), &format!("{H}  ok\nabc  bad\n")).unwrap_err();
        let crate::error::Error::Input(e) = err else {
            panic!("not positioned: {err}");
        };
        assert_eq!(e.line, 2);
    }
}
