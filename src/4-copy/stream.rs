//! One pass over a large text file: each byte read from disk once, and
//! in that pass hashed (checked against the manifest at the end), scanned,
//! its values numbered in file order, redacted, written to staging
//! (hashing the published bytes) and the written bytes scanned again in
//! memory by the rescan's own scan of the whole stream (cut where that
//! scan cuts it, on a thread of its own), so the rescan need not read the
//! copy back and finds exactly what it would have found.
//!
//! The reader cuts the file into the chunks the scanner always uses
//! ([`scan::Chunks`]: line breaks, never inside a PEM block, no state
//! carried from one to the next but the line number). Chunks go in
//! batches, a chunk per core, four batches in flight ([`Pass::step`]):
//! while one batch is read, the one before is hashed and searched, the
//! one before that (its values numbered) is replaced, and the one before
//! that is handed to the scan of the copy, hashed again and written, every
//! chunk's search and replacement, each hash and the write a task of its
//! own; memory stays a few chunks whatever the file's size. Values are
//! numbered between steps, batch by batch in file order, so placeholders
//! do not depend on the thread count.
//!
//! What the pass cannot skip is what it costs: the search of the file and
//! the scan of what is written, and the two hashes. The original is hashed
//! chunk by chunk in order, so the hash of what is written starts only
//! at the first chunk redaction changes, from the original's hash of the
//! chunks before it (they were written as read): a file with nothing to
//! redact is hashed once.

use crate::error::Result;
use crate::public::Copied;
use crate::redact::scan::{self, View};
use crate::redact::{Counts, Hit, Redactor};
use crate::sink::Staged;
use sha2::{Digest, Sha256};
use std::path::Path;
use std::sync::Arc;

/// The most chunks in one batch.
const MAX_BATCH: usize = 8;

/// Buffers of chunks done with, for the next ones (of the same file or
/// the next): a chunk is a MiB or more, and one allocated (and zeroed by the
/// kernel) for each cost more than hashing it. At most [`Pool::KEEP`]
/// are kept; the copy stage owns the pool, so they go with it. Every
/// buffer of a pass comes from the pool and goes back to it, whatever
/// thread is done with it: one freed on another thread than the one that
/// allocated it, and one per file, were held by the allocator (a clean
/// 1 GB of logs peaked at 330 MB; now under 50 MB).
#[derive(Default)]
pub(crate) struct Pool(std::sync::Mutex<Vec<Vec<u8>>>);

impl Pool {
    /// Four batches in flight (the last one shared with the scan of the
    /// copy, in its channel) and one the scan is still reading, at most.
    const KEEP: usize = 6 * MAX_BATCH;

    fn take(&self) -> Vec<u8> {
        let mut pool = self.0.lock().unwrap_or_else(|e| e.into_inner());
        pool.pop().unwrap_or_default()
    }

    /// A buffer shared with the scan of the copy: back to the pool once
    /// the last of the two is done with it.
    fn give_shared(&self, buf: Arc<Vec<u8>>) {
        if let Some(buf) = Arc::into_inner(buf) {
            self.give(buf);
        }
    }

    fn give(&self, mut buf: Vec<u8>) {
        let mut pool = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if pool.len() < Self::KEEP && buf.capacity() > 0 {
            buf.clear();
            pool.push(buf);
        }
    }
}

/// How one file is read and written.
pub(crate) struct Pass<'a> {
    pub(crate) redactor: &'a Redactor,
    /// The file as verified (its original path names its view).
    pub(crate) from: &'a Path,
    /// How the copy will be read: the view of its published name.
    pub(crate) published: View,
    pub(crate) buffers: &'a Pool,
}

/// What the pass made: the copy, and what scanning the written bytes
/// found (line, column, hit), which the rescan reports as its own.
pub(crate) struct Streamed {
    pub(crate) copied: Copied,
    pub(crate) scanned: scan::Scanned,
}

/// One chunk once redacted: the bytes to write, and what was replaced.
struct Done {
    out: Arc<Vec<u8>>,
    counts: Counts,
    /// Searched and nothing found: written as it was read.
    clean: bool,
}

/// A chunk as written, sent to the scan of the copy: its bytes, and
/// whether it is [`Done::clean`].
type Sent = (Arc<Vec<u8>>, bool);

/// Where the copy goes: the staged file, the hash of what it holds, and
/// the scan of the written bytes ([`Written`]), which they are sent to.
struct Out {
    to: Staged,
    published: PublishedHash,
    bytes: u64,
    counts: Counts,
    /// Any chunk changed by redaction.
    changed: bool,
    scan: std::sync::mpsc::SyncSender<Sent>,
}

