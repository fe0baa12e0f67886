//! Where the site stage writes: a staging folder, swapped in whole when the
//! build passed. In the preview the staging folder holds only what changed
//! since the last build (by SHA-256), and only that is moved into the
//! served folder, so one edit in a large campaign rewrites a few files.

use crate::error::Result;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The files of a site as written: site-relative path -> SHA-256 (looked
/// up by path thousands of times in each save of a large preview).
pub(crate) type Files = HashMap<String, String>;

pub(crate) struct Sink<'a> {
    pub(crate) staging: PathBuf,
    /// The site now in OUT, when only changes are to be written.
    previous: Option<&'a Files>,
    /// Keep the list of files (for the next preview build).
    keep: bool,
    files: Recorded,
    /// Folders known to exist in staging.
    dirs: Mutex<std::collections::HashSet<PathBuf>>,
    /// What went to staging (so far as [`Sink::path`] handed it out),
    /// each path once however often it was written.
    staged: Mutex<BTreeSet<String>>,
    /// Text set aside until it is written ([`Sink::hold`]).
    scratch: Scratch,
}

/// The files of the new site as [`Sink::unchanged`] records them, from
/// every core at once: split by path over locks of their own, so the
/// threads that write a large campaign's pages and copies seldom wait on
/// each other (each preview save of a 1,000-page campaign records 3,000
/// files). Each lock on a cache line of its own: two cores taking
/// neighbouring locks would otherwise pass one line back and forth.
struct Recorded(Vec<Shard>);

#[repr(align(128))]
struct Shard(Mutex<Part>);

/// One shard's files, and how many of them the last build had too.
#[derive(Default)]
struct Part {
    files: Files,
    carried: usize,
}

impl Recorded {
    const SHARDS: usize = 16;

    /// Room for about `expected` files (the last build's count).
    fn new(expected: usize) -> Self {
        let each = expected.div_ceil(Self::SHARDS);
        Recorded(
            (0..Self::SHARDS)
                .map(|_| {
                    let files = Files::with_capacity(each);
                    Shard(Mutex::new(Part { files, carried: 0 }))
                })
                .collect(),
        )
    }

    fn shard(&self, rel: &str) -> std::sync::MutexGuard<'_, Part> {
        // FNV-1a: any spread will do, it only picks a lock.
        let h = rel.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        let i = (h % Self::SHARDS as u64) as usize;
        self.0[i].0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Record `rel`; `carried`: the last build had it too.
    fn insert(&self, rel: &str, sha256: &str, carried: bool) {
        let mut part = self.shard(rel);
        let new = part.files.insert(rel.to_string(), sha256.to_string());
        if new.is_none() && carried {
            part.carried += 1;
        }
    }

    fn contains(&self, rel: &str) -> bool {
        self.shard(rel).files.contains_key(rel)
    }

    /// Was every one of the last build's `previous` files recorded again,
    /// those `later` names aside (they are written after this is asked)?
    /// Told by counting, not by looking each file up (a save of a
    /// 1,000-page campaign drops none of its 3,000 files).
    fn has_all(&self, previous: &Files, later: &dyn Fn(&str) -> bool) -> bool {
        let parts = self
            .0
            .iter()
            .map(|s| s.0.lock().unwrap_or_else(|e| e.into_inner()));
        let carried: usize = parts.map(|p| p.carried).sum();
        // `carried` counts the recorded files the last build had, `later`
        // ones among them: it reaches the count of the others plus those
        // exactly when none of the others is missing.
        let (mut others, mut later_recorded) = (0, 0);
        for rel in previous.keys() {
            if !later(rel) {
                others += 1;
            } else if self.contains(rel) {
                later_recorded += 1;
            }
        }
        carried == others + later_recorded
    }

    fn into_files(self) -> Files {
        let mut shards = self
            .0
            .into_iter()
            .map(|m| m.0.into_inner().unwrap_or_else(|e| e.into_inner()).files);
        let mut files = shards.next().unwrap_or_default();
        files.reserve(shards.len() * files.len());
        for shard in shards {
            files.extend(shard);
        }
        files
    }
}

