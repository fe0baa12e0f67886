//! `exhibit verify`: audit a campaign folder, or a published site folder
//! through its SHA256SUMS, and report one verdict per file.

use crate::commit::{Key, Sealed};
use crate::copies::Commitment;
use crate::evidence::{self, Evidence, Verdict};
use crate::manifest::{self, Format};
use anyhow::{bail, Result};
use serde::Serialize;
use std::path::Path;

/// Verify `path`: a campaign, a published campaign, or a whole built site.
pub fn verify(path: &Path) -> Result<Vec<Evidence>> {
    if !path.is_dir() {
        bail!("`{}` is not a folder", path.display());
    }
    let has = |n: &str| path.join(n).is_file();
    // A published campaign carries its source manifest too; its SHA256SUMS
    // (beside audit.json) is the one that covers what was published.
    if has(manifest::SUMS_NAME) && has("audit.json") {
        return Ok(vec![published(path)?]);
    }
    if has(manifest::JSON_NAME) || has(manifest::SUMS_NAME) {
        let m = manifest::load(path)?;
        let name = m.name.clone();
        return Ok(vec![evidence::verify(path, m, &[name.as_str()])?]);
    }
    if has(crate::site::MARKER) {
        let mut out = Vec::new();
        let mut dirs: Vec<_> = std::fs::read_dir(path)
            .map_err(|e| anyhow::anyhow!("failed to list `{}`: {e}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join(manifest::SUMS_NAME).is_file())
            .collect();
        dirs.sort();
        for d in dirs {
            out.push(published(&d)?);
        }
        if out.is_empty() {
            bail!(
                "`{}` is an exhibit site but holds no campaign with a SHA256SUMS",
                path.display()
            );
        }
        return Ok(out);
    }
    bail!(
        "`{}` has no manifest.json or SHA256SUMS: nothing to verify against",
        path.display()
    )
}

/// A published campaign folder: every file against the site's SHA256SUMS,
/// and every file audit.json says was published must be among them.
fn published(dir: &Path) -> Result<Evidence> {
    let m = manifest::load_file(&dir.join(manifest::SUMS_NAME), Format::Sha256sums)?;
    let mut ev = evidence::verify(dir, m, &[manifest::SUMS_NAME])?;
    let audit_path = dir.join("audit.json");
    let text = crate::fsx::read_to_string(&audit_path)?;
    let audit: AuditFiles = serde_json::from_str(&text)
        .map_err(|e| crate::error::InputError::json(&audit_path, &text, 0, &e))?;
    let at: std::collections::HashMap<String, usize> = ev
        .files
        .iter()
        .enumerate()
        .map(|(i, c)| (c.path.clone(), i))
        .collect();
    for f in audit.files {
        let published_sha256 = f.published_sha256.unwrap_or(f.sha256);
        if let Some(check) = at.get(&f.published).map(|&i| &mut ev.files[i]) {
            if check.verdict == Verdict::Ok
                && check.expected_sha256.as_deref() != Some(published_sha256.as_str())
            {
                check.verdict = Verdict::Modified;
                check.detail =
                    Some("audit.json and SHA256SUMS disagree on this file's hash".into());
            }
        } else {
            ev.files.push(evidence::FileCheck {
                path: f.published,
                verdict: Verdict::Missing,
                expected_sha256: Some(published_sha256),
                expected_bytes: Some(f.bytes),
                sha256: None,
                bytes: None,
                detail: Some("published according to audit.json but not in SHA256SUMS".into()),
            });
        }
    }
    ev.files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(ev)
}

/// The part of audit.json that verification reads.
#[derive(serde::Deserialize)]
struct AuditFiles {
    files: Vec<AuditFile>,
    #[serde(default)]
    verification: Option<AuditVerification>,
}

#[derive(serde::Deserialize)]
struct AuditVerification {
    manifest: String,
    sha256: String,
    #[serde(default)]
    sealed: Option<Commitment>,
}

#[derive(serde::Deserialize)]
struct AuditFile {
    /// The file's public path (its name redacted).
    #[serde(default)]
    path: String,
    published: String,
    /// The published copy's hash.
    sha256: String,
    /// Sites from before redaction-safe audits listed the original's hash
    /// in `sha256` and the copy's here.
    #[serde(default)]
    published_sha256: Option<String>,
    bytes: u64,
    #[serde(default)]
    sealed: Option<Commitment>,
}

/// A published campaign checked against the sealed campaign it came from:
/// a copy published as it is must have its original's hash; a redacted or
/// renamed copy must carry the keyed commitment that `key` recomputes from
/// its original.
pub fn against_sealed(site: &Path, sealed: &Path, key: &Key) -> Result<Evidence> {
    if !(site.join(manifest::SUMS_NAME).is_file() && site.join("audit.json").is_file()) {
        bail!(
            "`{}` is not a published campaign (no SHA256SUMS and audit.json): `--sealed` checks one campaign folder of a site",
            site.display()
        );
    }
    let mut ev = published(site)?;
    let m = manifest::load(sealed)?;
    let name = m.name.clone();
    let (m_sha, m_bytes) = (m.sha256.clone(), m.bytes);
    let originals = evidence::verify(sealed, m, &[name.as_str()])?;
    if !originals.all_ok() {
        return Err(crate::error::EvidenceFailed {
            report: format!(
                "the sealed campaign `{}` does not match its own manifest: {}\n{}",
                sealed.display(),
                originals.summary(),
                originals.problems().trim_end()
            ),
        }
        .into());
    }
    let audit_path = site.join("audit.json");
    let text = crate::fsx::read_to_string(&audit_path)?;
    let audit: AuditFiles = serde_json::from_str(&text)
        .map_err(|e| crate::error::InputError::json(&audit_path, &text, 0, &e))?;
    // Every original, by path and by keyed path tag.
    let mut sealed_files: Vec<(&str, &str, u64)> = originals
        .files
        .iter()
        .map(|f| {
            (
                f.path.as_str(),
                f.sha256.as_deref().unwrap_or(""),
                f.bytes.unwrap_or(0),
            )
        })
        .collect();
    sealed_files.push((&name, &m_sha, m_bytes));
    let by_tag: std::collections::HashMap<String, (&str, &str, u64)> = sealed_files
        .iter()
        .map(|&f| (key.path_tag(f.0), f))
        .collect();
    let by_path: std::collections::HashMap<&str, (&str, &str, u64)> =
        sealed_files.iter().map(|&f| (f.0, f)).collect();
    let mut rows: Vec<(String, String, String, Option<Commitment>)> = audit
        .files
        .into_iter()
        .map(|f| (f.published, f.path, f.sha256, f.sealed))
        .collect();
    if let Some(v) = audit.verification {
        rows.push((v.manifest.clone(), v.manifest, v.sha256, v.sealed));
    }
    let mut matched = std::collections::HashSet::new();
    for (published, public, sha256, commitment) in rows {
        let verdict = match &commitment {
            Some(c) => match by_tag.get(&c.path_tag) {
                None => Err("no file of the sealed campaign has this copy's path tag (another campaign, or another key)"),
                Some(&(path, orig_sha, bytes)) => {
                    matched.insert(path);
                    let expected = key.commit(&Sealed {
                        path,
                        sha256: orig_sha,
                        bytes,
                        published_sha256: &sha256,
                    });
                    if expected == c.hmac_sha256 {
                        Ok(())
                    } else {
                        Err("the keyed commitment does not match the sealed original")
                    }
                }
            },
            None => match by_path.get(public.as_str()) {
                Some(&(path, orig_sha, _)) => {
                    matched.insert(path);
                    if orig_sha == sha256 {
                        Ok(())
                    } else {
                        Err("published as it is, but its hash is not the sealed original's (or the copy was redacted without a key)")
                    }
                }
                None => Err("not in the sealed campaign (or its name was redacted and the site was built without a key)"),
            },
        };
        if let Err(why) = verdict {
            match ev.files.iter_mut().find(|f| f.path == published) {
                Some(f) => {
                    f.verdict = Verdict::Modified;
                    f.detail = Some(why.to_string());
                }
                None => ev.files.push(not_published(published, why)),
            }
        }
    }
    for (path, _, _) in &sealed_files {
        if !matched.contains(path) {
            // The original's own name may be private: say which by count.
            ev.files.push(not_published(
                format!("(sealed file {})", matched.len() + 1),
                "in the sealed campaign but not among the published copies",
            ));
        }
    }
    ev.files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(ev)
}

fn not_published(path: String, why: &str) -> evidence::FileCheck {
    evidence::FileCheck {
        path,
        verdict: Verdict::Missing,
        expected_sha256: None,
        expected_bytes: None,
        sha256: None,
        bytes: None,
        detail: Some(why.to_string()),
    }
}

#[derive(Serialize)]
struct JsonReport<'a> {
    /// Bumped when the shape changes.
    schema: u32,
    ok: bool,
    folders: Vec<JsonFolder<'a>>,
}

#[derive(Serialize)]
struct JsonFolder<'a> {
    path: String,
    manifest: &'a str,
    manifest_format: Format,
    ok: bool,
    counts: std::collections::BTreeMap<&'static str, usize>,
    files: &'a [evidence::FileCheck],
}