impl Pass<'_> {
    /// Copy the file into `to` in one read. `None` when it turns out not
    /// to be text (a NUL byte after its first bytes): the caller copies it
    /// the way binaries are, and nothing this pass numbered is kept (see
    /// [`Redactor::rewind`]). The caller checks the original's hash and
    /// size ([`Copied::sha256`], [`Copied::bytes`]) against the manifest
    /// before anything is published.
    pub(crate) fn run(&self, to: Staged) -> Result<Option<Streamed>> {
        // The written bytes are scanned as the rescan would read the copy
        // back: the same scan of the whole stream, cut into chunks where
        // that scan cuts them (not where the input was cut: replacing
        // values moves every later cut), on a thread of its own.
        // A batch's worth waits for the scan without holding up the pass.
        let (send, written) = std::sync::mpsc::sync_channel::<Sent>(per_batch());
        // A chunk searched in the view the copy is read in, found clean and
        // written unchanged is not searched again where the scan of the
        // copy cuts it exactly there (a clean file is searched once).
        let same_view = View::of(self.from) == self.published;
        std::thread::scope(|threads| {
            let (det, view, pool) = (&self.redactor.detector, self.published, self.buffers);
            let scanner = threads.spawn(move || {
                let written = Written::new(written, pool);
                let clean = written.clean.clone();
                let mut searched = |start: u64, len: usize| same_view && clean.covers(start, len);
                scan::scan_written(det, written, (view, ""), &mut searched)
            });
            let Some(copied) = self.copy(to, send)? else {
                return Ok(None);
            };
            let scanned = scanner.join().map_err(|_| {
                crate::error::Error::Invalid(format!(
                    "internal error: the scan of the copy of `{}` stopped",
                    self.from.display()
                ))
            })??;
            Ok(Some(Streamed { copied, scanned }))
        })
    }

    /// The pass itself, each batch sent to `scan` as the step that
    /// writes it starts (see [`Pass::run`]).
    fn copy(&self, to: Staged, scan: std::sync::mpsc::SyncSender<Sent>) -> Result<Option<Copied>> {
        let numbered = self.redactor.mark();
        let file = crate::fsx::open(self.from)?;
        let read_err = |e: crate::error::Error| crate::error::Error::failed("read", self.from, e);
        let pool = self.buffers;
        let seams = scan::Seams {
            det: &self.redactor.detector,
            view: View::of(self.from),
        };
        let mut chunks = scan::Chunks::with_buffer(file, pool.take(), Some(seams));
        let mut input = Input::default();
        let per_batch = per_batch();
        let mut out = Out {
            to,
            published: PublishedHash::default(),
            bytes: 0,
            counts: Counts::new(),
            changed: false,
            scan,
        };
        // Four batches in flight, each a step further on: read, hashed
        // and found, replaced, sent to be scanned then hashed again and
        // written.
        let mut read =
            read_batch(&mut chunks, &mut input.bytes, per_batch, pool).map_err(read_err)?;
        let mut found: Vec<(Vec<u8>, Vec<Hit>)> = Vec::new();
        let mut done: Vec<Done> = Vec::new();
        while !read.is_empty() || !found.is_empty() || !done.is_empty() {
            let Some(to_find) = read.text() else {
                self.redactor.rewind(numbered);
                return Ok(None);
            };
            let step = Step {
                to_find,
                to_replace: std::mem::take(&mut found),
                to_write: std::mem::take(&mut done),
            };
            let reading = (&mut chunks, &mut input);
            let (next, hits, replaced, wrote) = self.step(step, reading, &mut out, per_batch);
            wrote?;
            // Numbered in file order, before any of them is replaced.
            for (_, h) in &hits {
                self.redactor.register(h);
            }
            found = hits;
            done = replaced;
            read = next.map_err(read_err)?;
        }
        let (_, left) = chunks.into_parts();
        left.into_iter().for_each(|b| pool.give(b));
        out.to.finish()?;
        let changed = out.changed;
        let sha256 = crate::hash::hex(&input.hash.finalize());
        debug_assert!(out.published.before.is_empty());
        let copied = Copied {
            published_sha256: out
                .published
                .hash
                .map_or_else(|| sha256.clone(), |h| crate::hash::hex(&h.finalize())),
            sha256,
            bytes: input.bytes,
            published_bytes: out.bytes,
            redactions: out.counts,
            binary: false,
            scanned: None,
        };
        debug_assert!(changed || copied.published_sha256 == copied.sha256);
        Ok(Some(copied))
    }

    /// One step of the pipeline, every part a task of its own so both
    /// cores stay busy: the next batch read, the batch read before hashed
    /// and each of its chunks searched, each of the batch before that
    /// (its values numbered) replaced, and the batch before that handed to
    /// the scan of the copy first (its thread scans it while this step's
    /// tasks run: handed on once they were done, it waited a step), then
    /// hashed and written. The two hashes
    /// and the write are tasks of their own, not parts of the read and the
    /// write: each is a chain through the whole file, and one chain
    /// holding two of them set the pace of every step. Returns what each
    /// made, in order.
    fn step<R: std::io::Read + Send>(
        &self,
        step: Step,
        (chunks, input): (&mut scan::Chunks<R>, &mut Input),
        out: &mut Out,
        per_batch: usize,
    ) -> Stepped {
        let (r, pool, view) = (self.redactor, self.buffers, View::of(self.from));
        let mut next = None;
        let mut wrote = None;
        let mut before = Vec::new();
        let mut hits: Vec<Vec<Hit>> = vec![Vec::new(); step.to_find.len()];
        let mut replaced: Vec<Option<Done>> = Vec::new();
        replaced.resize_with(step.to_replace.len(), || None);
        out.send(&step.to_write);
        rayon::scope(|s| {
            let Input { hash, bytes } = input;
            let (to_find, to_write) = (&step.to_find, &step.to_write);
            s.spawn(|_| next = Some(read_batch(chunks, bytes, per_batch, pool)));
            s.spawn(|_| before = hash_read(hash, to_find));
            s.spawn(|_| out.published.hash(to_write));
            s.spawn(|_| wrote = Some(write(&mut out.to, to_write)));
            for (slot, chunk) in hits.iter_mut().zip(to_find) {
                s.spawn(move |_| *slot = scan::find_all(&r.detector, chunk, view));
            }
            for (slot, (chunk, hits)) in replaced.iter_mut().zip(step.to_replace) {
                s.spawn(move |_| *slot = Some(self.replace(chunk, &hits, pool)));
            }
        });
        out.published.before.extend(before);
        for d in step.to_write {
            pool.give_shared(d.out);
        }
        let found = step.to_find.into_iter().zip(hits).collect();
        let replaced = replaced.into_iter().flatten().collect();
        let next = next.expect("the read ran");
        (next, found, replaced, wrote.expect("the write ran"))
    }

    /// One chunk with its `hits` replaced.
    fn replace(&self, chunk: Vec<u8>, hits: &[Hit], pool: &Pool) -> Done {
        let mut counts = Counts::new();
        let clean = hits.is_empty();
        let out = if clean {
            chunk
        } else {
            let mut out = pool.take();
            // Room for the longest placeholders: the buffer never grows.
            out.reserve_exact(chunk.len() + 32 * hits.len());
            self.redactor
                .replace_into(&chunk, hits, &mut counts, &mut out);
            pool.give(chunk);
            out
        };
        Done {
            out: Arc::new(out),
            counts,
            clean,
        }
    }
}