/// How much of a file [`Sink::write_parts`] gathers before it hashes
/// and writes it. A few blocks are in flight at once (filled, written,
/// hashed, handed back), so this is what writing audit.json adds to a
/// build's peak memory: blocks of 1 MiB added 2.3 MB more at 1,000 pages,
/// close to that case's 48 MB target, and cost no less time.
const PARTS_BLOCK: usize = 256 << 10;

/// A file replaced in OUT from this size on is let go off the preview's
/// critical path ([`Sink::apply`]), and at most this many at a time.
const HOLD_FROM: u64 = 1 << 20;
const HOLD_AT_MOST: usize = 16;

/// A file's bytes for [`Sink::write_parts`]: handed in order to the
/// function given.
pub(crate) type Parts<'a> = dyn Fn(&mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> + 'a;

/// Text set aside by [`Sink::hold`]: where it is in the scratch file.
#[derive(Debug)]
pub(crate) struct Held {
    at: u64,
    len: usize,
}

/// The scratch file of [`Sink::hold`]: opened in staging at first use and
/// unlinked at once, so it is never part of the site and goes when the
/// build does, whatever way it ends. `end` (its length) guards the
/// opening too.
#[derive(Default)]
struct Scratch {
    file: std::sync::OnceLock<std::fs::File>,
    end: Mutex<u64>,
}

impl<'a> Sink<'a> {
    /// `keep`: remember every file, for [`Sink::into_files`].
    pub(crate) fn new(staging: PathBuf, previous: Option<&'a Files>, keep: bool) -> Self {
        Sink {
            staging,
            previous,
            keep: keep || previous.is_some(),
            files: Recorded::new(previous.map_or(0, |p| p.len())),
            dirs: Mutex::new(std::collections::HashSet::new()),
            staged: Mutex::new(BTreeSet::new()),
            scratch: Scratch::default(),
        }
    }

    /// Set `text` aside on disk until [`Sink::take_held`]: the pages of a
    /// campaign wait there for the header (which reads the ledger of every
    /// page), and their audit records for audit.json, so a build holds a
    /// few pages in memory, not all of them.
    /// `None` where an open file cannot be unlinked (it would be left in
    /// the site): the caller keeps the text.
    pub(crate) fn hold(&self, text: &[u8]) -> Result<Option<Held>> {
        if !cfg!(unix) {
            return Ok(None);
        }
        let path = self.staging.join(".held");
        let at = {
            let mut end = self.scratch.end.lock().unwrap_or_else(|e| e.into_inner());
            if self.scratch.file.get().is_none() {
                let f = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create_new(true)
                    .open(&path)
                    .map_err(|e| crate::error::Error::failed("create", &path, e))?;
                std::fs::remove_file(&path)
                    .map_err(|e| crate::error::Error::io(&path, "remove", e))?;
                let _ = self.scratch.file.set(f);
            }
            let at = *end;
            *end += text.len() as u64;
            at
        };
        let file = self.scratch.file.get().expect("opened above");
        scratch_io::write_at(file, text, at)
            .map_err(|e| crate::error::Error::io(&path, "write", e))?;
        Ok(Some(Held {
            at,
            len: text.len(),
        }))
    }

    /// The bytes [`Sink::hold`] set aside.
    pub(crate) fn take_held(&self, held: &Held) -> Result<Vec<u8>> {
        let path = self.staging.join(".held");
        let file = self.scratch.file.get().ok_or_else(|| {
            crate::error::Error::Invalid("internal error: nothing was held".to_string())
        })?;
        let mut bytes = vec![0u8; held.len];
        scratch_io::read_at(file, &mut bytes, held.at)
            .map_err(|e| crate::error::Error::io(&path, "read", e))?;
        Ok(bytes)
    }

    /// Only changes go to staging (see [`Sink::apply`]).
    pub(crate) fn is_delta(&self) -> bool {
        self.previous.is_some()
    }

