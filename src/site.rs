//! Last stage: verify, render and write the whole site beside OUT, write
//! SHA256SUMS and audit.json per campaign, then swap the new site in. Nothing
//! is written until every campaign has verified and rendered.

use crate::blocks::LedgerEntry;
use crate::campaign::{self, Campaign};
use crate::data::DataStore;
use crate::error::{EvidenceFailed, InputError};
use crate::evidence::{self, Evidence};
use crate::manifest::{self, Format as ManifestFormat};
use crate::page::{self, BlockRecord, Page};
use crate::render::{Theme, GENERATOR};
use anyhow::{bail, Result};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Marks a folder as written by exhibit, so a build may replace it.
pub const MARKER: &str = ".exhibit-site";

pub struct BuildOptions {
    pub root: PathBuf,
    pub out: PathBuf,
    pub theme: Option<PathBuf>,
}

#[derive(Debug)]
pub struct BuildReport {
    pub campaigns: usize,
    pub pages: usize,
    pub files: usize,
}

/// Load a campaign's manifest and check its files.
pub fn verify_campaign(c: &Campaign) -> Result<Evidence> {
    let m = manifest::load(&c.dir)?;
    let name = m.name.clone();
    evidence::verify(&c.dir, m, &[name.as_str()])
}

pub fn build(opts: &BuildOptions) -> Result<BuildReport> {
    let out_abs = absolute(&opts.out)?;
    let root_abs = crate::fsx::canonicalize(&opts.root)
        .map_err(|_| anyhow::anyhow!("campaign folder `{}` does not exist", opts.root.display()))?;
    if root_abs.starts_with(&out_abs) {
        bail!(
            "output `{}` would replace the input `{}`; choose another output folder",
            opts.out.display(),
            opts.root.display()
        );
    }
    check_replaceable(&opts.out)?;
    let campaigns = campaign::discover(&opts.root, Some(&opts.out))?;
    for c in &campaigns {
        if out_abs.starts_with(crate::fsx::canonicalize(&c.dir)?) {
            bail!(
                "output `{}` lies inside the campaign `{}`; choose a folder outside it",
                opts.out.display(),
                c.dir.display()
            );
        }
    }
    let theme = Theme::load(opts.theme.as_deref())?;

    let evidences = campaigns
        .iter()
        .map(verify_campaign)
        .collect::<Result<Vec<_>>>()?;
    let mut problems = String::new();
    for (c, e) in campaigns.iter().zip(&evidences) {
        if !e.all_ok() {
            problems.push_str(&format!(
                "{}: {}\n{}",
                c.dir.display(),
                e.summary(),
                e.problems()
            ));
        } else if e.verified_sha256(campaign::META_NAME) != Some(c.meta_sha256.as_str()) {
            problems.push_str(&format!(
                "  modified        {} (changed while the build read it)\n",
                c.path(campaign::META_NAME).display()
            ));
        }
    }
    if !problems.is_empty() {
        return Err(EvidenceFailed {
            report: format!(
                "refusing to publish: the evidence does not match the manifest\n{}",
                problems.trim_end()
            ),
        }
        .into());
    }

    let outputs = campaigns
        .iter()
        .zip(&evidences)
        .map(|(c, e)| render_campaign(c, e, &theme))
        .collect::<Result<Vec<_>>>()?;
    let index = render_index(&campaigns, &evidences, &theme)?;

    let staging = sibling(&opts.out, "exhibit-staging")?;
    if staging.exists() {
        crate::fsx::remove_dir_all(&staging)?;
    }
    let written = write_site(&staging, &outputs, &index, &theme);
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    swap_in(&staging, &opts.out)?;
    Ok(BuildReport {
        campaigns: campaigns.len(),
        pages: outputs.iter().map(|o| o.pages).sum(),
        files: evidences.iter().map(|e| e.files.len()).sum(),
    })
}

