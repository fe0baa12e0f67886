//! The first two stages of a build: load (check OUT may be written, find
//! the campaigns, check the pins, load the theme) and verify (every
//! campaign's files against its manifest). The verify stage is the last
//! to judge a file: later stages read its verdicts and never change them.

use super::{BuildCache, BuildOptions, BuildReport};
use crate::campaign::{self, Campaign};
use crate::error::EvidenceFailed;
use crate::error::{bail, Result};
use crate::evidence::{self, Edit, Evidence};
use crate::manifest;
use crate::render::{PendingTheme, Theme};
use std::path::PathBuf;

/// What the load stage hands on.
pub(super) struct Loaded {
    /// OUT, absolute.
    pub(crate) out_abs: PathBuf,
    pub(crate) campaigns: Vec<Campaign>,
    pub(crate) theme: PendingTheme,
}

/// The load stage: the campaigns under the root, none of them holding
/// OUT nor held by it, with the manifest hashes `--expect` pins.
pub(super) fn load(opts: &BuildOptions, cache: Option<&BuildCache>) -> Result<Loaded> {
    // The built-in theme compiles beside the stages before the render
    // stage; a theme folder is read here, so its errors come first.
    let builtin = (cache.is_none() && opts.theme.is_none()).then(PendingTheme::builtin);
    let out_abs = super::staging::absolute(&opts.out)?;
    let root_abs = crate::fsx::canonicalize(&opts.root).map_err(|_| {
        crate::error::Error::Invalid(format!(
            "campaign folder `{}` does not exist",
            opts.root.display()
        ))
    })?;
    if root_abs.starts_with(&out_abs) {
        bail!(
            "output `{}` would replace the input `{}`; choose another output folder",
            opts.out.display(),
            opts.root.display()
        );
    }
    super::staging::check_replaceable(&opts.out)?;
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
    let ids: Vec<String> = campaigns.iter().map(|c| c.meta.id.clone()).collect();
    crate::verify::check_pins(&opts.expect, &ids)?;
    let theme = match (builtin, cache) {
        (Some(builtin), _) => builtin,
        (None, Some(c)) => PendingTheme::ready(Theme::load_kept(opts.theme.as_deref(), &c.theme)?),
        (None, None) => {
            PendingTheme::ready(std::sync::Arc::new(Theme::load(opts.theme.as_deref())?))
        }
    };
    Ok(Loaded {
        out_abs,
        campaigns,
        theme,
    })
}

/// What the verify stage hands on: one [`Evidence`] per campaign, and
/// the preview's edits taken as they are.
pub(super) struct Verified {
    pub(crate) evidences: Vec<Evidence>,
    /// Preview only: the files published although they do not match the
    /// manifest, by campaign (see [`Evidence::accept_edits`]).
    pub(crate) edits: Vec<Vec<Edit>>,
}

impl Verified {
    /// The build's report, in the terms of its campaigns.
    pub(super) fn report(&self, campaigns: &[Campaign]) -> BuildReport {
        let unverified = campaigns
            .iter()
            .zip(&self.edits)
            .flat_map(|(c, edits)| {
                edits
                    .iter()
                    .map(move |e| format!("{}/{}: {}", c.meta.id, e.path, e.verdict.as_str()))
            })
            .collect();
        BuildReport {
            campaigns: campaigns.len(),
            pages: campaigns.iter().map(|c| c.meta.pages.len()).sum(),
            files: self.evidences.iter().map(|e| e.files.len()).sum(),
            unverified,
        }
    }
}

fn verify_one(
    c: &Campaign,
    budget: &std::sync::atomic::AtomicU64,
    cache: Option<&BuildCache>,
    defer: bool,
) -> Result<Evidence> {
    let opts = evidence::Options {
        symlinks: c.meta.symlinks.clone(),
        hashes: cache.map(|c| &c.hashes),
        listings: cache.map(|c| &c.listings),
        defer,
        ..Default::default()
    };
    let load = || manifest::load_kept(&c.dir, cache.map(|c| &c.manifests));
    let (m, disk) = evidence::load_and_list(&c.dir, &opts, load)?;
    let name = m.name.clone();
    evidence::verify_with(&c.dir, (m, disk), &[name.as_str()], budget, &opts)
}

/// The verify stage: every campaign checked; any file that does not
/// match (outside the preview's edits), a pin not met, or a campaign.json
/// that changed while the build read it fails the build, naming them all.
pub(super) fn verify(
    opts: &BuildOptions,
    campaigns: &[Campaign],
    cache: Option<&BuildCache>,
) -> Result<Verified> {
    let budget = std::sync::atomic::AtomicU64::new(evidence::KEEP_TOTAL);
    let mut verified = Verified {
        evidences: Vec::with_capacity(campaigns.len()),
        edits: Vec::with_capacity(campaigns.len()),
    };
    // A one-shot build hashes large files in the pass that copies them
    // (see `evidence::Options::defer`); the preview hashes every file here,
    // keeping the hashes for the next build.
    let defer = !opts.preview && cache.is_none();
    for c in campaigns {
        let e = verify_one(c, &budget, cache, defer)?;
        let (e, edits) = if opts.preview {
            e.accept_edits()
        } else {
            (e, Vec::new())
        };
        verified.evidences.push(e);
        verified.edits.push(edits);
    }
    let problems: String = campaigns
        .iter()
        .zip(&verified.evidences)
        .map(|(c, e)| problems(opts, campaigns.len(), c, e))
        .collect();
    if !problems.is_empty() {
        return Err(EvidenceFailed {
            report: format!(
                "refusing to publish: the evidence does not match the manifest\n{}",
                problems.trim_end()
            ),
        }
        .into());
    }
    Ok(verified)
}

/// The report lines for one campaign that must not be published.
fn problems(opts: &BuildOptions, count: usize, c: &Campaign, e: &Evidence) -> String {
    let mut problems = String::new();
    let pin = crate::verify::pin_for(&opts.expect, &c.meta.id, count);
    if let Some(pin) = pin.filter(|p| p.sha256 != e.manifest.sha256) {
        problems.push_str(&format!(
            "  modified        {} ({})\n",
            c.path(&e.manifest.name).display(),
            crate::verify::pin_detail(&e.manifest.sha256, pin)
        ));
    }
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
    problems
}