    /// Note `rel` as part of the new site; `carried`: the last one had it.
    fn record(&self, rel: &str, sha256: &str, carried: bool) {
        if !self.keep {
            return;
        }
        self.files.insert(rel, sha256, carried);
    }

    /// Delta mode: the files staged under campaign folder `id`, relative
    /// to it (`None`: a whole site is staged).
    pub(crate) fn staged_in(&self, id: &str) -> Option<std::collections::HashSet<String>> {
        self.previous?;
        let staged = self.staged.lock().unwrap_or_else(|e| e.into_inner());
        let under = |rel: &String| Some(rel.strip_prefix(id)?.strip_prefix('/')?.to_string());
        Some(staged.iter().filter_map(under).collect())
    }

    /// Is `rel` already in OUT with these bytes? Records it either way.
    pub(crate) fn unchanged(&self, rel: &str, sha256: &str) -> bool {
        let served = self.previous.and_then(|p| p.get(rel));
        self.record(rel, sha256, served.is_some());
        served.is_some_and(|s| s == sha256)
    }

    /// Where `rel` is staged; its folder exists.
    pub(crate) fn path(&self, rel: &str) -> Result<PathBuf> {
        if self.previous.is_some() {
            self.staged
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(rel.to_string());
        }
        let path = self.staging.join(rel);
        if let Some(dir) = path.parent() {
            let known = self
                .dirs
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains(dir);
            if !known {
                crate::fsx::create_dir_all(dir)?;
                self.dirs
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(dir.to_path_buf());
            }
        }
        Ok(path)
    }

    /// Write `bytes` as `rel` unless OUT already has them; returns their
    /// SHA-256 and whether they were written.
    pub(crate) fn write(&self, rel: &str, bytes: &[u8]) -> Result<(String, bool)> {
        let sha = crate::hash::sha256_bytes(bytes);
        let written = self.write_known(rel, bytes, &sha)?;
        Ok((sha, written))
    }

    /// [`Sink::write`] of bytes whose SHA-256 is known; whether written.
    pub(crate) fn write_known(&self, rel: &str, bytes: &[u8], sha256: &str) -> Result<bool> {
        if self.unchanged(rel, sha256) {
            return Ok(false);
        }
        let path = self.path(rel)?;
        std::fs::write(&path, bytes).map_err(|e| crate::error::Error::io(&path, "write", e))?;
        Ok(true)
    }