pub fn to_json(all: &[Evidence]) -> Result<String> {
    let folders = all
        .iter()
        .map(|e| JsonFolder {
            path: e.dir.display().to_string(),
            manifest: &e.manifest.name,
            manifest_format: e.manifest.format,
            ok: e.all_ok(),
            counts: Verdict::ALL
                .iter()
                .map(|v| {
                    (
                        v.as_str(),
                        e.files.iter().filter(|f| f.verdict == *v).count(),
                    )
                })
                .collect(),
            files: &e.files,
        })
        .collect();
    let report = JsonReport {
        schema: 1,
        ok: all.iter().all(Evidence::all_ok),
        folders,
    };
    Ok(serde_json::to_string_pretty(&report)? + "\n")
}

pub fn to_text(all: &[Evidence]) -> String {
    let mut out = String::new();
    for e in all {
        out.push_str(&format!(
            "{} (against {})\n",
            e.dir.display(),
            e.manifest.name
        ));
        let width = e
            .files
            .iter()
            .map(|f| f.path.len())
            .max()
            .unwrap_or(4)
            .min(60);
        out.push_str(&format!(
            "  {:<15} {:<width$}  {:>12}  {}\n",
            "VERDICT", "FILE", "BYTES", "SHA-256"
        ));
        for f in &e.files {
            let sha = f.sha256.as_deref().and_then(|s| s.get(..16)).unwrap_or("-");
            let bytes = f.bytes.map(|b| b.to_string()).unwrap_or_else(|| "-".into());
            out.push_str(&format!(
                "  {:<15} {:<width$}  {:>12}  {}",
                f.verdict.as_str(),
                f.path,
                bytes,
                sha
            ));
            if let Some(d) = &f.detail {
                out.push_str(&format!("  ({d})"));
            }
            out.push('\n');
        }
        out.push_str(&format!("{}\n", e.summary()));
    }
    out
}
