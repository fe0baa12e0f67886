//! The one wrapper around `std::fs`: every I/O error names its path.

use anyhow::{Context, Result};
use std::fs;
use std::path::Path;

pub fn read(path: &Path) -> Result<Vec<u8>> {
    fs::read(path).with_context(|| format!("failed to read `{}`", path.display()))
}

pub fn read_to_string(path: &Path) -> Result<String> {
    let bytes = read(path)?;
    String::from_utf8(bytes).with_context(|| format!("`{}` is not valid UTF-8", path.display()))
}

pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(parent) = path.parent() {
        create_dir_all(parent)?;
    }
    fs::write(path, bytes).with_context(|| format!("failed to write `{}`", path.display()))
}

pub fn create_dir_all(path: &Path) -> Result<()> {
    fs::create_dir_all(path).with_context(|| format!("failed to create `{}`", path.display()))
}

pub fn remove_dir_all(path: &Path) -> Result<()> {
    fs::remove_dir_all(path).with_context(|| format!("failed to remove `{}`", path.display()))
}

/// [`remove_dir_all`] on every core: for a site of thousands of files.
/// Symbolic links are removed, never followed.
pub fn remove_tree(path: &Path) -> Result<()> {
    use rayon::prelude::*;
    fn go(p: &Path) -> std::io::Result<()> {
        let entries = fs::read_dir(p)?.collect::<std::io::Result<Vec<_>>>()?;
        entries.par_iter().try_for_each(|e| {
            if e.file_type()?.is_dir() {
                go(&e.path())
            } else {
                fs::remove_file(e.path())
            }
        })?;
        fs::remove_dir(p)
    }
    go(path).with_context(|| format!("failed to remove `{}`", path.display()))
}

pub fn rename(from: &Path, to: &Path) -> Result<()> {
    fs::rename(from, to).with_context(|| {
        format!(
            "failed to rename `{}` to `{}`",
            from.display(),
            to.display()
        )
    })
}

pub fn open(path: &Path) -> Result<fs::File> {
    fs::File::open(path).with_context(|| format!("failed to open `{}`", path.display()))
}

pub fn create(path: &Path) -> Result<fs::File> {
    if let Some(parent) = path.parent() {
        create_dir_all(parent)?;
    }
    fs::File::create(path).with_context(|| format!("failed to create `{}`", path.display()))
}

pub fn symlink_metadata(path: &Path) -> Result<fs::Metadata> {
    fs::symlink_metadata(path).with_context(|| format!("failed to stat `{}`", path.display()))
}

pub fn canonicalize(path: &Path) -> Result<std::path::PathBuf> {
    fs::canonicalize(path).with_context(|| format!("failed to resolve `{}`", path.display()))
}