    /// [`Sink::write`] of the bytes `parts` hands its argument one part
    /// after the other, with no copy of them all in one buffer
    /// (audit.json's figures are most of a large campaign's, some of them
    /// read back from where [`Sink::hold`] set them aside). Gathered a
    /// block at a time: a thread of its own hashes each block once it is
    /// written, while the next is gathered and written (the blocks go
    /// round, so their memory is touched once). In the preview a file OUT
    /// already has is then taken out of staging again (writing it costs
    /// less than making its parts twice, as hashing first and writing
    /// after did).
    pub(crate) fn write_parts(&self, rel: &str, parts: &Parts) -> Result<(String, bool)> {
        let path = self.path(rel)?;
        let mut file = std::fs::File::create(&path)
            .map_err(|e| crate::error::Error::failed("create", &path, e))?;
        // Blocks go to the hashing thread once written, and come back
        // empty to be filled again.
        let (to_hash, written) = std::sync::mpsc::sync_channel::<Vec<u8>>(2);
        let (to_fill, hashed) = std::sync::mpsc::channel::<Vec<u8>>();
        let digest = std::thread::scope(|scope| -> Result<_> {
            let hasher = scope.spawn(move || {
                use sha2::Digest;
                let mut h = sha2::Sha256::new();
                for mut block in written {
                    h.update(&block);
                    block.clear();
                    let _ = to_fill.send(block);
                }
                h.finalize()
            });
            let mut block = Vec::with_capacity(PARTS_BLOCK);
            let mut pass = |block: &mut Vec<u8>| -> Result<()> {
                std::io::Write::write_all(&mut file, block)
                    .map_err(|e| crate::error::Error::failed("write", &path, e))?;
                let next = hashed
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(PARTS_BLOCK));
                let _ = to_hash.send(std::mem::replace(block, next));
                Ok(())
            };
            parts(&mut |p| {
                block.extend_from_slice(p);
                if block.len() >= PARTS_BLOCK {
                    pass(&mut block)?;
                }
                Ok(())
            })?;
            pass(&mut block)?;
            drop(to_hash);
            Ok(hasher.join().expect("the hashing thread does not panic"))
        })?;
        let sha = crate::hash::hex(&digest);
        if self.unchanged(rel, &sha) {
            self.unstage(rel)?;
            return Ok((sha, false));
        }
        Ok((sha, true))
    }

    /// Take `rel` out of staging again: OUT has it already.
    fn unstage(&self, rel: &str) -> Result<()> {
        let mut staged = self.staged.lock().unwrap_or_else(|e| e.into_inner());
        staged.remove(rel);
        let path = self.staging.join(rel);
        std::fs::remove_file(&path).map_err(|e| crate::error::Error::io(&path, "remove", e))
    }

    /// Open `rel` in staging for writing, for a copy streamed through
    /// (see [`Staged`]); the caller records its hash with
    /// [`Sink::unchanged`] once known.
    pub(crate) fn create(&self, rel: &str) -> Result<Staged> {
        let path = self.path(rel)?;
        let file = std::fs::File::create(&path)
            .map_err(|e| crate::error::Error::failed("create", &path, e))?;
        Ok(Staged {
            out: std::io::BufWriter::new(file),
            path,
        })
    }

    /// Every file of the new site.
    pub(crate) fn into_files(self) -> Files {
        self.files.into_files()
    }

    /// Delta mode: remove what the new site no longer has (and folders
    /// left empty), then move the staged changes into `out`; the staging
    /// folder goes. On an error the caller must not trust `out` to match
    /// any record: the next build should write everything.
    pub(crate) fn apply(&self, out: &Path) -> Result<()> {
        let previous = self.previous.expect("apply is for delta builds");
        // Dropped files first: a file may have become a folder or the
        // reverse.
        for rel in previous.keys().filter(|r| !self.files.contains(r)) {
            let path = out.join(rel);
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(crate::error::Error::io(&path, "remove", e)),
            }
            let mut dir = path.parent();
            while let Some(d) = dir.filter(|d| *d != out) {
                if std::fs::remove_dir(d).is_err() {
                    break; // not empty
                }
                dir = d.parent();
            }
        }
        let staged = self
            .staged
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        // A large file replaced is held open until the others are in
        // place, then let go on a thread of its own: the last link to an
        // 11 MB audit.json going took a millisecond (the memory of a file
        // in tmpfs is freed then), and a preview save that drops a file
        // is announced only once this returns. Only a few are held: a save that
        // renders every page again replaces thousands of files.
        let mut replaced = Vec::new();
        for rel in &staged {
            let target = out.join(rel);
            let seen = std::fs::metadata(&target).ok();
            if seen.as_ref().is_some_and(|m| m.is_dir()) {
                crate::fsx::remove_tree(&target)?;
            } else if let Some(m) = seen.filter(|m| m.len() >= HOLD_FROM) {
                if replaced.len() < HOLD_AT_MOST {
                    replaced.extend(crate::fsx::open_regular_seen(&target, &m).ok());
                }
            }
            if let Some(dir) = target.parent().filter(|d| !d.is_dir()) {
                crate::fsx::create_dir_all(dir)?;
            }
            crate::fsx::rename(&self.staging.join(rel), &target)?;
        }
        drop_apart(replaced);
        crate::fsx::remove_tree(&self.staging)
    }

    /// Delta mode, before the files `last` names are written: move the
    /// other staged files into `out` now, each file it replaces kept in
    /// `before` (a folder beside `out`) until [`Moved::restore`] puts it
    /// back or [`Moved::discard`] lets it go. A reader sees the old file
    /// or the new, never none. `None`, with nothing moved, where the new
    /// site drops a file (it may have become a folder, or the reverse):
    /// [`Sink::apply`] then moves it all.
    pub(crate) fn apply_first(
        &self,
        out: &Path,
        before: &Path,
        last: &dyn Fn(&str) -> bool,
    ) -> Result<Option<Moved>> {
        let previous = self.previous.expect("apply_first is for delta builds");
        // A file that became a folder, or the reverse, needs the files
        // the new site drops removed first: all is moved at once then.
        if !self.files.has_all(previous, last) {
            return Ok(None);
        }
        if before.exists() {
            crate::fsx::remove_tree(before)?;
        }
        let mut moved = Moved {
            before: before.to_path_buf(),
            files: Vec::new(),
            dirs: Vec::new(),
        };
        let taken = self.take_staged(out, &mut moved, &|rel| !last(rel));
        if let Err(e) = taken {
            moved.restore(out);
            return Err(e);
        }
        Ok(Some(moved))
    }

    /// Delta mode, after [`Sink::apply_first`]: move what was staged since
    /// into `out` the same way, so [`Moved::restore`] can still put back
    /// all of it. The staging folder is left (empty) for its owner.
    pub(crate) fn apply_rest(&self, out: &Path, moved: &mut Moved) -> Result<()> {
        self.take_staged(out, moved, &|_| true)
    }

    /// Move the staged files `pick` chooses into `out`, and forget them as
    /// staged.
    fn take_staged(
        &self,
        out: &Path,
        moved: &mut Moved,
        pick: &dyn Fn(&str) -> bool,
    ) -> Result<()> {
        let mut staged = self.staged.lock().unwrap_or_else(|e| e.into_inner());
        let (now, later): (BTreeSet<String>, BTreeSet<String>) = std::mem::take(&mut *staged)
            .into_iter()
            .partition(|rel| pick(rel));
        *staged = later;
        if now.iter().any(|rel| out.join(rel).is_dir()) {
            crate::error::bail!(
                "internal error: a staged file would replace a folder of the preview"
            );
        }
        now.iter()
            .try_for_each(|rel| moved.take(&self.staging, out, rel))
    }
}

