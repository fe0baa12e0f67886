//! `exhibit seal`: write the manifest of a campaign from what is on disk,
//! or show how the disk differs from an existing manifest.

use crate::error::EvidenceFailed;
use crate::error::{bail, Result};
use crate::evidence::{self, Verdict};
use crate::manifest::{self, Format, Manifest};
use std::path::Path;

pub struct SealReport {
    pub(crate) message: String,
}

/// Seal `dir`: write its manifest from what is on disk, or (`update`)
/// rewrite an existing one that differs; an existing one that differs
/// without `update` is reported, not changed.
pub fn seal(dir: &Path, update: bool) -> Result<SealReport> {
    check_sealable(dir)?;
    let existing = existing_manifest(dir)?;
    let listed = existing.clone().unwrap_or(Manifest {
        name: manifest::JSON_NAME.to_string(),
        format: Format::Json,
        entries: Vec::new(),
        sha256: String::new(),
        bytes: 0,
    });
    let (format, name) = (listed.format, listed.name.clone());
    let budget = std::sync::atomic::AtomicU64::new(evidence::KEEP_TOTAL);
    let opts = evidence::campaign_options(dir);
    let disk = evidence::list(dir, &opts)?;
    let ev = evidence::verify_with(dir, (listed, disk), &[name.as_str()], &budget, &opts)?;
    refuse_unsealable(dir, &ev)?;
    let changes = changes(&ev);
    let path = dir.join(&name);
    if existing.is_some() && changes.is_empty() {
        return Ok(SealReport {
            message: format!(
                "{} is up to date ({} files)",
                path.display(),
                ev.files.len()
            ),
        });
    }
    if existing.is_some() && !update {
        return Err(EvidenceFailed {
            report: format!(
                "{} differs from the files on disk:\n{}run `exhibit seal --update {}` to rewrite it",
                path.display(),
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
    crate::fsx::write(&path, text.as_bytes())?;
    let verb = if existing.is_some() {
        "updated"
    } else {
        "wrote"
    };
    Ok(SealReport {
        message: format!("{changes}{verb} {} ({} files)", path.display(), files.len()),
    })
}

/// Only a campaign folder, holding no built site, is sealed.
fn check_sealable(dir: &Path) -> Result<()> {
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
    refuse_built_sites(dir)
}

/// The campaign's manifest, when it has one (in either format).
fn existing_manifest(dir: &Path) -> Result<Option<Manifest>> {
    let json = dir.join(manifest::JSON_NAME);
    let sums = dir.join(manifest::SUMS_NAME);
    Ok(match (json.is_file(), sums.is_file()) {
        (false, false) => None,
        _ => Some(manifest::load(dir)?),
    })
}

/// Files that cannot be hashed (unsafe or unreadable) cannot be sealed:
/// name them all.
fn refuse_unsealable(dir: &Path, ev: &evidence::Evidence) -> Result<()> {
    let bad: Vec<_> = ev
        .files
        .iter()
        .filter(|f| {
            matches!(f.verdict, Verdict::UnsafePath | Verdict::Unreadable) && f.sha256.is_none()
        })
        .collect();
    if bad.is_empty() {
        return Ok(());
    }
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
    Err(EvidenceFailed {
        report: report.trim_end().into(),
    }
    .into())
}

/// One line per file the manifest would change for.
fn changes(ev: &evidence::Evidence) -> String {
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
    changes
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