/// The hash of what is written, from the first chunk redaction changed
/// on; until then what is written is what was read.
#[derive(Default)]
struct PublishedHash {
    hash: Option<Sha256>,
    /// For each chunk of the original hashed and not yet written, in
    /// order: the original's hash of every chunk before it, where
    /// [`Self::hash`] starts.
    before: std::collections::VecDeque<Sha256>,
}

impl PublishedHash {
    /// Hash the chunks about to be written, in order.
    fn hash(&mut self, done: &[Done]) {
        for d in done {
            let before = self
                .before
                .pop_front()
                .expect("every chunk written was hashed as searched");
            if !d.clean && self.hash.is_none() {
                self.hash = Some(before);
            }
            if let Some(hash) = &mut self.hash {
                hash.update(d.out.as_slice());
            }
        }
    }
}

/// Write redacted chunks in order.
fn write(to: &mut Staged, done: &[Done]) -> Result<()> {
    done.iter().try_for_each(|d| to.write_all(&d.out))
}

impl Out {
    /// Count the chunks of a step's write, then hand them to the scan of
    /// the written bytes (whether the write went well is reported apart).
    fn send(&mut self, done: &[Done]) {
        for d in done {
            self.bytes += d.out.len() as u64;
            self.changed |= !d.counts.is_empty();
            for (c, n) in &d.counts {
                *self.counts.entry(*c).or_insert(0) += n;
            }
            // A scan that stopped is reported when it is joined.
            let _ = self.scan.send((Arc::clone(&d.out), d.clean));
        }
    }
}