/// The files [`Sink::apply_first`] and [`Sink::apply_rest`] moved into
/// OUT: each with whether it replaced one (kept in `before` under the same
/// path), and the folders made for them.
pub(crate) struct Moved {
    before: PathBuf,
    files: Vec<(String, bool)>,
    dirs: Vec<PathBuf>,
}

impl Moved {
    /// Move staged `rel` into `out`, a file it replaces linked into
    /// `before` first.
    fn take(&mut self, staging: &Path, out: &Path, rel: &str) -> Result<()> {
        let target = out.join(rel);
        let replaces = target.is_file();
        if replaces {
            let kept = self.before.join(rel);
            if let Some(dir) = kept.parent() {
                crate::fsx::create_dir_all(dir)?;
            }
            // A copy where the file system has no hard links.
            std::fs::hard_link(&target, &kept)
                .or_else(|_| std::fs::copy(&target, &kept).map(drop))
                .map_err(|e| crate::error::Error::failed("keep", &kept, e))?;
        }
        if let Some(dir) = target.parent() {
            let mut missing: Vec<PathBuf> = dir
                .ancestors()
                .take_while(|d| !d.exists())
                .map(Path::to_path_buf)
                .collect();
            if !missing.is_empty() {
                // Recorded first: folders made before a failure go too.
                missing.reverse();
                self.dirs.extend(missing);
                crate::fsx::create_dir_all(dir)?;
            }
        }
        crate::fsx::rename(&staging.join(rel), &target)?;
        self.files.push((rel.to_string(), replaces));
        Ok(())
    }

