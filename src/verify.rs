//! `exhibit verify`: audit a campaign folder, or a published site folder
//! through its SHA256SUMS, and report one verdict per file.

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
}

#[derive(serde::Deserialize)]
struct AuditFile {
    published: String,
    sha256: String,
    /// The hash of the published copy; absent in sites from before
    /// redaction, where the copy was the original.
    #[serde(default)]
    published_sha256: Option<String>,
    bytes: u64,
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
