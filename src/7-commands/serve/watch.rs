//! The preview's file watcher: notify's events, settled into batches of
//! changed paths for the rebuild loop. A save counts once its writer is
//! done: every file written since the last batch was closed (or renamed
//! into place) and nothing moved for [`SETTLED`]. A file still open for
//! writing, or a system that does not report closes, is waited on until
//! all has been quiet for [`QUIET`], though never more than [`AT_MOST`]
//! after the batch's first event.

use crate::error::{Context, Result};
use notify::event::{AccessKind, AccessMode, CreateKind, ModifyKind};
use notify::{Event, EventKind, RecursiveMode, Watcher};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long all must be still after the last write was closed: an
/// editor's save is several steps (write, rename, chmod, remove the
/// backup) a few microseconds apart, and a copy of many files closes one
/// and opens the next at once.
pub(super) const SETTLED: Duration = Duration::from_millis(4);
/// How long all must be still while a file written to is not closed.
pub(super) const QUIET: Duration = Duration::from_millis(20);
/// The longest a batch waits for quiet: a file written on and on (a log a
/// running benchmark appends to) does not hold back every other edit.
pub(super) const AT_MOST: Duration = Duration::from_millis(500);

/// The paths that changed since the last batch, and which of them were
/// written and not yet closed.
#[derive(Default)]
pub(super) struct Settle {
    changed: BTreeSet<PathBuf>,
    open: BTreeSet<PathBuf>,
    /// Events were lost (the kernel's queue overflowed, a watch failed):
    /// anything may have changed.
    lost: bool,
    /// When the batch's first and last events came.
    first: Option<Instant>,
    last: Option<Instant>,
}

impl Settle {
    /// Take in one event seen at `now`.
    pub(super) fn event(&mut self, event: &Event, now: Instant) {
        self.seen(now);
        self.lost |= event.need_rescan();
        match event.kind {
            // Reading is no edit; closing a file written to ends its write.
            EventKind::Access(AccessKind::Close(AccessMode::Write)) => {
                for p in &event.paths {
                    self.open.remove(p);
                }
            }
            EventKind::Access(_) => {}
            // Bytes went in, or a file came that bytes go into next.
            EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Any | ModifyKind::Other)
            | EventKind::Create(CreateKind::File | CreateKind::Any | CreateKind::Other)
            | EventKind::Any
            | EventKind::Other => {
                self.open.extend(event.paths.iter().cloned());
                self.changed.extend(event.paths.iter().cloned());
            }
            // Renames, removals, new folders, permissions: done as seen.
            _ => {
                for p in &event.paths {
                    self.open.remove(p);
                }
                self.changed.extend(event.paths.iter().cloned());
            }
        }
    }

    /// The watcher itself failed at `now`: rebuild everything.
    pub(super) fn failed(&mut self, now: Instant) {
        self.seen(now);
        self.lost = true;
    }

    fn seen(&mut self, now: Instant) {
        self.first.get_or_insert(now);
        self.last = Some(now);
    }

    /// When the batch is due, if anything is waiting.
    pub(super) fn due(&self) -> Option<Instant> {
        if self.changed.is_empty() && !self.lost {
            return None;
        }
        let wait = if self.open.is_empty() { SETTLED } else { QUIET };
        let quiet = self.last? + wait;
        Some(quiet.min(self.first? + AT_MOST))
    }

    /// The batch, if it is due at `now` (see [`Settle::take`]).
    pub(super) fn ready(&mut self, now: Instant, root: &Path) -> Option<Vec<PathBuf>> {
        self.due()
            .is_some_and(|at| at <= now)
            .then(|| self.take(root))
    }

    /// The batch (`root` stands for everything when events were lost),
    /// and a fresh start.
    pub(super) fn take(&mut self, root: &Path) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = std::mem::take(&mut self.changed).into_iter().collect();
        if std::mem::take(&mut self.lost) {
            paths.push(root.to_path_buf());
        }
        self.open.clear();
        self.first = None;
        paths
    }
}

/// Watch the campaigns (and the theme) and send each settled batch of
/// changed paths; the watcher stops when the returned value is dropped.
pub(super) fn watch(
    root: &Path,
    theme: Option<&Path>,
    tx: mpsc::Sender<Vec<PathBuf>>,
) -> Result<notify::RecommendedWatcher> {
    let (events_tx, events) = mpsc::channel();
    let mut watcher = notify::recommended_watcher(events_tx).context("cannot watch for changes")?;
    watcher
        .watch(root, RecursiveMode::Recursive)
        .with_context(|| format!("cannot watch `{}`", root.display()))?;
    if let Some(theme) = theme {
        watcher
            .watch(theme, RecursiveMode::Recursive)
            .with_context(|| format!("cannot watch `{}`", theme.display()))?;
    }
    let root = root.to_path_buf();
    std::thread::spawn(move || settle(&events, &tx, &root));
    Ok(watcher)
}

