//! The preview's walk of a campaign, kept from one save to the next. A
//! folder whose stamp (inode, size, modification and change times) is
//! unchanged holds the same entries: adding, removing or renaming an
//! entry moves its folder's times (POSIX), while writing a file in place
//! does not. A listing is walked again as soon as any of its folders
//! changed, and is kept only when every folder's times lie [`SETTLED`]
//! before the walk, so that a change made while (or just after) the
//! folder was read cannot carry the times it had.

use crate::error::Result;
use crate::evidence::{walk, Disk, Kind, Options};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// How long before a walk a folder's times must lie for its listing to
/// be kept: longer than any file system's time step (FAT's is 2 s) and
/// than the lag of the coarse clock those times are taken from.
const SETTLED: Duration = Duration::from_secs(3);

/// The last listing of each campaign folder (`exhibit serve`'s
/// [`crate::site::BuildCache`]; a one-shot build walks every time).
#[derive(Debug, Default)]
pub(crate) struct Listings(Mutex<HashMap<PathBuf, Listing>>);

#[derive(Debug)]
struct Listing {
    /// Every folder walked, the campaign's own first, with its stamp.
    folders: Vec<(PathBuf, FolderStamp)>,
    disk: Disk,
}

/// A folder's inode, size, modification and change times.
type FolderStamp = (u64, u64, Option<SystemTime>, Option<SystemTime>);

impl Listings {
    /// What [`walk`] finds under `dir`: its last listing while none of
    /// its folders changed, else walked again.
    pub(crate) fn walk(&self, dir: &Path, opts: &Options) -> Result<Disk> {
        self.walk_at(dir, opts, SystemTime::now())
    }

    /// [`Listings::walk`] at `now` (the tests' clock).
    fn walk_at(&self, dir: &Path, opts: &Options, now: SystemTime) -> Result<Disk> {
        if let Some(disk) = self.kept(dir) {
            return Ok(disk);
        }
        let disk = walk(dir, opts)?;
        let listing = keepable(dir, &disk, opts, now);
        let mut all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match listing {
            Some(listing) => all.insert(dir.to_path_buf(), listing),
            None => all.remove(dir),
        };
        Ok(disk)
    }

    /// The last listing of `dir`, if every folder in it is as it was.
    fn kept(&self, dir: &Path) -> Option<Disk> {
        let all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let listing = all.get(dir)?;
        let same =
            |(folder, stamp): &(PathBuf, FolderStamp)| stamp_of(folder).as_ref() == Some(stamp);
        listing
            .folders
            .iter()
            .all(same)
            .then(|| listing.disk.clone())
    }
}

/// `disk`, the listing of `dir` walked at `now`, as it may be kept: not
/// when an entry is a symlink (what one counts as depends on its target,
/// which its folder's times do not follow), nor when a folder changed
/// less than [`SETTLED`] before the walk. Stamps are taken after the
/// walk: a folder that changed during it is then too recent to keep.
fn keepable(dir: &Path, disk: &Disk, opts: &Options, now: SystemTime) -> Option<Listing> {
    let symlink = |k: &Kind| matches!(k, Kind::SymlinkInside | Kind::SymlinkOutside);
    if !opts.symlinks.is_empty() || disk.values().any(|(k, _)| symlink(k)) {
        return None;
    }
    let before = now.checked_sub(SETTLED)?;
    let folders = disk.iter().filter(|(_, (k, _))| *k == Kind::Dir);
    let folders = std::iter::once(dir.to_path_buf()).chain(folders.map(|(rel, _)| dir.join(rel)));
    let settled = |t: Option<SystemTime>| t.is_some_and(|t| t < before);
    let folders = folders
        .map(|folder| {
            let stamp = stamp_of(&folder)?;
            (settled(stamp.2) && settled(stamp.3)).then_some((folder, stamp))
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Listing {
        folders,
        disk: disk.clone(),
    })
}

/// The stamp of the folder at `path` as it is now (`None`: gone, or not
/// a folder any more).
fn stamp_of(path: &Path) -> Option<FolderStamp> {
    let m = std::fs::symlink_metadata(path)
        .ok()
        .filter(|m| m.is_dir())?;
    #[cfg(unix)]
    let (ino, changed) = {
        use std::os::unix::fs::MetadataExt;
        let nanos = u32::try_from(m.ctime_nsec()).ok();
        let since = u64::try_from(m.ctime()).ok().zip(nanos);
        let changed = since.map(|(s, n)| SystemTime::UNIX_EPOCH + Duration::new(s, n));
        (m.ino(), changed)
    };
    #[cfg(not(unix))]
    let (ino, changed) = (0, None);
    Some((ino, m.len(), m.modified().ok(), changed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("exhibit-listing-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("data/deep")).unwrap();
        std::fs::write(dir.join("page.md"), "page").unwrap();
        std::fs::write(dir.join("data/deep/run.json"), "{}").unwrap();
        dir
    }

    fn names(disk: &Disk) -> Vec<&str> {
        disk.keys().map(String::as_str).collect()
    }

    /// A listing is kept while its folders are as they were, and walked
    /// again once an entry comes or goes at any depth; a file written in
    /// place leaves it kept.
    #[test]
    fn a_listing_is_walked_again_once_an_entry_comes_or_goes() {
        let dir = tree("kept");
        let (listings, opts) = (Listings::default(), Options::default());
        // Long after the tree was made, as a save of a campaign written
        // earlier is.
        let later = || SystemTime::now() + Duration::from_secs(60);
        let first = listings.walk_at(&dir, &opts, later()).unwrap();
        assert_eq!(
            names(&first),
            ["data", "data/deep", "data/deep/run.json", "page.md"]
        );
        std::fs::write(dir.join("page.md"), "page, edited in place").unwrap();
        assert_eq!(listings.kept(&dir).as_ref(), Some(&first));
        std::fs::write(dir.join("data/deep/new.log"), "new").unwrap();
        assert_eq!(listings.kept(&dir), None);
        let second = listings.walk_at(&dir, &opts, later()).unwrap();
        assert!(second.contains_key("data/deep/new.log"));
        std::fs::remove_file(dir.join("page.md")).unwrap();
        assert_eq!(listings.kept(&dir), None);
        let third = listings.walk_at(&dir, &opts, later()).unwrap();
        assert!(!third.contains_key("page.md"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A folder changed less than [`SETTLED`] before the walk, or a tree
    /// with a symlink in it, is walked every time.
    #[test]
    fn a_recent_change_or_a_symlink_is_never_kept() {
        let dir = tree("recent");
        let (listings, opts) = (Listings::default(), Options::default());
        listings.walk_at(&dir, &opts, SystemTime::now()).unwrap();
        assert_eq!(listings.kept(&dir), None);
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("page.md", dir.join("data/link.md")).unwrap();
            let later = SystemTime::now() + Duration::from_secs(60);
            let disk = listings.walk_at(&dir, &opts, later).unwrap();
            assert!(disk.contains_key("data/link.md"));
            assert_eq!(listings.kept(&dir), None);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
