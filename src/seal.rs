//! `exhibit seal`: write the manifest of a campaign from what is on disk,
//! or show how the disk differs from an existing manifest.

use crate::error::EvidenceFailed;
use crate::evidence::{self, Verdict};
use crate::manifest::{self, Format, Manifest};
use anyhow::{bail, Result};
use std::path::Path;

pub struct SealReport {
    pub written: bool,
    pub message: String,
}

pub fn seal(dir: &Path, update: bool) -> Result<SealReport> {
    if !dir.is_dir() {
        bail!("`{}` is not a folder", dir.display());
    }
    if !dir.join(crate::campaign::META_NAME).is_file() {
        bail!(
            "`{}` has no {}: seal a campaign folder",
            dir.display(),
            crate::campaign::META_NAME
        );
    }
    refuse_built_sites(dir)?;
    let json = dir.join(manifest::JSON_NAME);
    let sums = dir.join(manifest::SUMS_NAME);
    let existing = match (json.is_file(), sums.is_file()) {
        (false, false) => None,
        _ => Some(manifest::load(dir)?),
    };
    let (format, name) = match &existing {
        Some(m) => (m.format, m.name.clone()),
        None => (Format::Json, manifest::JSON_NAME.to_string()),
    };
    let listed = existing.clone().unwrap_or(Manifest {
        name: name.clone(),
        format,
        entries: Vec::new(),
        sha256: String::new(),
        bytes: 0,
    });
    let budget = std::sync::atomic::AtomicU64::new(evidence::KEEP_TOTAL);
    let opts = evidence::campaign_options(dir);
    let ev = evidence::verify_with(dir, listed, &[name.as_str()], &budget, &opts)?;

    let bad: Vec<_> = ev
        .files
        .iter()
        .filter(|f| {
            matches!(f.verdict, Verdict::UnsafePath | Verdict::Unreadable) && f.sha256.is_none()
        })
        .collect();
    if !bad.is_empty() {
        let mut report = String::from("cannot seal: some files cannot be sealed\n");
        for f in bad {
            report.push_str(&format!(
                "  {:<15} {}",
                f.verdict.as_str(),
                evidence::shown(&dir.join(&f.path).display().to_string())
            ));
            if let Some(d) = &f.detail {
                report.push_str(&format!(" ({d})"));
            }
            report.push('\n');
        }
        return Err(EvidenceFailed {
            report: report.trim_end().into(),
        }
        .into());
    }

    let mut changes = String::new();
    for f in &ev.files {
        let what = match f.verdict {
            Verdict::Ok => continue,
            Verdict::Unlisted => "added",
            Verdict::Missing => "removed",
            Verdict::Modified | Verdict::SizeMismatch => "modified",
            Verdict::DuplicateEntry => "deduplicated",
            Verdict::UnsafePath => "removed",
            Verdict::Unreadable => "unreadable",
        };
        changes.push_str(&format!("  {what:<12} {}\n", evidence::shown(&f.path)));
    }
    if existing.is_some() && changes.is_empty() {
        return Ok(SealReport {
            written: false,
            message: format!(
                "{} is up to date ({} files)",
                dir.join(&name).display(),
                ev.files.len()
            ),
        });
    }
    if existing.is_some() && !update {
        return Err(EvidenceFailed {
            report: format!(
                "{} differs from the files on disk:\n{}run `exhibit seal --update {}` to rewrite it",
                dir.join(&name).display(),
                changes,
                dir.display()
            ),
        }
        .into());
    }

    let files: Vec<_> = ev
        .files
        .iter()
        .filter(|f| f.sha256.is_some() && f.verdict != Verdict::Missing)
        .collect();
    let rows: Vec<(&str, &str, u64)> = files.iter().map(|f| f.entry()).collect();
    let text = manifest::render(format, &rows)?;
    crate::fsx::write(&dir.join(&name), text.as_bytes())?;
    let verb = if existing.is_some() {
        "updated"
    } else {
        "wrote"
    };
    Ok(SealReport {
        written: true,
        message: format!(
            "{changes}{verb} {} ({} files)",
            dir.join(&name).display(),
            files.len()
        ),
    })
}

/// A built site inside a campaign would be sealed as evidence: refuse.
fn refuse_built_sites(dir: &Path) -> Result<()> {
    for entry in walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .filter_map(|e| e.ok())
    {
        if entry.file_name() == crate::layout::MARKER {
            let site = entry.path().parent().unwrap_or(dir);
            bail!(
                "`{}` is a site built by exhibit; move it out of the campaign before sealing",
                site.display()
            );
        }
    }
    Ok(())
}
