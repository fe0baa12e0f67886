//! The preview's walk of a campaign, kept from one save to the next. A
//! folder whose stamp (device, inode, size, modification and change
//! times) is unchanged holds the same entries: adding, removing or
//! renaming an entry moves its folder's times (POSIX), while writing a
//! file in place does not. A listing is walked again as soon as any of
//! its folders changed. It is reused only when every folder had the same
//! stamp before the walk read it as after (so nothing moved while it was
//! read, whatever the file system's clock says) and times lying
//! [`SETTLED`] before the walk (so a change within one tick of the file
//! system's clock cannot hide behind the times the folder had).

use crate::error::Result;
use crate::evidence::{walk, Disk, Kind, Options};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// How long before a walk a folder's times must lie for its listing to
/// be reused: longer than any file system's time step (FAT's is 2 s) and
/// than the lag of the coarse clock those times are taken from.
const SETTLED: Duration = Duration::from_secs(3);

/// The last walk of each campaign folder (`exhibit serve`'s
/// [`crate::site::BuildCache`]; a one-shot build walks every time).
#[derive(Debug, Default)]
pub(crate) struct Listings(Mutex<HashMap<PathBuf, Listing>>);

#[derive(Debug)]
struct Listing {
    /// Every folder walked, the campaign's own first, with its stamp
    /// after the walk.
    folders: Vec<(PathBuf, FolderStamp)>,
    /// What the walk found, when it may be reused.
    disk: Option<Disk>,
}

/// A folder's device, inode, size, modification and change times.
type FolderStamp = (u64, u64, u64, Option<SystemTime>, Option<SystemTime>);

impl Listings {
    /// What [`walk`] finds under `dir`: its last listing while none of
    /// its folders changed, else walked again.
    pub(crate) fn walk(&self, dir: &Path, opts: &Options) -> Result<Disk> {
        self.walk_at(dir, opts, SystemTime::now())
    }

    /// [`Listings::walk`] at `now` (the tests' clock).
    fn walk_at(&self, dir: &Path, opts: &Options, now: SystemTime) -> Result<Disk> {
        let last = self.take(dir);
        if let Some(disk) = last.as_ref().and_then(Listing::reusable).cloned() {
            self.put(dir, last);
            return Ok(disk);
        }
        // The folders as they are before the walk reads them: the
        // campaign's own, and those the last walk met (a folder new since
        // then has no such stamp, and its listing is reused from the next
        // walk on).
        let known = last.iter().flat_map(|l| l.folders.iter().map(|(f, _)| f));
        let known = std::iter::once(dir).chain(known.map(PathBuf::as_path));
        let before: HashMap<&Path, FolderStamp> =
            known.filter_map(|f| Some((f, stamp_of(f)?))).collect();
        let disk = walk(dir, opts)?;
        let folders = folders_after(dir, &disk);
        let reuse = reusable(&disk, opts, &folders, &before, now);
        let listing = Listing {
            disk: reuse.then(|| disk.clone()),
            folders,
        };
        self.put(dir, Some(listing));
        Ok(disk)
    }

    /// The last walk of `dir`, taken out (a walk that fails leaves none).
    fn take(&self, dir: &Path) -> Option<Listing> {
        let mut all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        all.remove(dir)
    }

    fn put(&self, dir: &Path, listing: Option<Listing>) {
        let mut all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(listing) = listing {
            all.insert(dir.to_path_buf(), listing);
        }
    }
}

impl Listing {
    /// The walk, if it may be reused and every folder is as it was.
    fn reusable(&self) -> Option<&Disk> {
        let same =
            |(folder, stamp): &(PathBuf, FolderStamp)| stamp_of(folder).as_ref() == Some(stamp);
        self.disk.as_ref().filter(|_| self.folders.iter().all(same))
    }
}

/// Every folder of `disk`, the walk of `dir`, with its stamp now; a
/// folder gone or turned into something else has none, and is left out
/// (its listing is then never reused).
fn folders_after(dir: &Path, disk: &Disk) -> Vec<(PathBuf, FolderStamp)> {
    let inside = disk.iter().filter(|(_, (k, _))| *k == Kind::Dir);
    let all = std::iter::once(dir.to_path_buf()).chain(inside.map(|(rel, _)| dir.join(rel)));
    all.filter_map(|f| Some((f.clone(), stamp_of(&f)?)))
        .collect()
}

/// May `disk` be reused while its `folders` keep their stamps? Not when
/// an entry is a symlink (what one counts as follows its target, which
/// its folder's times do not), has a name that is not UTF-8 (its path is
/// shown lossily, and could name another folder) or any other detail,
/// nor when a folder was not stamped before the walk, changed while it
/// was read, or changed less than [`SETTLED`] before `now`.
fn reusable(
    disk: &Disk,
    opts: &Options,
    folders: &[(PathBuf, FolderStamp)],
    before: &HashMap<&Path, FolderStamp>,
    now: SystemTime,
) -> bool {
    let plain = |(k, detail): &(Kind, Option<String>)| {
        !matches!(k, Kind::SymlinkInside | Kind::SymlinkOutside) && detail.is_none()
    };
    let Some(limit) = now.checked_sub(SETTLED) else {
        return false;
    };
    let settled = |t: Option<SystemTime>| t.is_some_and(|t| t < limit);
    let dirs = disk.values().filter(|(k, _)| *k == Kind::Dir).count();
    opts.symlinks.is_empty()
        && opts.listed_only.is_empty()
        && disk.values().all(plain)
        && folders.len() == dirs + 1
        && folders.iter().all(|(f, stamp)| {
            before.get(f.as_path()) == Some(stamp) && settled(stamp.3) && settled(stamp.4)
        })
}