/// Everything one campaign publishes, ready to write.
struct CampaignOutput {
    id: String,
    /// (path in the campaign folder of the site, contents)
    generated: Vec<(String, Vec<u8>)>,
    /// (published path, source file, verified sha256)
    copies: Vec<(String, PathBuf, String)>,
    audit: AuditBase,
    pages: usize,
}

#[derive(Serialize)]
struct AuditBase {
    generator: &'static str,
    campaign: campaign::Meta,
    verification: Verification,
    files: Vec<AuditFile>,
    blocks: Vec<BlockRecord>,
    ledger: Vec<LedgerEntry>,
}

#[derive(Serialize)]
struct Verification {
    manifest: String,
    format: ManifestFormat,
    sha256: String,
    summary: String,
    all_ok: bool,
}

#[derive(Serialize)]
struct AuditFile {
    path: String,
    bytes: u64,
    sha256: String,
    verdict: &'static str,
    published: String,
}

#[derive(Serialize)]
struct NavItem {
    title: String,
    href: String,
    current: bool,
}

fn nav(c: &Campaign, current: &str) -> Vec<NavItem> {
    let mut items: Vec<NavItem> = c
        .meta
        .pages
        .iter()
        .enumerate()
        .map(|(i, p)| (p.title.clone(), c.page_output(i)))
        .chain([
            ("Failure ledger".to_string(), "ledger.html".to_string()),
            ("Manifest".to_string(), "manifest.html".to_string()),
        ])
        .map(|(title, href)| NavItem {
            current: href == current,
            title,
            href,
        })
        .collect();
    items.dedup_by(|a, b| a.href == b.href);
    items
}

fn base_context(c: &Campaign, current: &str, title: &str, theme: &Theme) -> tera::Context {
    let mut ctx = tera::Context::new();
    ctx.insert("generator", GENERATOR);
    ctx.insert("root", "../");
    ctx.insert("css", &theme.css);
    ctx.insert("campaign", &c.meta);
    ctx.insert("nav", &nav(c, current));
    ctx.insert("is_main", &(current == "index.html"));
    ctx.insert("page_title", title);
    ctx.insert("toc", &Vec::<page::Heading>::new());
    ctx
}

#[derive(Serialize)]
struct ManifestRow<'a> {
    path: &'a str,
    href: String,
    bytes: String,
    sha256: &'a str,
    verdict: &'static str,
}

