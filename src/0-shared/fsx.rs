//! The one wrapper around `std::fs`: every I/O error names its path, and
//! every read opens a regular file only (a named pipe, socket or device,
//! also behind a symlink, is refused instead of waited on).

use crate::error::{Context, Error, Result};
use std::fs;
use std::path::Path;

pub(crate) fn read(path: &Path) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut open(path)?, &mut bytes)
        .map_err(|e| Error::io(path, "read", e))?;
    Ok(bytes)
}

pub(crate) fn read_to_string(path: &Path) -> Result<String> {
    let bytes = read(path)?;
    String::from_utf8(bytes)
        .map_err(|e| Error::Invalid(e.to_string()))
        .with_context(|| format!("`{}` is not valid UTF-8", path.display()))
}

pub(crate) fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(parent) = path.parent() {
        create_dir_all(parent)?;
    }
    fs::write(path, bytes).map_err(|e| Error::io(path, "write", e))
}

pub(crate) fn create_dir_all(path: &Path) -> Result<()> {
    fs::create_dir_all(path).map_err(|e| Error::io(path, "create", e))
}

pub(crate) fn remove_dir_all(path: &Path) -> Result<()> {
    fs::remove_dir_all(path).map_err(|e| Error::io(path, "remove", e))
}

/// [`remove_dir_all`] on every core: for a site of thousands of files.
/// Symbolic links are removed, never followed.
pub(crate) fn remove_tree(path: &Path) -> Result<()> {
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
    go(path).map_err(|e| Error::io(path, "remove", e))
}

pub(crate) fn rename(from: &Path, to: &Path) -> Result<()> {
    fs::rename(from, to).map_err(Error::Os).with_context(|| {
        format!(
            "failed to rename `{}` to `{}`",
            from.display(),
            to.display()
        )
    })
}

pub(crate) fn open(path: &Path) -> Result<fs::File> {
    open_regular(path).map_err(|e| refusal(path, e))
}

/// What a file type is, in words, when it is neither a regular file nor a
/// folder: `None` for those two (and for a symlink, not followed here).
pub(crate) fn special_kind(ft: &fs::FileType) -> Option<&'static str> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return Some("a named pipe");
        }
        if ft.is_socket() {
            return Some("a socket");
        }
        if ft.is_char_device() {
            return Some("a character device");
        }
        if ft.is_block_device() {
            return Some("a block device");
        }
    }
    if ft.is_file() || ft.is_dir() || ft.is_symlink() {
        None
    } else {
        Some("not a regular file")
    }
}

/// Why a path (symlinks followed) is no file to read, or `None`.
fn not_regular(meta: &fs::Metadata) -> Option<String> {
    if meta.is_file() {
        return None;
    }
    Some(match special_kind(&meta.file_type()) {
        Some(k) => format!("not a regular file: {k}"),
        None => "not a regular file".to_string(),
    })
}

/// An error about `path`: a refused file type is evidence failing (exit 1).
fn refusal(path: &Path, e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::InvalidInput {
        crate::error::EvidenceFailed {
            report: format!("refusing `{}`: {e}", path.display()),
        }
        .into()
    } else {
        Error::io(path, "open", e)
    }
}

/// Open `path` for reading if it is a regular file, symlinks followed.
/// The type is checked before opening (opening a named pipe waits for a
/// writer), the open does not block (the path may be swapped for a pipe
/// in between), and the opened file is checked again (fstat).
pub(crate) fn open_regular(path: &Path) -> std::io::Result<fs::File> {
    open_regular_seen(path, &fs::metadata(path)?)
}

/// [`open_regular`] for a caller that has just read `path`'s metadata
/// (`seen`, symlinks followed): one stat fewer per file.
pub(crate) fn open_regular_seen(path: &Path, seen: &fs::Metadata) -> std::io::Result<fs::File> {
    let invalid = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, why);
    if let Some(why) = not_regular(seen) {
        return Err(invalid(why));
    }
    let file = reading(false).open(path)?;
    if let Some(why) = not_regular(&file.metadata()?) {
        return Err(invalid(why));
    }
    Ok(file)
}

/// Options to open a file for reading without blocking (a named pipe
/// swapped in waits for no writer), following a symlink as the last
/// component or (`nofollow`, on unix) failing on one.
fn reading(nofollow: bool) -> fs::OpenOptions {
    let mut opts = fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        let flags = if nofollow { libc::O_NOFOLLOW } else { 0 };
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut opts, libc::O_NONBLOCK | flags);
    }
    #[cfg(not(unix))]
    let _ = nofollow;
    opts
}

/// Open `path`, which a folder walk has just found to be a regular file
/// (not a symlink), for reading with no stat first, and fstat it: the
/// file and its metadata (for the caller's stamp) when it opened as a
/// regular file. `None` when it did not: a symlink (the last component is
/// not followed, so one swapped in since the walk, or one the walk was
/// told to follow, is left to the caller), or a pipe, device, socket or
/// folder swapped in (opened without blocking, never read), or any error.
/// The caller then takes the way of [`open_regular`], which stats first
/// and refuses or reports as always. One path lookup and one stat per
/// file instead of two each.
pub(crate) fn open_walked_file(path: &Path) -> Option<(fs::File, fs::Metadata)> {
    let file = reading(true).open(path).ok()?;
    let meta = file.metadata().ok()?;
    not_regular(&meta).is_none().then_some((file, meta))
}

/// Refuse (exit 1, naming the path) what a folder walk finds that is not
/// a folder or regular file, or a symlink to such a thing; a walk calls it
/// for entries it would otherwise skip.
pub(crate) fn refuse_special(path: &Path) -> Result<()> {
    match fs::metadata(path) {
        Ok(meta) if !meta.is_dir() => match not_regular(&meta) {
            Some(why) => Err(crate::error::EvidenceFailed {
                report: format!("refusing `{}`: {why}", path.display()),
            }
            .into()),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

pub(crate) fn canonicalize(path: &Path) -> Result<std::path::PathBuf> {
    fs::canonicalize(path).map_err(|e| Error::io(path, "resolve", e))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A walked file is opened with no stat first only as a regular file:
    /// a symlink (not followed), a named pipe or a folder put in its place,
    /// or a missing file, is left to the way that stats first, and the
    /// pipe's open does not block.
    #[test]
    fn a_walked_file_opens_only_as_a_regular_file() {
        let dir = std::env::temp_dir().join(format!("exhibit-walked-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("folder")).unwrap();
        fs::write(dir.join("file"), "bytes").unwrap();
        std::os::unix::fs::symlink(dir.join("file"), dir.join("link")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(dir.join("pipe"))
            .status();
        assert!(made.unwrap().success(), "mkfifo");

        let (_, meta) = open_walked_file(&dir.join("file")).unwrap();
        assert_eq!(meta.len(), 5);
        for other in ["link", "pipe", "folder", "gone"] {
            assert!(open_walked_file(&dir.join(other)).is_none(), "{other}");
        }
        fs::remove_dir_all(&dir).unwrap();
    }
}
