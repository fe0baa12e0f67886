//! `exhibit verify`: audit a campaign folder, or a published site folder
//! through its SHA256SUMS, and report one verdict per file.

use crate::commit::{Key, Sealed};
use crate::copies::Commitment;
use crate::error::{bail, Result};
use crate::evidence::{self, Evidence, Verdict};
use crate::manifest::{self, Format};
use serde::Serialize;
use std::path::Path;

/// A manifest hash given with `--expect`: `SHA256` alone (one campaign) or
/// `ID=SHA256`. It pins the manifest a campaign was shared with, so a
/// manifest rewritten together with its files is caught.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub(crate) id: Option<String>,
    pub(crate) sha256: String,
}

impl std::str::FromStr for Pin {
    type Err = String;
    fn from_str(s: &str) -> Result<Pin, String> {
        let (id, hash) = match s.split_once('=') {
            Some((id, hash)) => (Some(id.to_string()), hash),
            None => (None, s),
        };
        if id.as_deref() == Some("") {
            return Err("the campaign id before `=` is empty".into());
        }
        let sha256 = manifest::check_hash(hash)?;
        Ok(Pin { id, sha256 })
    }
}

/// The pin for campaign `id` among `pins`, one of `count` campaigns; an
/// id-less pin is for a lone campaign only.
pub(crate) fn pin_for<'a>(pins: &'a [Pin], id: &str, count: usize) -> Option<&'a Pin> {
    pins.iter()
        .find(|p| p.id.as_deref() == Some(id))
        .or_else(|| pins.iter().find(|p| p.id.is_none() && count == 1))
}

/// Every pin must name a campaign that is there, and an id-less pin needs
/// exactly one campaign: a pin that checks nothing is an error (exit 2).
pub(crate) fn check_pins(pins: &[Pin], ids: &[String]) -> Result<()> {
    for p in pins {
        match &p.id {
            Some(id) if !ids.contains(id) => bail!(
                "--expect names the campaign `{id}`, which is not here (campaigns: {})",
                ids.join(", ")
            ),
            None if ids.len() != 1 => bail!(
                "--expect without a campaign id needs exactly one campaign, found {}; write --expect ID=SHA256 for each",
                ids.len()
            ),
            _ => {}
        }
    }
    Ok(())
}

/// The line a broken pin adds to a report.
pub(crate) fn pin_detail(found: &str, pin: &Pin) -> String {
    format!("manifest hash {found} is not the pinned {}", pin.sha256)
}

/// Verify `path`: a campaign, a published campaign, or a whole built site.
pub(crate) fn verify(path: &Path, pins: &[Pin]) -> Result<Vec<Evidence>> {
    if !path.is_dir() {
        bail!("`{}` is not a folder", path.display());
    }
    let has = |n: &str| path.join(n).is_file();
    // A site's root carries a SHA256SUMS too: look for the marker first.
    if has(crate::layout::MARKER) {
        return site(path, pins);
    }
    // A published campaign carries its source manifest too; its SHA256SUMS
    // (beside audit.json) is the one that covers what was published.
    if has(manifest::SUMS_NAME) && has(crate::layout::AUDIT) {
        let id = folder_name(path);
        check_pins(pins, std::slice::from_ref(&id))?;
        return Ok(vec![published(path, pin_for(pins, &id, 1))?]);
    }
    if has(manifest::JSON_NAME) || has(manifest::SUMS_NAME) {
        let opts = evidence::campaign_options(path);
        // The folder is walked while the manifest loads; a broken
        // manifest is reported first, then a pin that names no campaign
        // here, then a folder that cannot be listed, as one after another.
        let (m, disk) = rayon::join(|| manifest::load(path), || evidence::list(path, &opts));
        let m = m?;
        let name = m.name.clone();
        let id = crate::campaign::load(path)
            .map(|c| c.meta.id)
            .unwrap_or_else(|_| folder_name(path));
        check_pins(pins, std::slice::from_ref(&id))?;
        let mut ev = evidence::verify(path, (m, disk?), &[name.as_str()], &opts)?;
        if let Some(pin) = pin_for(pins, &id, 1) {
            if ev.manifest.sha256 != pin.sha256 {
                ev.files.push(evidence::FileCheck {
                    path: name,
                    verdict: Verdict::Modified,
                    expected_sha256: Some(pin.sha256.clone()),
                    expected_bytes: None,
                    sha256: Some(ev.manifest.sha256.clone()),
                    bytes: Some(ev.manifest.bytes),
                    detail: Some(pin_detail(&ev.manifest.sha256, pin)),
                });
                ev.files.sort_by(|a, b| a.path.cmp(&b.path));
            }
        }
        return Ok(vec![ev]);
    }
    bail!(
        "`{}` has no manifest.json or SHA256SUMS: nothing to verify against",
        path.display()
    )
}