fn render_campaign(c: &Campaign, e: &Evidence, theme: &Theme) -> Result<CampaignOutput> {
    let store = DataStore::new(e);
    let pages: Vec<Page> = (0..c.meta.pages.len())
        .map(|i| page::render(c, e, &store, i))
        .collect::<Result<_>>()?;

    let mut generated = Vec::new();
    for p in &pages {
        let mut ctx = base_context(c, &p.output, &p.title, theme);
        ctx.insert("content", &p.html);
        ctx.insert(
            "toc",
            &p.toc.iter().filter(|h| h.level >= 2).collect::<Vec<_>>(),
        );
        generated.push((
            p.output.clone(),
            theme.render("page.html", &ctx)?.into_bytes(),
        ));
    }

    let mut seen = BTreeSet::new();
    let ledger: Vec<LedgerEntry> = pages
        .iter()
        .flat_map(|p| p.ledger.iter())
        .filter(|l| seen.insert(l.id.clone()))
        .cloned()
        .collect();
    let mut ctx = base_context(c, "ledger.html", "Failure ledger", theme);
    ctx.insert("count", &ledger.len());
    ctx.insert("ledger", &crate::blocks::entries_table(&ledger));
    generated.push((
        "ledger.html".into(),
        theme.render("ledger.html", &ctx)?.into_bytes(),
    ));

    let published_manifest = match e.manifest.format {
        ManifestFormat::Json => manifest::JSON_NAME.to_string(),
        ManifestFormat::Sha256sums => "campaign.sha256".to_string(),
    };
    let thousands = crate::expr::Format::parse(",").unwrap_or_default();
    let rows: Vec<ManifestRow> = e
        .files
        .iter()
        .map(|f| ManifestRow {
            path: &f.path,
            href: campaign::published_name(&f.path),
            bytes: thousands.apply(f.bytes.unwrap_or(0) as f64),
            sha256: f.sha256.as_deref().unwrap_or(""),
            verdict: f.verdict.as_str(),
        })
        .collect();
    let mut ctx = base_context(c, "manifest.html", "Manifest", theme);
    ctx.insert("files", &rows);
    ctx.insert("summary", &e.summary());
    ctx.insert("all_ok", &e.all_ok());
    ctx.insert(
        "manifest",
        &serde_json::json!({"name": e.manifest.name, "href": published_manifest, "sha256": e.manifest.sha256}),
    );
    generated.push((
        "manifest.html".into(),
        theme.render("manifest.html", &ctx)?.into_bytes(),
    ));

    // Every campaign file is published at its own path (active content renamed).
    let mut copies: Vec<(String, PathBuf, String)> = e
        .files
        .iter()
        .map(|f| {
            (
                campaign::published_name(&f.path),
                c.path(&f.path),
                f.sha256.clone().unwrap_or_default(),
            )
        })
        .collect();
    copies.push((
        published_manifest,
        c.path(&e.manifest.name),
        e.manifest.sha256.clone(),
    ));
    let mut taken: BTreeSet<String> = generated.iter().map(|(p, _)| p.clone()).collect();
    taken.extend(["audit.json".to_string(), manifest::SUMS_NAME.to_string()]);
    for (published, src, _) in &copies {
        if !taken.insert(published.clone()) {
            return Err(InputError::new(src, 0, 0, format!("`{published}` would collide with another file of the published campaign; rename this file")).into());
        }
    }

    let audit = AuditBase {
        generator: GENERATOR,
        campaign: c.meta.clone(),
        verification: Verification {
            manifest: e.manifest.name.clone(),
            format: e.manifest.format,
            sha256: e.manifest.sha256.clone(),
            summary: e.summary(),
            all_ok: e.all_ok(),
        },
        files: e
            .files
            .iter()
            .map(|f| AuditFile {
                path: f.path.clone(),
                bytes: f.bytes.unwrap_or(0),
                sha256: f.sha256.clone().unwrap_or_default(),
                verdict: f.verdict.as_str(),
                published: campaign::published_name(&f.path),
            })
            .collect(),
        blocks: pages
            .iter()
            .flat_map(|p| p.blocks.iter().cloned())
            .collect(),
        ledger,
    };
    Ok(CampaignOutput {
        id: c.meta.id.clone(),
        generated,
        copies,
        audit,
        pages: pages.len(),
    })
}

#[derive(Serialize)]
struct IndexEntry<'a> {
    id: &'a str,
    title: &'a str,
    date: &'a str,
    state: &'a str,
    decision: &'a str,
    summary: Option<&'a str>,
    files: usize,
}

fn render_index(campaigns: &[Campaign], evidences: &[Evidence], theme: &Theme) -> Result<Vec<u8>> {
    let mut entries: Vec<IndexEntry> = campaigns
        .iter()
        .zip(evidences)
        .map(|(c, e)| IndexEntry {
            id: &c.meta.id,
            title: &c.meta.title,
            date: &c.meta.date,
            state: &c.meta.state,
            decision: &c.meta.decision,
            summary: c.meta.summary.as_deref(),
            files: e.files.len(),
        })
        .collect();
    entries.sort_by(|a, b| b.date.cmp(a.date).then(a.id.cmp(b.id)));
    let mut ctx = tera::Context::new();
    ctx.insert("generator", GENERATOR);
    ctx.insert("root", "");
    ctx.insert("css", &theme.css);
    ctx.insert("campaigns", &entries);
    ctx.insert("toc", &Vec::<page::Heading>::new());
    Ok(theme.render("index.html", &ctx)?.into_bytes())
}