/// The written bytes as the scan reads them: each chunk in the order it
/// is written (sent as its write starts), then the end once the pass is
/// done. A chunk read through
/// goes back to the pool: freed on this thread, the buffers the pass
/// allocates on others were kept by the allocator, not reused (700 MB
/// held by a 2 GiB log). Where clean chunks were written is noted in
/// `clean`.
struct Written<'a> {
    chunks: std::sync::mpsc::Receiver<Sent>,
    current: Arc<Vec<u8>>,
    at: usize,
    /// Bytes received before `current`.
    received: u64,
    pool: &'a Pool,
    clean: CleanSpans,
}

impl<'a> Written<'a> {
    fn new(chunks: std::sync::mpsc::Receiver<Sent>, pool: &'a Pool) -> Self {
        Written {
            chunks,
            current: Arc::default(),
            at: 0,
            received: 0,
            pool,
            clean: CleanSpans::default(),
        }
    }
}

impl std::io::Read for Written<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.current.len() {
            match self.chunks.recv() {
                Ok((next, clean)) => {
                    self.received += self.current.len() as u64;
                    if clean {
                        self.clean.add(self.received, next.len());
                    }
                    let done = std::mem::replace(&mut self.current, next);
                    self.pool.give_shared(done);
                    self.at = 0;
                }
                Err(_) => {
                    // The end: the last chunk goes back too.
                    self.pool.give_shared(std::mem::take(&mut self.current));
                    self.at = 0;
                    return Ok(0);
                }
            }
        }
        let n = buf.len().min(self.current.len() - self.at);
        buf[..n].copy_from_slice(&self.current[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Where clean chunks lie in the written stream (start, length), oldest
/// first; the scan asks in stream order, so those before its question
/// are dropped as it goes. Shared by the reader and the scan's question,
/// on the scan's thread.
#[derive(Clone, Default)]
struct CleanSpans(std::rc::Rc<std::cell::RefCell<std::collections::VecDeque<(u64, usize)>>>);

impl CleanSpans {
    fn add(&self, start: u64, len: usize) {
        self.0.borrow_mut().push_back((start, len));
    }

    /// Is the chunk at `start` of `len` bytes exactly a clean chunk?
    fn covers(&self, start: u64, len: usize) -> bool {
        let mut chunks = self.0.borrow_mut();
        while chunks.front().is_some_and(|&(s, _)| s < start) {
            chunks.pop_front();
        }
        chunks.front() == Some(&(start, len))
    }
}

/// What one [`Pass::step`] works on.
struct Step {
    to_find: Vec<Vec<u8>>,
    /// Chunks whose values are numbered, with those values.
    to_replace: Vec<(Vec<u8>, Vec<Hit>)>,
    to_write: Vec<Done>,
}

/// What one [`Pass::step`] made: the next batch read, the chunks found
/// (with their values, not yet numbered), those replaced, and whether
/// writing went well.
type Stepped = (
    Result<Batch>,
    Vec<(Vec<u8>, Vec<Hit>)>,
    Vec<Done>,
    Result<()>,
);

/// Chunks read in order, and whether one of them holds a NUL byte (the
/// scanner reads a file with one as a binary's printable runs).
#[derive(Default)]
struct Batch {
    chunks: Vec<Vec<u8>>,
    nul: bool,
}

/// The original as read so far: the count of its chunks' bytes, and the
/// hash of those searched (a batch behind).
#[derive(Default)]
struct Input {
    hash: Sha256,
    bytes: u64,
}

impl Batch {
    fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// The chunks, if they are text.
    fn text(&mut self) -> Option<Vec<Vec<u8>>> {
        (!self.nul).then(|| std::mem::take(&mut self.chunks))
    }
}

/// A chunk per core in each batch: two at least, eight at most (the
/// batches in flight are the memory the pass takes).
fn per_batch() -> usize {
    rayon::current_num_threads().clamp(2, MAX_BATCH)
}

/// Up to `n` chunks, read in order and counted into `bytes`.
fn read_batch<R: std::io::Read>(
    chunks: &mut scan::Chunks<R>,
    bytes: &mut u64,
    n: usize,
    pool: &Pool,
) -> Result<Batch> {
    let mut batch = Batch {
        chunks: Vec::with_capacity(n),
        nul: false,
    };
    while batch.chunks.len() < n {
        match chunks.next_chunk(pool.take())? {
            Some(c) => {
                batch.nul |= memchr::memchr(0, &c).is_some();
                *bytes += c.len() as u64;
                batch.chunks.push(c);
            }
            None => break,
        }
    }
    Ok(batch)
}

/// The original's `chunks`, read in order, hashed into `hash`; for each,
/// the hash of every chunk before it.
fn hash_read(hash: &mut Sha256, chunks: &[Vec<u8>]) -> Vec<Sha256> {
    chunks
        .iter()
        .map(|c| {
            let before = hash.clone();
            hash.update(c);
            before
        })
        .collect()
}