/// The settling thread: ends when the watcher is dropped or the rebuild
/// loop is gone.
fn settle(
    events: &mpsc::Receiver<notify::Result<Event>>,
    tx: &mpsc::Sender<Vec<PathBuf>>,
    root: &Path,
) {
    let mut batch = Settle::default();
    loop {
        let got = match batch.due() {
            None => events
                .recv()
                .map_err(|_| mpsc::RecvTimeoutError::Disconnected),
            Some(at) => events.recv_timeout(at.saturating_duration_since(Instant::now())),
        };
        match got {
            Ok(Ok(event)) => batch.event(&event, Instant::now()),
            Ok(Err(_)) => batch.failed(Instant::now()),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        }
        // Asked after every event too, not only when none came in time:
        // events arriving faster than they are taken in never let the
        // wait time out, and the batch would never go.
        if let Some(paths) = batch.ready(Instant::now(), root) {
            if tx.send(paths).is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{DataChange, RemoveKind, RenameMode};

    fn ev(kind: EventKind, path: &str) -> Event {
        Event::new(kind).add_path(PathBuf::from(path))
    }

    fn written(path: &str) -> Event {
        ev(EventKind::Modify(ModifyKind::Data(DataChange::Any)), path)
    }

    fn closed(path: &str) -> Event {
        ev(
            EventKind::Access(AccessKind::Close(AccessMode::Write)),
            path,
        )
    }

    #[test]
    fn a_closed_write_is_due_soon_and_an_open_one_waits_for_quiet() {
        let t = Instant::now();
        let mut s = Settle::default();
        assert_eq!(s.due(), None);
        s.event(&written("a.md"), t);
        assert_eq!(s.due(), Some(t + QUIET), "still open for writing");
        s.event(&closed("a.md"), t + Duration::from_millis(1));
        assert_eq!(s.due(), Some(t + Duration::from_millis(1) + SETTLED));
        // A second file written and not closed holds the batch back.
        s.event(&written("b.md"), t + Duration::from_millis(2));
        assert_eq!(s.due(), Some(t + Duration::from_millis(2) + QUIET));
        assert_eq!(
            s.take(Path::new("/r")),
            [PathBuf::from("a.md"), PathBuf::from("b.md")]
        );
        assert_eq!(s.due(), None);
    }

    #[test]
    fn reads_are_no_edit_and_renames_and_removals_are_done_as_seen() {
        let t = Instant::now();
        let mut s = Settle::default();
        s.event(&ev(EventKind::Access(AccessKind::Read), "a.md"), t);
        s.event(&closed("a.md"), t);
        assert_eq!(s.due(), None);
        // An editor's atomic save: a temporary file written, closed and
        // renamed over the page.
        s.event(&ev(EventKind::Create(CreateKind::File), ".a.md.tmp"), t);
        s.event(&written(".a.md.tmp"), t);
        s.event(&closed(".a.md.tmp"), t);
        s.event(
            &ev(EventKind::Modify(ModifyKind::Name(RenameMode::To)), "a.md"),
            t,
        );
        s.event(&ev(EventKind::Remove(RemoveKind::File), "a.md~"), t);
        assert_eq!(s.due(), Some(t + SETTLED));
        assert_eq!(s.take(Path::new("/r")).len(), 3);
    }

    #[test]
    fn a_file_written_on_and_on_holds_the_batch_back_at_most_a_while() {
        let t = Instant::now();
        let mut s = Settle::default();
        s.event(&closed("page.md"), t);
        s.event(&written("page.md"), t);
        for ms in (5..2000).step_by(5) {
            s.event(&written("run.log"), t + Duration::from_millis(ms));
        }
        assert_eq!(s.due(), Some(t + AT_MOST));
        s.take(Path::new("/r"));
        s.event(&written("run.log"), t + Duration::from_secs(3));
        assert_eq!(s.due(), Some(t + Duration::from_secs(3) + QUIET));
    }

    /// A log written without pause: the batch goes once [`AT_MOST`] has
    /// passed, asked after each event, while the events go on coming.
    #[test]
    fn a_batch_goes_at_most_a_while_after_its_first_event_while_events_go_on() {
        let t = Instant::now();
        let mut s = Settle::default();
        let mut sent = Vec::new();
        for ms in 0..2000 {
            let now = t + Duration::from_millis(ms);
            s.event(&written("run.log"), now);
            if let Some(paths) = s.ready(now, Path::new("/r")) {
                sent.push((ms, paths));
            }
        }
        let at: Vec<u64> = sent.iter().map(|(ms, _)| *ms).collect();
        assert_eq!(at, [500, 1001, 1502]);
        assert!(sent.iter().all(|(_, p)| p == &[PathBuf::from("run.log")]));
    }

    #[test]
    fn lost_events_stand_for_the_whole_root() {
        let t = Instant::now();
        let mut s = Settle::default();
        s.failed(t);
        assert_eq!(s.due(), Some(t + SETTLED));
        assert_eq!(s.take(Path::new("/r")), [PathBuf::from("/r")]);
        let overflow = Event::new(EventKind::Other).set_flag(notify::event::Flag::Rescan);
        s.event(&overflow, t);
        assert_eq!(s.take(Path::new("/r")), [PathBuf::from("/r")]);
    }
}