fn folder_name(path: &Path) -> String {
    crate::fsx::canonicalize(path)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default()
}

/// A whole built site: the root SHA256SUMS covers every file outside the
/// campaign folders and each campaign's own SHA256SUMS, which covers the
/// rest; anything else at the root is unlisted.
fn site(path: &Path, pins: &[Pin]) -> Result<Vec<Evidence>> {
    let sums = path.join(manifest::SUMS_NAME);
    if !sums.is_file() {
        return Err(crate::error::EvidenceFailed {
            report: format!(
                "`{}` is an exhibit site without its {}: rebuild it with this version of exhibit",
                path.display(),
                manifest::SUMS_NAME
            ),
        }
        .into());
    }
    let m = manifest::load_file(&sums, Format::Sha256sums)?;
    let tail = format!("/{}", manifest::SUMS_NAME);
    let campaigns: Vec<String> = m
        .entries
        .iter()
        .filter_map(|e| e.path.strip_suffix(tail.as_str()))
        .filter(|d| !d.is_empty() && !d.contains('/') && *d != "." && *d != "..")
        .map(str::to_string)
        .collect();
    let opts = evidence::Options {
        listed_only: campaigns.clone(),
        ..Default::default()
    };
    let disk = evidence::list(path, &opts)?;
    let root = evidence::verify(path, (m, disk), &[manifest::SUMS_NAME], &opts)?;
    let mut dirs: Vec<_> = std::fs::read_dir(path)
        .map_err(|e| crate::error::Error::failed("list", path, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join(manifest::SUMS_NAME).is_file())
        .collect();
    dirs.sort();
    let ids: Vec<String> = dirs.iter().map(|d| folder_name(d)).collect();
    check_pins(pins, &ids)?;
    let mut out = vec![root];
    for (d, id) in dirs.iter().zip(&ids) {
        out.push(published(d, pin_for(pins, id, ids.len()))?);
    }
    if out.len() == 1 {
        bail!(
            "`{}` is an exhibit site but holds no campaign with a SHA256SUMS",
            path.display()
        );
    }
    Ok(out)
}

/// A published campaign folder: every file against the site's SHA256SUMS,
/// and every file audit.json says was published must be among them.
/// With a `pin`, the source manifest's hash that the build recorded in
/// audit.json must be the pinned one.
fn published(dir: &Path, pin: Option<&Pin>) -> Result<Evidence> {
    let opts = evidence::Options::default();
    let load = || manifest::load_file(&dir.join(manifest::SUMS_NAME), Format::Sha256sums);
    let listed = evidence::load_and_list(dir, &opts, load)?;
    let mut ev = evidence::verify(dir, listed, &[manifest::SUMS_NAME], &opts)?;
    let audit_path = dir.join(crate::layout::AUDIT);
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
    // The source manifest's hash as the build recorded it. The published
    // copy of the manifest is not compared: a build may rewrite it to name
    // redacted copies, so its own hash need not be the source's.
    if let Some(pin) = pin.filter(|p| p.sha256 != audit.verification.sha256) {
        let detail = pin_detail(&audit.verification.sha256, pin) + " (as audit.json records it)";
        match ev.files.iter_mut().find(|f| f.path == crate::layout::AUDIT) {
            Some(f) => {
                f.verdict = Verdict::Modified;
                f.detail = Some(detail);
            }
            None => ev.files.push(evidence::FileCheck {
                path: crate::layout::AUDIT.into(),
                verdict: Verdict::Missing,
                expected_sha256: None,
                expected_bytes: None,
                sha256: None,
                bytes: None,
                detail: Some(detail),
            }),
        }
    }
    if let Some(shown) = &audit.verification.digest {
        check_digest(dir, &mut ev, shown)?;
    }
    ev.files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(ev)
}

/// The publication digest, recomputed from the campaign's SHA256SUMS by
/// the documented rule, must be the one audit.json records and the one
/// every page shows (in its "Cite this" block and its print margins).
/// Sites from before the digest record none and are not asked for one.
fn check_digest(dir: &Path, ev: &mut Evidence, recorded: &str) -> Result<()> {
    let sums = crate::fsx::read_to_string(&dir.join(manifest::SUMS_NAME))?;
    let digest = crate::site::digest::of_sums_text(&sums);
    let pages: Vec<String> = ev
        .files
        .iter()
        .filter(|f| f.verdict == Verdict::Ok && f.path.ends_with(".html"))
        .map(|f| f.path.clone())
        .collect();
    let mut flag = |path: &str, why: String| {
        if let Some(f) = ev.files.iter_mut().find(|f| f.path == path) {
            if f.verdict == Verdict::Ok {
                f.verdict = Verdict::Modified;
                f.detail = Some(why);
            }
        }
    };
    if recorded != digest {
        flag(
            crate::layout::AUDIT,
            format!("records the publication digest {recorded}, but SHA256SUMS gives {digest}"),
        );
    }
    for page in pages {
        let text = std::fs::read(dir.join(&page)).unwrap_or_default();
        let shown = shown_digests(&String::from_utf8_lossy(&text));
        if shown.is_empty() {
            flag(
                &page,
                format!("shows no publication digest; SHA256SUMS gives {digest}"),
            );
        } else if let Some(wrong) = shown.iter().find(|d| **d != digest) {
            flag(
                &page,
                format!("shows the publication digest {wrong}, but SHA256SUMS gives {digest}"),
            );
        }
    }
    Ok(())
}

/// Every digest a page shows: each `sha256:` value in its "Cite this"
/// block, and the one its print margins carry.
fn shown_digests(html: &str) -> Vec<String> {
    static CITE: std::sync::OnceLock<[regex::Regex; 3]> = std::sync::OnceLock::new();
    let [cite, value, margin] = CITE.get_or_init(|| {
        [
            r#"(?s)<section class="cite"[^>]*>.*?</section>"#,
            r"sha256:[0-9A-Za-z]*",
            r#"content: "Digest (sha256:[0-9A-Za-z]*)""#,
        ]
        .map(|p| regex::Regex::new(p).expect("valid digest pattern"))
    });
    let mut out: Vec<String> = cite
        .find_iter(html)
        .flat_map(|block| value.find_iter(block.as_str()))
        .map(|m| m.as_str().to_string())
        .collect();
    out.extend(margin.captures_iter(html).map(|c| c[1].to_string()));
    out
}

/// The part of audit.json that verification reads.
#[derive(serde::Deserialize)]
struct AuditFiles {
    files: Vec<AuditFile>,
    verification: AuditVerification,
}

#[derive(serde::Deserialize)]
struct AuditVerification {
    #[serde(default)]
    manifest: String,
    /// The publication digest (sites from before it have none).
    #[serde(default)]
    digest: Option<String>,
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
pub(crate) fn against_sealed(site: &Path, sealed: &Path, key: &Key) -> Result<Evidence> {
    if !(site.join(manifest::SUMS_NAME).is_file() && site.join(crate::layout::AUDIT).is_file()) {
        bail!(
            "`{}` is not a published campaign (no SHA256SUMS and audit.json): `--sealed` checks one campaign folder of a site",
            site.display()
        );
    }
    let mut ev = published(site, None)?;
    let opts = evidence::Options::default();
    let (m, disk) = evidence::load_and_list(sealed, &opts, || manifest::load(sealed))?;
    let name = m.name.clone();
    let (m_sha, m_bytes) = (m.sha256.clone(), m.bytes);
    let originals = evidence::verify(sealed, (m, disk), &[name.as_str()], &opts)?;
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
    let audit_path = site.join(crate::layout::AUDIT);
    let text = crate::fsx::read_to_string(&audit_path)?;
    let audit: AuditFiles = serde_json::from_str(&text)
        .map_err(|e| crate::error::InputError::json(&audit_path, &text, 0, &e))?;
    let mut sealed_files: Vec<Original> = originals.files.iter().map(Original::of).collect();
    sealed_files.push(Original {
        path: &name,
        sha256: &m_sha,
        bytes: m_bytes,
    });
    let index = Originals::new(&sealed_files, key);
    let mut rows: Vec<Copied> = audit.files.into_iter().map(Copied::of).collect();
    let v = audit.verification;
    rows.push(Copied {
        published: v.manifest.clone(),
        public: v.manifest,
        sha256: v.sha256,
        commitment: v.sealed,
    });
    let mut matched = std::collections::HashSet::new();
    for row in rows {
        let (original, verdict) = index.judge(&row);
        matched.extend(original);
        if let Err(why) = verdict {
            match ev.files.iter_mut().find(|f| f.path == row.published) {
                Some(f) => {
                    f.verdict = Verdict::Modified;
                    f.detail = Some(why.to_string());
                }
                None => ev.files.push(not_published(row.published, why)),
            }
        }
    }
    let det = crate::redact::Detector::builtin();
    for o in &sealed_files {
        if !matched.contains(o.path) {
            // The original's own name may be private: shown masked.
            ev.files.push(not_published(
                crate::redact::mask_name(&det, o.path),
                "in the sealed campaign but not among the published copies",
            ));
        }
    }
    ev.files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(ev)
}

/// A file of the sealed campaign, as verified.
#[derive(Clone, Copy)]
struct Original<'a> {
    path: &'a str,
    sha256: &'a str,
    bytes: u64,
}

impl<'a> Original<'a> {
    fn of(f: &'a evidence::FileCheck) -> Self {
        let (path, sha256, bytes) = f.entry();
        Original {
            path,
            sha256,
            bytes,
        }
    }
}

/// A published copy as audit.json records it.
struct Copied {
    /// Where it is published in the campaign folder.
    published: String,
    /// Its public (redacted) path.
    public: String,
    sha256: String,
    commitment: Option<Commitment>,
}

impl Copied {
    fn of(f: AuditFile) -> Self {
        Copied {
            published: f.published,
            public: f.path,
            sha256: f.sha256,
            commitment: f.sealed,
        }
    }
}

/// The sealed originals by keyed path tag (for redacted copies) and by
/// path (for copies published as they are).
struct Originals<'a> {
    key: &'a Key,
    by_tag: std::collections::HashMap<String, Original<'a>>,
    by_path: std::collections::HashMap<&'a str, Original<'a>>,
}

