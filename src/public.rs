//! The public view of verified campaigns, made before anything renders: each
//! file scanned (text or binary), every private value numbered in file order
//! so placeholders are the same on every build, file names and campaign.json
//! redacted. Later stages publish only through this view.

use crate::campaign::{self, Campaign};
use crate::error::EvidenceFailed;
use crate::evidence::Evidence;
use crate::redact::{scan, Counts, Redactor};
use anyhow::Result;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::path::Path;

/// One campaign as the public will see it.
#[derive(Debug, Default)]
pub struct Public {
    /// original path -> public path (redacted; before any `.txt` rename)
    names: BTreeMap<String, String>,
    /// public path -> original path
    reverse: HashMap<String, String>,
    /// Binary files the policy lets through unscanned (original paths).
    pub binary: BTreeSet<String>,
    /// Text files in which the input scan found nothing (original paths).
    pub clean: BTreeSet<String>,
    /// Fingerprint of the detector that scanned them.
    pub scanned_by: String,
}

impl Public {
    /// The public path of a campaign file (original path in).
    pub fn name<'a>(&'a self, original: &'a str) -> &'a str {
        self.names.get(original).map_or(original, |s| s.as_str())
    }

    /// The published path: the public path, active content renamed.
    pub fn published(&self, original: &str) -> String {
        campaign::published_name(self.name(original))
    }

    /// The original path of a file named by its public or original path.
    pub fn original<'a>(&'a self, name: &'a str) -> &'a str {
        self.reverse.get(name).map_or(name, |s| s.as_str())
    }
}

/// Files of a campaign in the order their values are numbered:
/// campaign.json, the pages in order, everything else by path, the manifest.
fn order(c: &Campaign, e: &Evidence) -> Vec<String> {
    let mut files = vec![campaign::META_NAME.to_string()];
    files.extend(c.meta.pages.iter().map(|p| p.file.clone()));
    let listed: std::collections::HashSet<String> = files.iter().cloned().collect();
    for f in &e.files {
        if !listed.contains(&f.path) {
            files.push(f.path.clone());
        }
    }
    files.push(e.manifest.name.clone());
    files
}

/// Scans kept between builds in one process (`exhibit serve`), by
/// detector and file hash; off unless [`reuse_scans`] is called.
type ScanCache = std::collections::HashMap<(String, String), scan::Scanned>;
static SCANS: std::sync::OnceLock<std::sync::Mutex<ScanCache>> = std::sync::OnceLock::new();

/// Keep input scans between builds of this process: a file whose verified
/// hash is unchanged is not scanned again by the same detector.
pub fn reuse_scans() {
    SCANS.get_or_init(Default::default);
}

fn scan_input(
    r: &Redactor,
    path: &Path,
    sha256: Option<&str>,
    kept: Option<&[u8]>,
) -> Result<scan::Scanned> {
    let scan = || match kept {
        Some(bytes) => scan::scan_bytes(&r.detector, bytes, scan::View::of(path)),
        None => scan_verified(r, path, sha256),
    };
    let (Some(cache), Some(sha)) = (SCANS.get(), sha256) else {
        return scan();
    };
    let key = (r.detector.fingerprint(), sha.to_string());
    if let Some(s) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(s.clone());
    }
    let scanned = scan()?;
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, scanned.clone());
    Ok(scanned)
}

/// Scan a file from disk, hashing what is read: a file that no longer has
/// its verified bytes is refused, so "clean" always means "these bytes".
fn scan_verified(r: &Redactor, path: &Path, sha256: Option<&str>) -> Result<scan::Scanned> {
    struct Hashing<R> {
        inner: R,
        hash: Sha256,
    }
    impl<R: std::io::Read> std::io::Read for Hashing<R> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.hash.update(&buf[..n]);
            Ok(n)
        }
    }
    let mut reader = Hashing {
        inner: crate::fsx::open(path)?,
        hash: Sha256::new(),
    };
    let scanned = scan::scan_reader(&r.detector, &mut reader, scan::View::of(path))
        .map_err(|e| anyhow::anyhow!("failed to read `{}`: {e}", path.display()))?;
    if let Some(expected) = sha256 {
        // Read to the end, in case the scan stopped early (binary).
        std::io::copy(&mut reader, &mut std::io::sink())?;
        if crate::hash::hex(&reader.hash.finalize()) != expected {
            return Err(EvidenceFailed {
                report: format!(
                    "`{}` changed after it was verified; nothing was published",
                    path.display()
                ),
            }
            .into());
        }
    }
    Ok(scanned)
}