fn write_site(
    staging: &Path,
    outputs: &[CampaignOutput],
    index: &[u8],
    theme: &Theme,
) -> Result<()> {
    crate::fsx::create_dir_all(staging)?;
    crate::fsx::write(
        &staging.join(MARKER),
        b"Written by exhibit. `exhibit build` replaces this folder whole.\n",
    )?;
    crate::fsx::write(&staging.join("index.html"), index)?;
    for a in &theme.assets {
        crate::fsx::write(&staging.join(&a.path), &a.bytes)?;
    }
    for o in outputs {
        let dir = staging.join(&o.id);
        // published path -> (sha256, bytes)
        let mut sums: BTreeMap<String, String> = BTreeMap::new();
        for (rel, bytes) in &o.generated {
            crate::fsx::write(&dir.join(rel), bytes)?;
            sums.insert(rel.clone(), crate::hash::sha256_bytes(bytes));
        }
        for (rel, src, expected) in &o.copies {
            let (sha, _) = crate::hash::copy_hashed(src, &dir.join(rel))?;
            if &sha != expected {
                return Err(EvidenceFailed {
                    report: format!(
                        "`{}` changed after it was verified; nothing was published",
                        src.display()
                    ),
                }
                .into());
            }
            sums.insert(rel.clone(), sha);
        }
        let mut audit = serde_json::to_string_pretty(&o.audit)?;
        audit.push('\n');
        crate::fsx::write(&dir.join("audit.json"), audit.as_bytes())?;
        sums.insert(
            "audit.json".into(),
            crate::hash::sha256_bytes(audit.as_bytes()),
        );
        let text: String = sums
            .iter()
            .map(|(p, h)| manifest::sums_line(h, p))
            .collect();
        crate::fsx::write(&dir.join(manifest::SUMS_NAME), text.as_bytes())?;
    }
    Ok(())
}

/// `OUT` may be replaced only when it is absent, empty, or written by exhibit.
fn check_replaceable(out: &Path) -> Result<()> {
    if !out.exists() {
        return Ok(());
    }
    if !out.is_dir() {
        bail!("output `{}` exists and is not a folder", out.display());
    }
    let empty = std::fs::read_dir(out)
        .map(|mut d| d.next().is_none())
        .unwrap_or(false);
    if !empty && !out.join(MARKER).is_file() {
        bail!(
            "refusing to replace `{}`: it is not empty and was not written by exhibit (it has no {MARKER}); choose another output folder or remove it",
            out.display()
        );
    }
    Ok(())
}

/// A hidden folder next to `out`: `.NAME.TAG`.
fn sibling(out: &Path, tag: &str) -> Result<PathBuf> {
    let name = out
        .file_name()
        .ok_or_else(|| anyhow::anyhow!("output `{}` has no folder name", out.display()))?;
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Ok(parent.join(format!(".{}.{tag}", name.to_string_lossy())))
}

fn swap_in(staging: &Path, out: &Path) -> Result<()> {
    if !out.exists() {
        return crate::fsx::rename(staging, out);
    }
    let old = sibling(out, "exhibit-old")?;
    if old.exists() {
        crate::fsx::remove_dir_all(&old)?;
    }
    crate::fsx::rename(out, &old)?;
    if let Err(e) = crate::fsx::rename(staging, out) {
        let _ = std::fs::rename(&old, out);
        let _ = std::fs::remove_dir_all(staging);
        return Err(e);
    }
    crate::fsx::remove_dir_all(&old)
}

/// An absolute form of a path that may not exist yet.
fn absolute(p: &Path) -> Result<PathBuf> {
    if let Ok(c) = p.canonicalize() {
        return Ok(c);
    }
    let name = p
        .file_name()
        .ok_or_else(|| anyhow::anyhow!("`{}` has no folder name", p.display()))?;
    let parent = p
        .parent()
        .filter(|x| !x.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let parent = parent
        .canonicalize()
        .map_err(|_| anyhow::anyhow!("the folder holding `{}` does not exist", p.display()))?;
    Ok(parent.join(name))
}