impl<'a> Originals<'a> {
    fn new(files: &[Original<'a>], key: &'a Key) -> Self {
        Originals {
            key,
            by_tag: files.iter().map(|&f| (key.path_tag(f.path), f)).collect(),
            by_path: files.iter().map(|&f| (f.path, f)).collect(),
        }
    }

    /// Which original a copy is of, and whether it is a true copy of it
    /// (or why not).
    fn judge(&self, row: &Copied) -> (Option<&'a str>, Result<(), &'static str>) {
        match &row.commitment {
            Some(c) => match self.by_tag.get(&c.path_tag) {
                None => (None, Err("no file of the sealed campaign has this copy's path tag (another campaign, or another key)")),
                Some(o) => {
                    let expected = self.key.commit(&Sealed {
                        path: o.path,
                        sha256: o.sha256,
                        bytes: o.bytes,
                        published_sha256: &row.sha256,
                    });
                    let verdict = if expected == c.hmac_sha256 {
                        Ok(())
                    } else {
                        Err("the keyed commitment does not match the sealed original")
                    };
                    (Some(o.path), verdict)
                }
            },
            None => match self.by_path.get(row.public.as_str()) {
                Some(o) => {
                    let verdict = if o.sha256 == row.sha256 {
                        Ok(())
                    } else {
                        Err("published as it is, but its hash is not the sealed original's (or the copy was redacted without a key)")
                    };
                    (Some(o.path), verdict)
                }
                None => (None, Err("not in the sealed campaign (or its name was redacted and the site was built without a key)")),
            },
        }
    }
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

pub(crate) fn to_json(all: &[Evidence]) -> Result<String> {
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

pub(crate) fn to_text(all: &[Evidence]) -> String {
    use std::fmt::Write;
    // About a hundred bytes a line: one allocation for most reports.
    let lines: usize = all.iter().map(|e| e.files.len() + 3).sum();
    let mut out = String::with_capacity(lines * 112);
    for e in all {
        let _ = writeln!(out, "{} (against {})", e.dir.display(), e.manifest.name);
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
            let _ = write!(
                out,
                "  {:<15} {:<width$}  {:>12}  {}",
                f.verdict.as_str(),
                evidence::shown(&f.path),
                bytes,
                sha
            );
            if let Some(d) = &f.detail {
                let _ = write!(out, "  ({d})");
            }
            out.push('\n');
        }
        out.push_str(&e.summary());
        out.push('\n');
    }
    out
}
