//! The rescan: the staged site read again by the build's detectors (and
//! the script gate) before it is swapped in; a finding fails the build
//! and names file, line and category only.

use super::write::Written;
use crate::error::EvidenceFailed;
use crate::error::Result;
use crate::redact::{scan, Redactor};
use std::path::Path;

/// Where a private value was found in the written site (sorted by file,
/// line, column).
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Place {
    file: String,
    line: usize,
    column: usize,
    category: &'static str,
}

/// Scan the written site with the same detectors; anything found fails
/// the build, and the report names file, line and category only.
/// `prescanned`: the files scanned while they were written were scanned
/// by this same detector, so their findings stand and they are not read
/// back. `memo`: the preview's chunks of text found clean by earlier
/// builds (a save changes a line or two of audit.json), not searched
/// again, and its pieces of markup the gate passed, not read again.
pub(super) fn rescan(
    staging: &Path,
    r: &Redactor,
    (written, prescanned): (&Written, bool),
    memo: Option<(&scan::CleanChunks, &scan::CleanChunks)>,
) -> Result<()> {
    let (clean, gated) = (memo.map(|m| m.0), memo.map(|m| m.1));
    // Binaries and archives were scanned as inputs and copied as they are
    // (findings in them refused or accepted by hash): not read again.
    // No script-capable markup, whatever wrote it (theme overrides too).
    let gate = || crate::gate::check_tree(staging, gated);
    // Copies published as they are were found clean by the input scan, and
    // files scanned as they were written were scanned then: both only by
    // the detector before the pages met secrets by key. A secret learned
    // from a page is looked for in them too.
    let skip = &|rel: &str| {
        written.unscanned.contains(rel)
            || (prescanned
                && (written.verbatim.contains(rel) || written.prescanned.contains_key(rel)))
    };
    let scan = || scan::scan_path_except(&r.detector, staging, &|rel| rel.to_string(), skip, clean);
    // The gate runs beside the scan: in a build, the gate's pages fill
    // what the scan of audit.json (its chunks one after another) leaves of
    // the two cores; in the preview, a save's staging holds what it
    // changed, audit.json most of it. Together they hold a scan's chunk
    // and a few pages.
    let (passed, report) = rayon::join(gate, scan);
    passed?;
    let report = report?;
    let unscanned = &written.unscanned;
    let mut found: Vec<Place> = report
        .findings
        .iter()
        .map(|f| Place {
            file: f.file.clone(),
            line: f.line,
            column: f.column,
            category: f.category.as_str(),
        })
        .collect();
    let mut binary = report.binary.clone();
    if prescanned {
        for (rel, s) in &written.prescanned {
            found.extend(s.hits.iter().map(|(line, column, h)| Place {
                file: rel.clone(),
                line: *line,
                column: *column,
                category: h.category.as_str(),
            }));
            if s.binary {
                binary.push(rel.clone());
            }
        }
    }
    found.sort();
    binary.sort();
    let mut problems = String::new();
    for Place {
        file,
        line,
        column,
        category,
    } in &found
    {
        problems.push_str(&format!("  {file}:{line}:{column}: {category}\n"));
    }
    for b in &report.skipped {
        problems.push_str(&format!("  {b}: output that could not be scanned\n"));
    }
    for b in binary.iter().filter(|b| !unscanned.contains(*b)) {
        problems.push_str(&format!("  {b}: binary output that was never scanned\n"));
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(EvidenceFailed {
        report: format!(
            "refusing to publish: the written site still holds private values (the previous site is unchanged)\n{}",
            problems.trim_end()
        ),
    }
    .into())
}