    /// Put OUT back as it was: each file moved in is taken out again, or
    /// replaced by the one it replaced, and the folders made for them go.
    /// Best effort: the caller then treats OUT as unknown (the next build
    /// writes it whole); `before` stays if a file could not be put back.
    pub(crate) fn restore(&self, out: &Path) {
        let mut whole = true;
        for (rel, replaced) in self.files.iter().rev() {
            let target = out.join(rel);
            whole &= if *replaced {
                std::fs::rename(self.before.join(rel), &target).is_ok()
            } else {
                std::fs::remove_file(&target).is_ok()
            };
        }
        for dir in self.dirs.iter().rev() {
            let _ = std::fs::remove_dir(dir);
        }
        if whole {
            let _ = crate::fsx::remove_tree(&self.before);
        }
    }

    /// The build went through: what the moved files replaced goes (a
    /// folder this fails to remove is removed by the next
    /// [`Sink::apply_first`]).
    pub(crate) fn discard(self) {
        if !self.files.iter().any(|(_, replaced)| *replaced) {
            return;
        }
        // As in [`Sink::apply`]: the last link to a large file (the old
        // audit.json) goes on the pool, not while requests wait.
        let large = self.files.iter().filter(|(_, replaced)| *replaced);
        let held: Vec<std::fs::File> = large
            .filter_map(|(rel, _)| {
                let path = self.before.join(rel);
                let seen = std::fs::metadata(&path).ok()?;
                let big = seen.len() >= HOLD_FROM;
                big.then(|| crate::fsx::open_regular_seen(&path, &seen).ok())?
            })
            .take(HOLD_AT_MOST)
            .collect();
        let _ = crate::fsx::remove_tree(&self.before);
        drop_apart(held);
    }
}

/// Drop `value` on the build's thread pool, so that freeing it (memory,
/// or the last link to a large file) is off the caller's way. No thread
/// is started for it: the preview's threads stay fixed in number.
pub(crate) fn drop_apart<T: Send + 'static>(value: T) {
    rayon::spawn(move || drop(value));
}

/// Positioned reads and writes of the scratch file ([`Sink::hold`] is
/// never used elsewhere).
mod scratch_io {
    #[cfg(unix)]
    pub(super) fn write_at(f: &std::fs::File, bytes: &[u8], at: u64) -> std::io::Result<()> {
        std::os::unix::fs::FileExt::write_all_at(f, bytes, at)
    }

    #[cfg(unix)]
    pub(super) fn read_at(f: &std::fs::File, bytes: &mut [u8], at: u64) -> std::io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(f, bytes, at)
    }

    #[cfg(not(unix))]
    pub(super) fn write_at(_: &std::fs::File, _: &[u8], _: u64) -> std::io::Result<()> {
        Err(std::io::ErrorKind::Unsupported.into())
    }

    #[cfg(not(unix))]
    pub(super) fn read_at(_: &std::fs::File, _: &mut [u8], _: u64) -> std::io::Result<()> {
        Err(std::io::ErrorKind::Unsupported.into())
    }
}

/// A file of the site being written into staging, opened by
/// [`Sink::create`]: copies stream through it rather than writing files
/// of their own.
pub(crate) struct Staged {
    path: PathBuf,
    out: std::io::BufWriter<std::fs::File>,
}

impl Staged {
    pub(crate) fn write_all(&mut self, bytes: &[u8]) -> Result<()> {
        std::io::Write::write_all(&mut self.out, bytes).map_err(|e| self.failed(e))
    }

    /// Flush what is buffered; the file is complete.
    pub(crate) fn finish(mut self) -> Result<()> {
        std::io::Write::flush(&mut self.out).map_err(|e| self.failed(e))
    }

