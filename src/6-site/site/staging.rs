//! Where a build writes before it publishes: a hidden staging folder
//! beside OUT, removed on every way out (an error or a panic) unless it
//! was swapped in whole, or, in the preview, its changes moved into OUT.

use crate::error::{bail, Result};
use crate::layout;
use crate::sink::Sink;
use std::path::{Path, PathBuf};

/// The staging folder; removed when dropped unless published.
pub(super) struct Staging {
    pub(crate) path: PathBuf,
    armed: bool,
}

impl Staging {
    /// A fresh staging folder beside `out` (one a killed build left is
    /// removed first).
    pub(super) fn create(out: &Path) -> Result<Staging> {
        let path = layout::sibling(out, layout::STAGING)?;
        if path.exists() {
            crate::fsx::remove_tree(&path)?;
        }
        crate::fsx::create_dir_all(&path)?;
        Ok(Staging { path, armed: true })
    }

    /// The publish stage: swap the staged site in as `out`, or (preview)
    /// move only its changes into `out`.
    pub(super) fn publish(mut self, sink: &Sink, out: &Path) -> Result<()> {
        if sink.is_delta() {
            sink.apply(out)?;
        } else {
            swap_in(&self.path, out)?;
        }
        self.armed = false;
        Ok(())
    }

    /// The preview's publish stage, in two steps: the staged changes but
    /// the files written last ([`layout::written_last`]) moved into `out`,
    /// then `announce`, then `finish` (which writes and rescans those) and
    /// the rest moved in. If `finish` or the move fails, `out` is put back
    /// as it was before this build. A build that drops a file is moved in
    /// at once, then announced.
    pub(super) fn publish_in_two(
        self,
        sink: &Sink,
        out: &Path,
        finish: impl FnOnce(&Sink) -> Result<()>,
        announce: &mut dyn FnMut(),
    ) -> Result<()> {
        let before = layout::sibling(out, layout::BEFORE)?;
        let Some(mut moved) = sink.apply_first(out, &before, &layout::written_last)? else {
            finish(sink)?;
            self.publish(sink, out)?;
            announce();
            return Ok(());
        };
        announce();
        // The rest is moved as the first part was, so that a failure can
        // still put back all of it; the (empty) staging folder goes when
        // `self` does.
        match finish(sink).and_then(|()| sink.apply_rest(out, &mut moved)) {
            Ok(()) => {
                moved.discard();
                Ok(())
            }
            Err(e) => {
                moved.restore(out);
                Err(e)
            }
        }
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if self.armed && self.path.exists() {
            let _ = crate::fsx::remove_tree(&self.path);
        }
    }
}

/// `OUT` may be replaced only when it is absent, empty, or written by exhibit.
pub(super) fn check_replaceable(out: &Path) -> Result<()> {
    if !out.exists() {
        return Ok(());
    }
    if !out.is_dir() {
        bail!("output `{}` exists and is not a folder", out.display());
    }
    let empty = std::fs::read_dir(out)
        .map(|mut d| d.next().is_none())
        .unwrap_or(false);
    if !empty && !out.join(layout::MARKER).is_file() {
        bail!(
            "refusing to replace `{}`: it is not empty and was not written by exhibit (it has no {}); choose another output folder or remove it",
            out.display(),
            layout::MARKER
        );
    }
    Ok(())
}

fn swap_in(staging: &Path, out: &Path) -> Result<()> {
    if !out.exists() {
        return crate::fsx::rename(staging, out);
    }
    let old = layout::sibling(out, layout::OLD)?;
    if old.exists() {
        crate::fsx::remove_dir_all(&old)?;
    }
    crate::fsx::rename(out, &old)?;
    if let Err(e) = crate::fsx::rename(staging, out) {
        let _ = std::fs::rename(&old, out);
        let _ = std::fs::remove_dir_all(staging);
        return Err(e);
    }
    crate::fsx::remove_tree(&old)
}

/// An absolute form of a path that may not exist yet.
pub(super) fn absolute(p: &Path) -> Result<PathBuf> {
    if let Ok(c) = p.canonicalize() {
        return Ok(c);
    }
    let name = p.file_name().ok_or_else(|| {
        crate::error::Error::Invalid(format!("`{}` has no folder name", p.display()))
    })?;
    let parent = layout::parent_of(p).canonicalize().map_err(|_| {
        crate::error::Error::Invalid(format!(
            "the folder holding `{}` does not exist",
            p.display()
        ))
    })?;
    Ok(parent.join(name))
}