/// The stamp of the folder at `path` as it is now (`None`: gone, or not
/// a folder).
fn stamp_of(path: &Path) -> Option<FolderStamp> {
    let m = std::fs::symlink_metadata(path)
        .ok()
        .filter(|m| m.is_dir())?;
    #[cfg(unix)]
    let (dev, ino, changed) = {
        use std::os::unix::fs::MetadataExt;
        let nanos = u32::try_from(m.ctime_nsec()).ok();
        let since = u64::try_from(m.ctime()).ok().zip(nanos);
        let changed = since.map(|(s, n)| SystemTime::UNIX_EPOCH + Duration::new(s, n));
        (m.dev(), m.ino(), changed)
    };
    #[cfg(not(unix))]
    let (dev, ino, changed) = (0, 0, None);
    Some((dev, ino, m.len(), m.modified().ok(), changed))
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

    /// Long after the tree was made, as a save of a campaign written
    /// earlier is.
    fn later() -> SystemTime {
        SystemTime::now() + Duration::from_secs(60)
    }

    impl Listings {
        fn reused(&self, dir: &Path) -> Option<Disk> {
            let all = self.0.lock().unwrap();
            all.get(dir)?.reusable().cloned()
        }
    }

    /// A walk is reused from the second walk of folders that stood
    /// still, while they keep standing still; an entry coming or going
    /// at any depth has it walked again, a file written in place does
    /// not.
    #[test]
    fn a_listing_is_walked_again_once_an_entry_comes_or_goes() {
        let dir = tree("kept");
        let (listings, opts) = (Listings::default(), Options::default());
        let first = listings.walk_at(&dir, &opts, later()).unwrap();
        assert_eq!(
            names(&first),
            ["data", "data/deep", "data/deep/run.json", "page.md"]
        );
        // The first walk had no stamp of the folders inside before it.
        assert_eq!(listings.reused(&dir), None);
        assert_eq!(listings.walk_at(&dir, &opts, later()).unwrap(), first);
        assert_eq!(listings.reused(&dir).as_ref(), Some(&first));
        std::fs::write(dir.join("page.md"), "page, edited in place").unwrap();
        assert_eq!(listings.reused(&dir).as_ref(), Some(&first));
        std::fs::write(dir.join("data/deep/new.log"), "new").unwrap();
        assert_eq!(listings.reused(&dir), None);
        let second = listings.walk_at(&dir, &opts, later()).unwrap();
        assert!(second.contains_key("data/deep/new.log"));
        assert_eq!(listings.reused(&dir).as_ref(), Some(&second));
        std::fs::remove_file(dir.join("page.md")).unwrap();
        assert_eq!(listings.reused(&dir), None);
        let third = listings.walk_at(&dir, &opts, later()).unwrap();
        assert!(!third.contains_key("page.md"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A folder changed less than [`SETTLED`] before the walk, or while
    /// the walk read it, a tree with a symlink in it, or a campaign that
    /// lets symlinks through, is walked every time.
    #[test]
    fn a_recent_change_a_change_during_the_walk_or_a_symlink_is_never_reused() {
        let dir = tree("recent");
        let opts = Options::default();
        let listings = Listings::default();
        for _ in 0..2 {
            listings.walk_at(&dir, &opts, SystemTime::now()).unwrap();
        }
        assert_eq!(listings.reused(&dir), None);
        // Stamped before, changed after: as if a file came while the
        // walk read the folder.
        let disk = walk(&dir, &opts).unwrap();
        let (data, deep) = (dir.join("data"), dir.join("data/deep"));
        let before: HashMap<&Path, FolderStamp> = [dir.as_path(), &data, &deep]
            .into_iter()
            .map(|f| (f, stamp_of(f).unwrap()))
            .collect();
        let folders = folders_after(&dir, &disk);
        assert!(reusable(&disk, &opts, &folders, &before, later()));
        std::fs::write(deep.join("during.log"), "x").unwrap();
        let folders = folders_after(&dir, &disk);
        assert!(!reusable(&disk, &opts, &folders, &before, later()));
        let lets = Options {
            symlinks: vec!["page.md".into()],
            ..Options::default()
        };
        assert!(!reusable(
            &disk,
            &lets,
            &folders_after(&dir, &disk),
            &before,
            later()
        ));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("page.md", dir.join("data/link.md")).unwrap();
            for _ in 0..2 {
                let disk = listings.walk_at(&dir, &opts, later()).unwrap();
                assert!(disk.contains_key("data/link.md"));
            }
            assert_eq!(listings.reused(&dir), None);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