    fn failed(&self, e: std::io::Error) -> crate::error::Error {
        crate::error::Error::failed("write", &self.path, e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In the preview a file written in parts is hashed as it is written;
    /// one OUT already has is taken out of staging again, and applying
    /// the build moves only what changed.
    #[test]
    fn parts_out_already_has_leave_staging_and_out_as_they_were() {
        let root = std::env::temp_dir().join(format!("exhibit-sink-{}", std::process::id()));
        let (staging, out) = (root.join("staging"), root.join("out"));
        std::fs::create_dir_all(out.join("c")).unwrap();
        std::fs::create_dir_all(&staging).unwrap();
        let old = b"{\n  \"a\": 1\n}\n";
        std::fs::write(out.join("c/audit.json"), old).unwrap();
        std::fs::write(out.join("c/other.json"), b"{}\n").unwrap();
        let previous: Files = [
            ("c/audit.json".to_string(), crate::hash::sha256_bytes(old)),
            (
                "c/other.json".to_string(),
                crate::hash::sha256_bytes(b"{}\n"),
            ),
        ]
        .into();
        let sink = Sink::new(staging.clone(), Some(&previous), false);
        let halves = |bytes: &'static [u8]| {
            move |w: &mut dyn FnMut(&[u8]) -> Result<()>| {
                w(&bytes[..4])?;
                w(&bytes[4..])
            }
        };
        let (sha, written) = sink.write_parts("c/audit.json", &halves(old)).unwrap();
        assert_eq!(
            (sha.as_str(), written),
            (previous["c/audit.json"].as_str(), false)
        );
        assert!(!staging.join("c/audit.json").exists());
        let new = b"{\n  \"a\": 2\n}\n";
        let (sha, written) = sink.write_parts("c/other.json", &halves(new)).unwrap();
        assert_eq!((sha, written), (crate::hash::sha256_bytes(new), true));
        sink.apply(&out).unwrap();
        assert_eq!(std::fs::read(out.join("c/audit.json")).unwrap(), old);
        assert_eq!(std::fs::read(out.join("c/other.json")).unwrap(), new);
        assert!(!staging.exists());
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// A site's files and folders under `dir`, with their bytes.
    fn listing(dir: &Path) -> Vec<(String, Option<Vec<u8>>)> {
        let mut all: Vec<_> = walkdir::WalkDir::new(dir)
            .min_depth(1)
            .into_iter()
            .map(|e| {
                let e = e.unwrap();
                let rel = e
                    .path()
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                (
                    rel,
                    e.file_type()
                        .is_file()
                        .then(|| std::fs::read(e.path()).unwrap()),
                )
            })
            .collect();
        all.sort();
        all
    }

    /// The preview's publish in two steps: the first moves all but the
    /// files written last (a replaced page, a new page in a new folder),
    /// the second the rest; `restore` after both puts back every file and
    /// folder as it was, and `discard` leaves OUT new with no `before`.
    #[test]
    fn moved_in_two_steps_then_put_back_or_kept() {
        let root = std::env::temp_dir().join(format!("exhibit-moved-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let read = |p: PathBuf| std::fs::read(p).unwrap();
        for keep in [false, true] {
            let (staging, out, before) = (root.join("s"), root.join("o"), root.join("b"));
            let _ = std::fs::remove_dir_all(&out);
            std::fs::create_dir_all(out.join("c")).unwrap();
            let old = [
                ("c/page.html", "old page"),
                ("c/audit.json", "old audit"),
                ("c/SHA256SUMS", "old sums"),
            ];
            for (rel, text) in old {
                std::fs::write(out.join(rel), text).unwrap();
            }
            let previous: Files = old
                .iter()
                .map(|(rel, text)| (rel.to_string(), crate::hash::sha256_bytes(text.as_bytes())))
                .collect();
            let was = listing(&out);
            std::fs::create_dir_all(&staging).unwrap();
            let sink = Sink::new(staging.clone(), Some(&previous), true);
            sink.write("c/page.html", b"new page").unwrap();
            sink.write("c/new/deep/added.html", b"added page").unwrap();
            let mut moved = sink
                .apply_first(&out, &before, &crate::layout::written_last)
                .unwrap()
                .expect("nothing is dropped");
            assert_eq!(read(out.join("c/page.html")), b"new page");
            assert_eq!(read(before.join("c/page.html")), b"old page");
            assert_eq!(read(out.join("c/audit.json")), b"old audit");
            sink.write("c/audit.json", b"new audit").unwrap();
            sink.write("c/SHA256SUMS", b"new sums").unwrap();
            sink.apply_rest(&out, &mut moved).unwrap();
            assert_eq!(read(out.join("c/SHA256SUMS")), b"new sums");
            if keep {
                moved.discard();
                assert_eq!(read(out.join("c/new/deep/added.html")), b"added page");
                assert_eq!(read(out.join("c/audit.json")), b"new audit");
            } else {
                moved.restore(&out);
                assert_eq!(listing(&out), was, "OUT is as it was, with no folder left");
            }
            assert!(!before.exists());
            let _ = std::fs::remove_dir_all(&staging);
        }
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// A file written twice in one build (a copy made again once a secret
    /// widened the detector) is staged once: applying moves its last
    /// bytes, in one step or in two.
    #[test]
    fn a_path_staged_twice_is_moved_once() {
        let root = std::env::temp_dir().join(format!("exhibit-twice-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for two_steps in [false, true] {
            let (staging, out, before) = (root.join("s"), root.join("o"), root.join("b"));
            let _ = std::fs::remove_dir_all(&out);
            std::fs::create_dir_all(out.join("c")).unwrap();
            std::fs::write(out.join("c/run.log"), "old").unwrap();
            let previous: Files =
                [("c/run.log".to_string(), crate::hash::sha256_bytes(b"old"))].into();
            std::fs::create_dir_all(&staging).unwrap();
            let sink = Sink::new(staging.clone(), Some(&previous), true);
            sink.write("c/run.log", b"first").unwrap();
            sink.write("c/run.log", b"second").unwrap();
            if two_steps {
                let none = |_: &str| false;
                let mut moved = sink.apply_first(&out, &before, &none).unwrap().unwrap();
                sink.apply_rest(&out, &mut moved).unwrap();
                moved.discard();
            } else {
                sink.apply(&out).unwrap();
            }
            assert_eq!(std::fs::read(out.join("c/run.log")).unwrap(), b"second");
            let _ = std::fs::remove_dir_all(&staging);
        }
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// Files recorded from every core at once all come back, each with the
    /// hash recorded last, and whether every file of the last build was
    /// recorded again is known without looking each up.
    #[test]
    fn files_recorded_on_every_core_come_back_whole() {
        use rayon::prelude::*;
        let mut previous: Files = (0..3000)
            .map(|i| (format!("c/page-{i}.html"), format!("old{i}")))
            .collect();
        previous.insert("SHA256SUMS".into(), "sums".into());
        // Written after the question is asked, as the files that list the
        // others are in the preview.
        let later = |rel: &str| rel == "SHA256SUMS";
        let sink = Sink::new(PathBuf::from("unused"), Some(&previous), true);
        (1..3000).into_par_iter().for_each(|i| {
            let rel = format!("c/page-{i}.html");
            assert!(sink.unchanged(&rel, &format!("old{i}")));
            if i % 7 == 0 {
                assert!(!sink.unchanged(&rel, "new"));
            }
        });
        assert!(!sink.files.contains("c/page-0.html"));
        assert!(sink.files.contains("c/page-2999.html"));
        // One of the last build's files is missing, however often the
        // others were recorded; a new file does not stand in for it.
        assert!(!sink.files.has_all(&previous, &later));
        sink.unchanged("c/new.html", "n");
        assert!(!sink.files.has_all(&previous, &later));
        sink.unchanged("c/page-0.html", "old0");
        assert!(sink.files.has_all(&previous, &later));
        // A file written later counts once it is recorded, not before.
        assert!(!sink.files.has_all(&previous, &|_| false));
        sink.unchanged("SHA256SUMS", "sums");
        assert!(sink.files.has_all(&previous, &later));
        assert!(sink.files.has_all(&previous, &|_| false));
        let files = sink.into_files();
        assert_eq!(files.len(), 3002);
        for i in 0..3000 {
            let sha = if i % 7 == 0 && i > 0 {
                "new".to_string()
            } else {
                format!("old{i}")
            };
            assert_eq!(files[&format!("c/page-{i}.html")], sha, "page {i}");
        }
    }
}