/// Scan every file of every campaign and number what was found.
/// Sets each campaign's `public` metadata.
pub fn prepare(
    campaigns: &mut [Campaign],
    evidences: &[Evidence],
    r: &Redactor,
) -> Result<Vec<Public>> {
    let cs: &[Campaign] = campaigns;
    let jobs: Vec<(usize, String)> = cs
        .iter()
        .zip(evidences)
        .enumerate()
        .flat_map(|(i, (c, e))| order(c, e).into_iter().map(move |f| (i, f)))
        .collect();
    let scanned: Vec<Result<scan::Scanned>> = jobs
        .par_iter()
        .map(|(i, f)| {
            if cs[*i].meta.redaction.allows_binary(f) {
                return Ok(scan::Scanned {
                    binary: true,
                    hits: Vec::new(),
                });
            }
            let e = &evidences[*i];
            scan_input(
                r,
                &cs[*i].path(f),
                e.verified_sha256(f),
                e.kept(f).map(|b| &b[..]),
            )
        })
        .collect();
    let mut publics: Vec<Public> = cs
        .iter()
        .map(|_| Public {
            scanned_by: r.detector.fingerprint(),
            ..Public::default()
        })
        .collect();
    // File names are read one by one only if one of them could hold a
    // value; each is also tried as an absolute path (`home/alice/...`).
    let rooted: Vec<String> = jobs.iter().map(|(_, f)| format!("/{f}")).collect();
    let check_names = r
        .detector
        .any_candidate_in(rooted.iter().map(String::as_str));
    let mut refused = String::new();
    for ((i, f), s) in jobs.iter().zip(scanned) {
        let s = s?;
        let c = &cs[*i];
        if check_names {
            r.register_name(f);
        }
        if s.binary {
            if c.meta.redaction.allows_binary(f) {
                publics[*i].binary.insert(f.clone());
            } else {
                refused.push_str(&format!(
                    "  {}: binary, so it cannot be scanned for private values; list it under `redaction.binary` in {} to publish it as it is\n",
                    c.path(f).display(),
                    campaign::META_NAME
                ));
            }
        }
        if !s.binary && s.hits.is_empty() {
            publics[*i].clean.insert(f.clone());
        }
        let hits: Vec<_> = s.hits.into_iter().map(|(_, _, h)| h).collect();
        r.register(&hits);
    }
    if !refused.is_empty() {
        return Err(EvidenceFailed {
            report: format!(
                "refusing to publish files that cannot be scanned:\n{}",
                refused.trim_end()
            ),
        }
        .into());
    }
    for ((c, e), p) in campaigns.iter_mut().zip(evidences).zip(&mut publics) {
        for f in order(c, e) {
            let public = if check_names {
                r.redact_name(&f).into_owned()
            } else {
                f.clone()
            };
            p.reverse.insert(public.clone(), f.clone());
            p.names.insert(f, public);
        }
        let mut v = serde_json::to_value(&c.meta)?;
        r.redact_value(&mut v, &mut Counts::new());
        c.public = serde_json::from_value(v)?;
        c.outputs = std::sync::OnceLock::new();
    }
    Ok(publics)
}

/// What publishing one file did.
#[derive(Debug, Clone)]
pub struct Copied {
    /// The original's verified hash: never published for a redacted copy.
    pub sha256: String,
    pub published_sha256: String,
    /// The original's size.
    pub bytes: u64,
    /// The published copy's size.
    pub published_bytes: u64,
    pub redactions: Counts,
    /// Published as it is, unscanned, because the policy allows it.
    pub binary: bool,
}

/// How [`copy`] treats a file's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Text: redacted on the way.
    Redact,
    /// Text the same detector already found clean: copied as it is.
    Verbatim,
    /// Binary the policy lets through unscanned.
    Binary,
}

/// Copy `from` (or its `kept` bytes, exactly as verified) to `to`,
/// redacting text on the way unless `mode` says otherwise, and check the
/// original still has the verified hash.
pub fn copy(
    r: &Redactor,
    from: &Path,
    kept: Option<&[u8]>,
    to: &Path,
    expected: &str,
    mode: Mode,
) -> Result<Copied> {
    if let Some(bytes) = kept {
        let sha256 = expected.to_string();
        let mut counts = Counts::new();
        let published = if mode == Mode::Redact {
            r.redact_bytes(bytes, &mut counts)
        } else {
            bytes.into()
        };
        std::fs::write(to, &published)
            .map_err(|e| anyhow::anyhow!("failed to write `{}`: {e}", to.display()))?;
        let published_sha256 = if published.as_ref() == bytes {
            sha256.clone()
        } else {
            crate::hash::sha256_bytes(&published)
        };
        return Ok(Copied {
            sha256,
            published_sha256,
            bytes: bytes.len() as u64,
            published_bytes: published.len() as u64,
            redactions: counts,
            binary: mode == Mode::Binary,
        });
    }
    // The caller has made the folder.
    let file = std::fs::File::create(to)
        .map_err(|e| anyhow::anyhow!("failed to create `{}`: {e}", to.display()))?;
    let mut out = std::io::BufWriter::new(file);
    let (mut orig, mut publ) = (Sha256::new(), Sha256::new());
    let (mut bytes, mut published_bytes) = (0u64, 0u64);
    let mut counts = Counts::new();
    let write_err = |e: std::io::Error| anyhow::anyhow!("failed to write `{}`: {e}", to.display());
    scan::for_each_chunk(crate::fsx::open(from)?, |chunk| {
        orig.update(chunk);
        bytes += chunk.len() as u64;
        let redacted = if mode == Mode::Redact {
            r.redact_bytes(chunk, &mut counts)
        } else {
            chunk.into()
        };
        publ.update(&redacted);
        published_bytes += redacted.len() as u64;
        out.write_all(&redacted).map_err(write_err)
    })
    .map_err(|e| anyhow::anyhow!("failed to read `{}`: {e}", from.display()))?;
    out.flush().map_err(write_err)?;
    let sha256 = crate::hash::hex(&orig.finalize());
    if sha256 != expected {
        return Err(EvidenceFailed {
            report: format!(
                "`{}` changed after it was verified; nothing was published",
                from.display()
            ),
        }
        .into());
    }
    Ok(Copied {
        sha256,
        published_sha256: crate::hash::hex(&publ.finalize()),
        bytes,
        published_bytes,
        redactions: counts,
        binary: mode == Mode::Binary,
    })
}
