//! Reading files for redaction: text in chunks that end at line breaks (so
//! memory stays flat on huge logs and no finding is cut in two), binary files
//! told apart, and whole folders scanned in parallel into a report of
//! file:line:column and category, never the value.

use super::{Category, Detector, Hit};
use crate::error::Result;
use rayon::prelude::*;
use serde::Serialize;
use std::borrow::Cow;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Target chunk size; a chunk may run longer to keep a PEM block whole.
/// The one pass over a large file ([`crate::stream`]) holds a few batches
/// of chunks at once, each read, hashed, searched, replaced, hashed again,
/// written and scanned by whichever core is free. At 2 MiB, the size of
/// a core's L2 cache here, more of them are still in a cache at the next
/// step: a gigabyte of logs with values built in 0.88 of the time it took
/// in chunks of 4 MiB (CPU time 0.90, peak memory 77 to 50 MB; without
/// values 0.88 too). Chunks of 1 MiB were no faster (0.90) and cut the
/// file at twice as many seams.
pub(crate) const CHUNK: usize = 2 << 20;
/// Target size of the chunks [`Cuts::Content`] cuts: small, since each
/// chunk an edit touches is searched again whole.
pub(crate) const CONTENT_CHUNK: usize = 256 << 10;
/// Files from this size on are read against a [`CleanChunks`] memory;
/// smaller ones are read whole (keeping their bytes would cost more
/// memory than searching them again costs time).
pub(crate) const REMEMBER_FROM: u64 = 2 * CONTENT_CHUNK as u64;
const PEM_SLACK: usize = 1 << 20;
/// How much one read asks for.
const BLOCK: usize = 64 << 10;
/// How far on either side of a cut a value crossing it is looked for
/// ([`mend_cut`]).
const SEAM: usize = 4 << 10;
/// How many times one cut is moved past a value at most ([`mend_cut`]):
/// each move searches about three seams again, so a chain of lines each
/// the value of the key before it and the key of the value after it
/// (only a hostile file is written so) costs a bounded search per chunk,
/// not one per line up to the slack.
const MAX_MOVES: usize = 64;

/// What a cut must not split: the values `det` finds in `view`. Chunks are
/// searched one by one, so a value a cut splits (`api_key:` at the end of
/// one chunk, the key on the next line) would be found in neither; cuts
/// are moved past such values ([`mend_cut`]).
#[derive(Clone, Copy)]
pub(crate) struct Seams<'d> {
    pub(crate) det: &'d Detector,
    pub(crate) view: View,
}

/// Feed `reader` to `f` in chunks ending at a line break (a very long line
/// is cut at a space or comma), never inside a PEM private key block nor,
/// given `seams`, inside a value they find.
pub(crate) fn for_each_chunk(
    reader: impl Read,
    seams: Option<Seams>,
    f: impl FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    for_each_chunk_cut(reader, Cuts::Fixed, seams, f)
}

/// Where a stream is cut into chunks; either way at line breaks, never
/// inside a PEM block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cuts {
    /// At the last line break within [`CHUNK`] bytes: the one pass over a
    /// large file and the scan of its copy cut the same bytes the same way.
    Fixed,
    /// At the first line break past half of [`CONTENT_CHUNK`] that ends
    /// a line its own bytes mark ([`marked_line`]), else at the last line
    /// break read. A cut then depends on the lines around it, not
    /// on where the chunk began: an edit that moves what follows it
    /// changes the chunk it is in, and the chunks after are the same
    /// bytes as before ([`CleanChunks`] knows them).
    Content,
}

impl Cuts {
    /// How far a chunk is read before it is cut.
    fn size(self) -> usize {
        match self {
            Cuts::Fixed => CHUNK,
            Cuts::Content => CONTENT_CHUNK,
        }
    }
}

/// [`for_each_chunk`], cut as `cuts` says.
fn for_each_chunk_cut(
    mut reader: impl Read,
    cuts: Cuts,
    seams: Option<Seams>,
    mut f: impl FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    // Read straight into `buf`, which grows only as far as the input
    // needs: most files are small.
    let mut buf: Vec<u8> = Vec::new();
    let mut eof = false;
    while let Some(cut) = next_cut(&mut reader, &mut buf, &mut eof, (cuts, seams))? {
        f(&buf[..cut])?;
        buf.drain(..cut);
    }
    Ok(())
}

/// The chunks of [`for_each_chunk`], each its own buffer, pulled one at a
/// time: a reader hands them on to be scanned elsewhere (several at once)
/// while it reads the next.
pub(crate) struct Chunks<'d, R> {
    reader: R,
    seams: Option<Seams<'d>>,
    buf: Vec<u8>,
    eof: bool,
    /// Buffers handed in once the stream had ended.
    unused: Vec<Vec<u8>>,
}

impl<'d, R: Read> Chunks<'d, R> {
    /// Chunks of `reader`, read into `buf` (empty, or a chunk done with),
    /// cut as [`for_each_chunk`] cuts them given `seams`.
    pub(crate) fn with_buffer(reader: R, mut buf: Vec<u8>, seams: Option<Seams<'d>>) -> Self {
        buf.clear();
        Chunks {
            reader,
            seams,
            buf,
            eof: false,
            unused: Vec::new(),
        }
    }

    /// The next chunk, cut where [`for_each_chunk`] cuts it; `None` at
    /// the end of the stream. `spare` (empty, or a chunk done with) is the
    /// buffer the chunk after it is read into: a caller that hands back
    /// the buffers it is done with allocates none per chunk.
    pub(crate) fn next_chunk(&mut self, mut spare: Vec<u8>) -> Result<Option<Vec<u8>>> {
        let cuts = (Cuts::Fixed, self.seams);
        let Some(cut) = next_cut(&mut self.reader, &mut self.buf, &mut self.eof, cuts)? else {
            self.unused.push(spare);
            return Ok(None);
        };
        // The rest (a line begun) starts the next buffer, sized for a
        // whole chunk, the block read past it and the one read to look
        // past the cut ([`mend_cut`]), so it does not grow by steps.
        spare.clear();
        spare.reserve_exact((CHUNK + 2 * BLOCK).max(self.buf.len() - cut));
        spare.extend_from_slice(&self.buf[cut..]);
        self.buf.truncate(cut);
        Ok(Some(std::mem::replace(&mut self.buf, spare)))
    }

    /// The reader, and the buffers left with the chunks (to be used
    /// again: see [`Chunks::next_chunk`]).
    pub(crate) fn into_parts(self) -> (R, Vec<Vec<u8>>) {
        let mut left = self.unused;
        left.push(self.buf);
        (self.reader, left)
    }
}

/// Fill `buf` from `reader` as far as the next chunk needs and say where
/// that chunk ends (`None` when nothing is left): at a line break, or,
/// to keep an unterminated PEM block whole, after it; given `seams`, then
/// moved past any value crossing it ([`mend_cut`]), and kept out of a PEM
/// block again wherever that moved it.
fn next_cut(
    reader: &mut impl Read,
    buf: &mut Vec<u8>,
    eof: &mut bool,
    (cuts, seams): (Cuts, Option<Seams>),
) -> Result<Option<usize>> {
    let Some(mut cut) = first_cut(reader, buf, eof, cuts)? else {
        return Ok(None);
    };
    let Some(seams) = seams else {
        return Ok(Some(cut));
    };
    // Each turn moves the cut on, never back: it ends.
    loop {
        let mended = mend_cut(reader, (buf, eof), cuts.size(), seams, cut)?;
        let kept = keep_pem_whole(reader, (buf, eof), cuts.size(), mended, mended)?;
        if kept == mended {
            return Ok(Some(kept));
        }
        cut = kept;
    }
}

/// Move `cut` while it changes what is found: the text around it (from
/// a line's start about [`SEAM`] bytes back, to [`SEAM`] bytes ahead,
/// further while a value runs on to the window's end) is searched whole
/// and as its two sides apart, and a value found only whole (a key before
/// the cut and its value after it, or a value the cut splits) moves the
/// cut to the line break after that value, or, in a line too long to end
/// within reach, to the value's end; it is checked again there. At the
/// stream's end nothing follows, so nothing is moved. What this cannot
/// see: a value separated from its key by more than the window's reach
/// of white space, a value running on more than [`PEM_SLACK`] past the
/// chunk's `size` (memory stays bounded: that one is found from its
/// start, not whole), and a value crossing a cut already moved
/// [`MAX_MOVES`] times.
fn mend_cut(
    reader: &mut impl Read,
    (buf, eof): (&mut Vec<u8>, &mut bool),
    size: usize,
    seams: Seams,
    mut cut: usize,
) -> Result<usize> {
    let limit = size + PEM_SLACK;
    let mut ahead = SEAM;
    let mut moves = 0;
    loop {
        // Block by block, as `first_cut` reads: the stream is read up to
        // the same offsets, so the cuts after this one fall where they
        // would without it (a cut is within a block of the end of what
        // was read, so one block is read at most where no value crosses
        // it; `Chunks` buffers hold a chunk and two blocks).
        while !*eof && buf.len() < cut + ahead {
            *eof = fill(reader, buf, BLOCK)?;
        }
        if cut >= buf.len() {
            return Ok(buf.len());
        }
        let to = (cut + ahead).min(buf.len());
        let Some(end) = split_value(buf, cut, to, seams) else {
            return Ok(cut);
        };
        // A value that runs to the window's end may run on past it.
        let more = to < buf.len() || !*eof;
        if end >= to && more && cut + ahead < limit {
            ahead = (2 * ahead).min(limit - cut);
            continue;
        }
        if end > limit || moves == MAX_MOVES {
            return Ok(cut);
        }
        moves += 1;
        let mut next = memchr::memchr(b'\n', &buf[end..]).map(|i| end + i + 1);
        while next.is_none() && !*eof && buf.len() < limit {
            let at = buf.len();
            *eof = fill(reader, buf, BLOCK)?;
            next = memchr::memchr(b'\n', &buf[at..]).map(|i| at + i + 1);
        }
        cut = match next {
            Some(next) if next <= limit => next,
            _ if *eof && buf.len() <= limit => buf.len(),
            _ => end,
        };
        ahead = SEAM;
    }
}

/// Where the values a cut at `cut` hides from a search of each side end
/// (past the cut at least), if there are any: those found in the text
/// from about [`SEAM`] bytes before the cut to `to` searched whole and not
/// in either side searched alone. The text starts at a line's start where
/// one is near, so a search sees a line as a search of the chunk would.
fn split_value(buf: &[u8], cut: usize, to: usize, seams: Seams) -> Option<usize> {
    let near = cut.saturating_sub(SEAM);
    let back = near.saturating_sub(SEAM);
    let from = memchr::memrchr(b'\n', &buf[back..near]).map_or(near, |i| back + i + 1);
    let find = |a: usize, b: usize| -> Vec<(usize, usize)> {
        let hits = find_all(seams.det, &buf[a..b], seams.view);
        hits.iter().map(|h| (a + h.start, a + h.end)).collect()
    };
    let whole = find(from, to);
    if whole.is_empty() {
        return None;
    }
    // In order: each side's spans are, and the right side's follow the
    // left's.
    let mut apart = find(from, cut);
    apart.extend(find(cut, to));
    whole
        .into_iter()
        .filter(|h| apart.binary_search(h).is_err())
        .map(|(_, end)| end.max(cut + 1))
        .max()
}

/// [`next_cut`] before it is mended.
fn first_cut(
    reader: &mut impl Read,
    buf: &mut Vec<u8>,
    eof: &mut bool,
    cuts: Cuts,
) -> Result<Option<usize>> {
    let size = cuts.size();
    while !*eof && buf.len() < size {
        // A stream longer than a block gets room for a whole chunk at
        // once, not by doublings (each a copy, and fresh pages for every
        // large file: half the page faults of a build with large logs).
        if buf.len() >= BLOCK && buf.capacity() < size + 2 * BLOCK {
            buf.reserve_exact(size + 2 * BLOCK - buf.len());
        }
        *eof = fill(reader, buf, BLOCK)?;
    }
    if *eof {
        return Ok((!buf.is_empty()).then_some(buf.len()));
    }
    if cuts == Cuts::Content {
        let cut = content_cut(buf, CONTENT_CHUNK);
        if let Some(cut) = cut.filter(|&c| open_pem(&buf[..c]).is_none()) {
            return Ok(Some(cut));
        }
    }
    let cut = cut_point(buf);
    keep_pem_whole(reader, (buf, eof), size, cut, 0).map(Some)
}

/// `cut`, or, where it would leave a PEM block unterminated, a later one
/// (reading on until the block ends, or the slack runs out), never before
/// `floor`: the block goes whole into the next chunk or into this one.
fn keep_pem_whole(
    reader: &mut impl Read,
    (buf, eof): (&mut Vec<u8>, &mut bool),
    size: usize,
    mut cut: usize,
    floor: usize,
) -> Result<usize> {
    while let Some(begin) = open_pem(&buf[..cut]) {
        if buf.len() >= size + PEM_SLACK || *eof {
            break;
        }
        *eof = fill(reader, buf, BLOCK)?;
        cut = if *eof {
            buf.len()
        } else {
            cut_point(buf).max(begin).max(floor)
        };
    }
    Ok(cut)
}

/// Read up to `more` bytes from `reader` onto the end of `buf` (fewer
/// only where the input ends); `true` when nothing was left to read, so
/// chunks are cut where reading block by block cut them.
fn fill(reader: &mut impl Read, buf: &mut Vec<u8>, more: usize) -> Result<bool> {
    Ok(reader.take(more as u64).read_to_end(buf)? == 0)
}

fn cut_point(buf: &[u8]) -> usize {
    if let Some(i) = buf.iter().rposition(|&b| b == b'\n') {
        return i + 1;
    }
    if let Some(i) = buf.iter().rposition(|&b| matches!(b, b' ' | b',' | b'\t')) {
        return i + 1;
    }
    // One enormous token: cut at a character boundary.
    let mut i = buf.len();
    while i > 1 && (buf[i - 1] & 0xC0) == 0x80 {
        i -= 1;
    }
    i.saturating_sub(1).max(1)
}

/// [`Cuts::Content`] for chunks of `size`: after the first line past
/// `size / 2` bytes of `buf` that [`marked_line`] marks, if one is in
/// `buf` (the gate cuts large pages the same way).
pub(crate) fn content_cut(buf: &[u8], size: usize) -> Option<usize> {
    let half = size / 2;
    let mut start = memchr::memrchr(b'\n', buf.get(..half)?)? + 1;
    for end in memchr::memchr_iter(b'\n', &buf[half..]).map(|i| half + i) {
        if marked_line(&buf[start..end]) {
            return Some(end + 1);
        }
        start = end + 1;
    }
    None
}

/// About one line in 128, chosen by its bytes alone (FNV-1a).
fn marked_line(line: &[u8]) -> bool {
    let h = line.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    h >> 57 == 0
}

/// Where an unterminated PEM block begins in `chunk`, if one does.
fn open_pem(chunk: &[u8]) -> Option<usize> {
    let tail = &chunk[chunk.len().saturating_sub(PEM_SLACK)..];
    // The forward search is vectorised, the reverse one is not: most
    // chunks hold no PEM header at all.
    memchr::memmem::find(tail, b"-----BEGIN")?;
    let begin = memchr::memmem::rfind(tail, b"-----BEGIN")?;
    let after = &tail[begin..];
    if memchr::memmem::find(after, b"-----END").is_some() {
        return None;
    }
    Some(chunk.len() - tail.len() + begin)
}

/// What a file is, told from its first bytes (at most [`HEAD`] of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Bytes without NUL: UTF-8, Latin-1 or any ASCII-compatible encoding,
    /// scanned and redacted as bytes (the detectors match ASCII values).
    Text,
    /// UTF-16 with a byte order mark: decoded to scan, re-encoded when redacted.
    Utf16 {
        big_endian: bool,
    },
    Gzip,
    Zstd,
    Tar,
    /// Anything else with a NUL byte: scanned for printable runs.
    Binary,
}

/// How many leading bytes [`Kind::of`] looks at (a tar header's magic ends
/// at byte 263).
pub(crate) const HEAD: usize = 512;

impl Kind {
    pub(crate) fn of(head: &[u8]) -> Kind {
        match head {
            [0xFF, 0xFE, ..] => Kind::Utf16 { big_endian: false },
            [0xFE, 0xFF, ..] => Kind::Utf16 { big_endian: true },
            [0x1F, 0x8B, ..] => Kind::Gzip,
            [0x28, 0xB5, 0x2F, 0xFD, ..] => Kind::Zstd,
            _ if head.len() >= 262 && &head[257..262] == b"ustar" => Kind::Tar,
            _ if head.contains(&0) => Kind::Binary,
            _ => Kind::Text,
        }
    }

    /// Compressed or archived: scanned through its members, published
    /// only as it is.
    pub(crate) fn is_archive(self) -> bool {
        matches!(self, Kind::Gzip | Kind::Zstd | Kind::Tar)
    }
}

/// A finding as reported: where, and what kind; never the value.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub(crate) struct Finding {
    pub(crate) file: String,
    /// The member of an archive the finding is in (its name masked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) member: Option<String>,
    pub(crate) line: usize,
    pub(crate) column: usize,
    pub(crate) category: Category,
}

/// What scanning one file found.
#[derive(Debug, Default, Clone)]
pub(crate) struct Scanned {
    /// Not text: a binary file (scanned for printable runs) or an archive
    /// (scanned through its members); either is published only as it is.
    pub(crate) binary: bool,
    /// (line, column, hit) in file order; for UTF-16, in the decoded text.
    pub(crate) hits: Vec<(usize, usize, Hit)>,
    /// Findings inside an archive's members: (member, masked with
    /// [`mask`]; line; column; category).
    pub(crate) inner: Vec<(String, usize, usize, Category)>,
    /// Content that could not be read, and why (a corrupt archive, nesting
    /// too deep): never reported clean.
    pub(crate) skipped: Vec<String>,
}

impl Scanned {
    /// Anything found, at the top or inside.
    pub(crate) fn found(&self) -> bool {
        !self.hits.is_empty() || !self.inner.is_empty()
    }
}

/// How a file's text is read besides as it is: the forms a reader (or a
/// parser) will see, so nothing hides behind markup or escapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum View {
    Plain,
    /// Markdown: also with backslash escapes and character references
    /// decoded, and with inline tags taken out.
    Markdown,
    /// HTML, SVG, XML: references decoded, and also the text with the
    /// tags taken out (`10.0.<em>0</em>.5` reads as an address).
    Markup,
    /// JSON and JSONL: also with `\uXXXX` and `\/` escapes decoded.
    Json,
    /// Not text: the printable runs, ASCII (as the bytes are) and UTF-16LE.
    Strings,
}

impl View {
    pub(crate) fn of(path: &Path) -> View {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        match ext.to_ascii_lowercase().as_str() {
            "html" | "htm" | "xhtml" | "svg" | "xml" => View::Markup,
            "md" | "markdown" => View::Markdown,
            "json" | "jsonl" => View::Json,
            _ => View::Plain,
        }
    }
}

/// A decoded view of raw bytes: its text, and the raw span each piece of
/// it came from, so a value found in the view is replaced in the raw
/// bytes. Pieces, not a span per byte: most of a view is runs of raw bytes
/// kept as they are, and a span per byte cost eight bytes of memory for
/// every byte scanned.
struct Decoded {
    text: Vec<u8>,
    pieces: Vec<Piece>,
}

/// Where view bytes `at..` (up to the next piece) came from.
#[derive(Clone, Copy)]
struct Piece {
    at: u32,
    from: u32,
    to: u32,
    stride: Stride,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stride {
    /// Every byte of the piece came from the whole span `from..to` (a
    /// decoded reference, a tag read as a space).
    Whole,
    /// Byte `k` of the piece is raw byte `from + k`.
    One,
    /// Byte `k` of the piece is raw bytes `from + 2k..from + 2k + 2` (a
    /// UTF-16LE character read as its low byte).
    Two,
}

impl Decoded {
    fn with_capacity(n: usize) -> Self {
        Decoded {
            text: Vec::with_capacity(n),
            pieces: Vec::new(),
        }
    }

    fn piece(&mut self, len: usize, from: usize, to: usize, stride: Stride) {
        if len == 0 {
            return;
        }
        let at = self.text.len() as u32;
        let (from, to) = (from as u32, to as u32);
        match self.pieces.last_mut() {
            // A run that goes on where the last one stopped: one piece.
            Some(last) if stride != Stride::Whole && last.stride == stride && last.to == from => {
                last.to = to;
            }
            // The same span again (a tag's line breaks): one piece.
            Some(last)
                if stride == Stride::Whole
                    && last.stride == stride
                    && (last.from, last.to) == (from, to) => {}
            _ => self.pieces.push(Piece {
                at,
                from,
                to,
                stride,
            }),
        }
    }

    fn push(&mut self, bytes: &[u8], from: usize, to: usize) {
        self.piece(bytes.len(), from, to, Stride::Whole);
        self.text.extend_from_slice(bytes);
    }

    fn push_char(&mut self, c: char, from: usize, to: usize) {
        // A decoded line break would join or split lines: a space instead.
        let c = if c == '\n' || c == '\r' { ' ' } else { c };
        self.push(c.encode_utf8(&mut [0; 4]).as_bytes(), from, to);
    }

    /// Raw bytes `from..to` as they are: each its own span.
    fn push_run(&mut self, raw: &[u8], from: usize, to: usize) {
        self.piece(to - from, from, to, Stride::One);
        self.text.extend_from_slice(&raw[from..to]);
    }

    /// The raw span of view byte `i`.
    fn span_of(&self, i: usize) -> (usize, usize) {
        let p = self.pieces[self.pieces.partition_point(|p| p.at as usize <= i) - 1];
        let (k, from) = (i - p.at as usize, p.from as usize);
        match p.stride {
            Stride::Whole => (from, p.to as usize),
            Stride::One => (from + k, from + k + 1),
            Stride::Two => (from + 2 * k, from + 2 * k + 2),
        }
    }

    /// The raw span of view bytes `start..end`.
    fn raw(&self, start: usize, end: usize) -> (usize, usize) {
        (self.span_of(start).0, self.span_of(end - 1).1)
    }
}

/// What a decoded view decodes.
#[derive(Clone, Copy, Default)]
struct Decode {
    entities: bool,
    backslash: bool,
    json: bool,
    tags: bool,
    /// Markdown emphasis and code marks (`10.0.*0*.5` reads as an address).
    emphasis: bool,
}

impl Decode {
    /// The bytes [`decode`] may change (every other byte is kept as it
    /// is): `<`, `&`, the emphasis marks and the backslash, as this view
    /// decodes them.
    fn special_bytes(self) -> [bool; 256] {
        let mut special = [false; 256];
        let mut mark = |bytes: &[u8]| bytes.iter().for_each(|&b| special[usize::from(b)] = true);
        if self.tags {
            mark(b"<");
        }
        if self.entities {
            mark(b"&");
        }
        if self.emphasis {
            mark(b"*_`");
        }
        if self.backslash || self.json {
            mark(b"\\");
        }
        special
    }
}

/// The views of `raw` besides itself that `view` asks for (none when the
/// bytes hold nothing to decode).
fn views(raw: &[u8], view: View) -> Vec<Decoded> {
    let has = |b: u8| memchr::memchr(b, raw).is_some();
    let entities = Decode {
        entities: true,
        ..Decode::default()
    };
    let asks: Vec<Decode> = match view {
        View::Plain => Vec::new(),
        View::Strings => return utf16le_strings(raw).into_iter().collect(),
        View::Markdown => vec![
            Decode {
                backslash: true,
                ..entities
            },
            Decode {
                backslash: true,
                tags: true,
                emphasis: true,
                ..entities
            },
        ],
        View::Markup => vec![
            entities,
            Decode {
                tags: true,
                ..entities
            },
        ],
        View::Json => vec![Decode {
            json: true,
            ..Decode::default()
        }],
    };
    asks.into_iter()
        .filter(|d| {
            (d.entities && has(b'&'))
                || ((d.backslash || d.json) && has(b'\\'))
                || (d.tags && has(b'<'))
                || (d.emphasis && (has(b'*') || has(b'_') || has(b'`')))
        })
        .map(|d| decode(raw, d))
        .collect()
}

/// Where the next byte a view may change is: memchr for one to three such
/// bytes (most views), else a table lookup per byte.
enum Special<'t> {
    One(u8),
    Two(u8, u8),
    Three(u8, u8, u8),
    Table(&'t [bool; 256]),
}

impl<'t> Special<'t> {
    fn new(table: &'t [bool; 256]) -> Self {
        let bytes: Vec<u8> = (0..=255u8).filter(|&b| table[usize::from(b)]).collect();
        match bytes[..] {
            [a] => Special::One(a),
            [a, b] => Special::Two(a, b),
            [a, b, c] => Special::Three(a, b, c),
            _ => Special::Table(table),
        }
    }

    fn find(&self, hay: &[u8]) -> Option<usize> {
        match *self {
            Special::One(a) => memchr::memchr(a, hay),
            Special::Two(a, b) => memchr::memchr2(a, b, hay),
            Special::Three(a, b, c) => memchr::memchr3(a, b, c, hay),
            Special::Table(t) => hay.iter().position(|&b| t[usize::from(b)]),
        }
    }
}

fn decode(raw: &[u8], d: Decode) -> Decoded {
    let mut out = Decoded::with_capacity(raw.len());
    let special = d.special_bytes();
    let next = Special::new(&special);
    let mut i = 0;
    while i < raw.len() {
        // A run of bytes this view keeps as they are, in one go.
        let j = next.find(&raw[i..]).map_or(raw.len(), |n| i + n);
        if j > i {
            out.push_run(raw, i, j);
            i = j;
            continue;
        }
        let b = raw[i];
        if d.tags && b == b'<' {
            if let Some(len) = memchr::memchr(b'>', &raw[i..]) {
                let tag = &raw[i + 1..i + len];
                let skip = tag.iter().take_while(|&&b| b == b'/').count();
                let bare = &tag[skip..];
                let n = bare
                    .iter()
                    .take_while(|b| b.is_ascii_alphanumeric())
                    .count();
                // No inline element's name is longer than 8 bytes: those
                // are lowercased on the stack, the others need not be.
                let mut name = [0u8; 8];
                let name = &mut name[..n.min(8)];
                name.copy_from_slice(&bare[..n.min(8)]);
                name.make_ascii_lowercase();
                let end = i + len + 1;
                if n > 8 || !inline(name) {
                    out.push(b" ", i, end);
                }
                // Line breaks inside tags are kept, so lines still match.
                for _ in memchr::memchr_iter(b'\n', tag) {
                    out.push(b"\n", i, end);
                }
                i = end;
                continue;
            }
        }
        if d.entities && b == b'&' {
            if let Some((c, len)) = entity(&raw[i..]) {
                out.push_char(c, i, i + len);
                i += len;
                continue;
            }
        }
        if d.emphasis && matches!(b, b'*' | b'_' | b'`') {
            i += 1;
            continue;
        }
        if d.backslash && b == b'\\' && raw.get(i + 1).is_some_and(u8::is_ascii_punctuation) {
            out.push(&raw[i + 1..i + 2], i, i + 2);
            i += 2;
            continue;
        }
        if d.json && b == b'\\' {
            match raw.get(i + 1) {
                Some(b'/') => {
                    out.push(b"/", i, i + 2);
                    i += 2;
                    continue;
                }
                Some(b'u') => {
                    let hex = raw
                        .get(i + 2..i + 6)
                        .and_then(|h| std::str::from_utf8(h).ok());
                    if let Some(c) = hex
                        .and_then(|h| u32::from_str_radix(h, 16).ok())
                        .and_then(char::from_u32)
                    {
                        out.push_char(c, i, i + 6);
                        i += 6;
                        continue;
                    }
                }
                // Other escapes (`\\`, `\n`) stay as they are, both bytes.
                Some(_) => {
                    out.push(&raw[i..i + 2], i, i + 2);
                    i += 2;
                    continue;
                }
                None => {}
            }
        }
        out.push(&raw[i..i + 1], i, i + 1);
        i += 1;
    }
    out
}

/// A character reference at the start of `s` (`&amp;`, `&#46;`, `&#x2e;`):
/// the character and the reference's length.
fn entity(s: &[u8]) -> Option<(char, usize)> {
    // A reference is at most 12 bytes long: look no further for its `;`.
    let window = &s[1..s.len().min(13)];
    let e = memchr::memchr(b';', window)? + 1;
    let name = std::str::from_utf8(&s[1..e]).ok()?;
    let c = match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        "period" => '.',
        "colon" => ':',
        "sol" => '/',
        _ => {
            let n = name.strip_prefix('#')?;
            let code = match n.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => n.parse().ok()?,
            };
            char::from_u32(code)?
        }
    };
    Some((c, e + 1))
}

/// The UTF-16LE printable runs of a binary (at least 4 characters, at any
/// alignment, as `strings -e l` finds them), one per line.
fn utf16le_strings(raw: &[u8]) -> Option<Decoded> {
    let printable = |b: u8| b == b'\t' || (0x20..0x7F).contains(&b);
    let mut out = Decoded::with_capacity(0);
    let mut i = 0;
    while i + 1 < raw.len() {
        let mut j = i;
        while j + 1 < raw.len() && printable(raw[j]) && raw[j + 1] == 0 {
            j += 2;
        }
        if j - i >= 8 {
            out.piece((j - i) / 2, i, j, Stride::Two);
            out.text.extend(raw[i..j].iter().step_by(2));
            out.push(b"\n", j, j);
            i = j;
        } else {
            i += 1;
        }
    }
    (!out.text.is_empty()).then_some(out)
}

/// Every finding in `raw` and in its decoded views, as raw spans in order
/// (overlapping spans joined, the first finding naming them): what
/// scanning reports and what redacting replaces are the same spans.
pub(crate) fn find_all(det: &Detector, raw: &[u8], view: View) -> Vec<Hit> {
    let mut hits = det.find(raw);
    for v in views(raw, view) {
        for h in det.find(&v.text) {
            let (start, end) = v.raw(h.start, h.end);
            hits.push(Hit { start, end, ..h });
        }
    }
    hits.sort_by_key(|h| (h.start, std::cmp::Reverse(h.end)));
    let mut kept: Vec<Hit> = Vec::with_capacity(hits.len());
    for h in hits {
        match kept.last_mut() {
            Some(k) if h.start < k.end => k.end = k.end.max(h.end),
            _ => kept.push(h),
        }
    }
    kept
}

/// `raw` with every finding of [`find_all`] replaced by its placeholder.
pub(crate) fn redact_view<'t>(
    r: &super::Redactor,
    raw: &'t [u8],
    view: View,
    counts: &mut super::Counts,
) -> Cow<'t, [u8]> {
    r.replace(raw, &find_all(&r.detector, raw, view), counts)
}

/// `s` with every finding replaced by its category in brackets: a name
/// fit to print in a message.
pub(crate) fn mask(det: &Detector, s: &str) -> String {
    let hits = det.find(s.as_bytes());
    let mut out = String::with_capacity(s.len());
    let mut at = 0;
    for h in hits {
        out.push_str(&String::from_utf8_lossy(&s.as_bytes()[at..h.start]));
        out.push_str(&format!("[{}]", h.category.as_str()));
        at = h.end;
    }
    out.push_str(&String::from_utf8_lossy(&s.as_bytes()[at..]));
    out
}

/// UTF-16 read as UTF-8: a stream adapter, so memory stays flat. An
/// unpaired surrogate reads as U+FFFD.
pub(crate) struct Utf16Reader<R> {
    inner: R,
    big_endian: bool,
    raw: Vec<u8>,
    out: Vec<u8>,
    at: usize,
    eof: bool,
}

impl<R: Read> Utf16Reader<R> {
    /// `inner` starts after the byte order mark.
    pub(crate) fn new(inner: R, big_endian: bool) -> Self {
        Utf16Reader {
            inner,
            big_endian,
            raw: Vec::new(),
            out: Vec::new(),
            at: 0,
            eof: false,
        }
    }
}

impl<R: Read> Read for Utf16Reader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.out.len() && !self.eof {
            self.out.clear();
            self.at = 0;
            let mut block = [0u8; 64 << 10];
            let n = self.inner.read(&mut block)?;
            self.eof = n == 0;
            self.raw.extend_from_slice(&block[..n]);
            let units = self.raw.len() / 2;
            let mut keep = units;
            let unit = |k: usize| {
                let pair = [self.raw[2 * k], self.raw[2 * k + 1]];
                if self.big_endian {
                    u16::from_be_bytes(pair)
                } else {
                    u16::from_le_bytes(pair)
                }
            };
            // Keep a lead surrogate at the end for the next block.
            if !self.eof && units > 0 && (0xD800..0xDC00).contains(&unit(units - 1)) {
                keep -= 1;
            }
            let decoded: String = char::decode_utf16((0..keep).map(unit))
                .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
                .collect();
            self.out.extend_from_slice(decoded.as_bytes());
            self.raw.drain(..2 * keep);
            if self.eof && !self.raw.is_empty() {
                self.out.extend_from_slice("\u{FFFD}".as_bytes());
                self.raw.clear();
            }
        }
        let n = buf.len().min(self.out.len() - self.at);
        buf[..n].copy_from_slice(&self.out[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// UTF-8 text encoded as UTF-16 (no byte order mark).
pub(crate) fn encode_utf16(text: &[u8], big_endian: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() * 2);
    for u in String::from_utf8_lossy(text).encode_utf16() {
        out.extend_from_slice(&if big_endian {
            u.to_be_bytes()
        } else {
            u.to_le_bytes()
        });
    }
    out
}

/// The first [`HEAD`] bytes of `reader` (fewer at its end), and a reader
/// of the whole stream again.
pub(crate) fn peek<R: Read>(mut reader: R) -> Result<(Vec<u8>, impl Read)> {
    let mut head = Vec::with_capacity(HEAD);
    (&mut reader).take(HEAD as u64).read_to_end(&mut head)?;
    Ok((head.clone(), std::io::Cursor::new(head).chain(reader)))
}

/// The largest zstd window decoded (the reference decoder's default
/// limit): the decoder keeps up to a window of output in memory, so a
/// frame asking for more is skipped rather than allowed to take it.
const ZSTD_WINDOW: u64 = 128 << 20;

/// The window a zstd frame header asks for (RFC 8878, 3.1.1.1): the
/// content size for a single-segment frame, else its window descriptor.
/// The decoder crate does not expose its header parser.
fn zstd_window(head: &[u8]) -> Option<u64> {
    let fhd = *head.get(4)?;
    if fhd & 0x20 == 0 {
        let wd = *head.get(5)?;
        let base = 1u64 << (10 + (wd >> 3));
        return Some(base + base / 8 * u64::from(wd & 7));
    }
    let at = 5 + [0, 1, 2, 4][usize::from(fhd & 3)];
    let size = [1, 2, 4, 8][usize::from(fhd >> 6)];
    let mut le = [0u8; 8];
    le[..size].copy_from_slice(head.get(at..at + size)?);
    Some(u64::from_le_bytes(le) + if size == 2 { 256 } else { 0 })
}

/// Archives inside archives are followed this deep; deeper is skipped.
const DEPTH: usize = 4;

/// Scan a file of any kind: text in every [`View`] of it, UTF-16
/// decoded, binaries as printable runs, archives through their members
/// as they stream (nothing decompressed is kept beyond one chunk). Positions
/// are those of the raw text; a value seen only in a decoded view is
/// reported where its raw form starts.
pub(crate) fn scan_reader(det: &Detector, reader: impl Read, view: View) -> Result<Scanned> {
    scan_named(det, reader, view, "")
}

/// [`scan_reader`] of a stream named `name` (the name a decompressed
/// member is called by: `env.log` inside `env.log.gz`).
fn scan_named(det: &Detector, reader: impl Read, view: View, name: &str) -> Result<Scanned> {
    let mut out = Scanned::default();
    let mut reader = reader;
    scan_stream(det, &mut reader, view, (name, None), 0, &mut out)?;
    Ok(out)
}

/// [`scan_reader`] over bytes in memory. Text shorter than a chunk (a
/// page, most generated files) is one chunk read as it is: searched in
/// place, not copied into a chunk buffer first.
pub(crate) fn scan_bytes(det: &Detector, bytes: &[u8], view: View) -> Result<Scanned> {
    if !one_chunk(bytes) {
        return scan_reader(det, bytes, view);
    }
    Ok(scan_one_chunk(det, bytes, view))
}

/// What a scan finds in `bytes`, [`one_chunk`] of text, searched in place.
fn scan_one_chunk(det: &Detector, bytes: &[u8], view: View) -> Scanned {
    let (hits, _) = locate(bytes, find_all(det, bytes, view), Spot::START);
    Scanned {
        hits,
        ..Scanned::default()
    }
}

/// Text shorter than a chunk, with no NUL byte: what a scan reads as one
/// chunk of text.
fn one_chunk(bytes: &[u8]) -> bool {
    !bytes.is_empty()
        && bytes.len() < CHUNK
        && Kind::of(&bytes[..bytes.len().min(HEAD)]) == Kind::Text
        && memchr::memchr(0, bytes).is_none()
}

/// `base`: the stream's name; `member`: its (masked) name inside an
/// archive, or `None` at the top.
fn scan_stream(
    det: &Detector,
    reader: &mut dyn Read,
    view: View,
    (base, member): (&str, Option<&str>),
    depth: usize,
    out: &mut Scanned,
) -> Result<()> {
    let (head, reader) = peek(reader)?;
    let kind = Kind::of(&head);
    if kind.is_archive() {
        out.binary = true;
        if depth >= DEPTH {
            skip(
                out,
                member,
                format!("archive nested more than {DEPTH} deep"),
            );
            return Ok(());
        }
    }
    let result = match kind {
        Kind::Gzip | Kind::Zstd => {
            let compressed = Compressed { kind, head: &head };
            compressed.scan(det, reader, (base, member), depth, out)
        }
        Kind::Tar => scan_tar(det, reader, member, depth, out),
        Kind::Utf16 { big_endian } => {
            let mut reader = reader;
            let mut bom = [0u8; 2];
            reader.read_exact(&mut bom)?;
            scan_text(det, Utf16Reader::new(reader, big_endian), view, member, out)
        }
        Kind::Binary => {
            if member.is_none() {
                out.binary = true;
            }
            scan_text(det, reader, View::Strings, member, out)
        }
        Kind::Text => scan_text(det, reader, view, member, out),
    };
    match result {
        Err(e) if kind.is_archive() => {
            skip(out, member, format!("could not be read as {kind:?}: {e}"));
            Ok(())
        }
        r => r,
    }
}

/// Record content that was not scanned (so the stream is never called
/// clean), named by its archive member when inside one.
fn skip(out: &mut Scanned, member: Option<&str>, why: String) {
    out.skipped.push(match member {
        Some(m) => format!("{m}: {why}"),
        None => why,
    });
}

/// The name of `name` inside the archive `member` (or at the top).
fn inner_name(member: Option<&str>, name: &str) -> String {
    match member {
        Some(m) => format!("{m}/{name}"),
        None => name.to_string(),
    }
}

/// A gzip or zstd stream, with the bytes its header was recognised by.
struct Compressed<'h> {
    kind: Kind,
    head: &'h [u8],
}

impl Compressed<'_> {
    /// Scan the one stream inside, named as its file is without the
    /// suffix (`x.log.gz` holds `x.log`, `x.tgz` holds `x.tar`).
    fn scan(
        &self,
        det: &Detector,
        reader: impl Read,
        (base, member): (&str, Option<&str>),
        depth: usize,
        out: &mut Scanned,
    ) -> Result<()> {
        let file = base.rsplit('/').next().unwrap_or(base);
        let name = [".gz", ".zst", ".zstd"]
            .iter()
            .find_map(|x| file.strip_suffix(x).map(str::to_string))
            .or_else(|| file.strip_suffix(".tgz").map(|n| format!("{n}.tar")))
            .unwrap_or_else(|| format!("{file} (decompressed)"));
        let name = match member {
            Some(m) => format!("{}{name}", &m[..m.len() - file.len().min(m.len())]),
            None => name,
        };
        let view = View::of(Path::new(&name));
        let inner = (name.as_str(), Some(name.as_str()));
        if self.kind == Kind::Gzip {
            let mut d = flate2::read::MultiGzDecoder::new(reader);
            return scan_stream(det, &mut d, view, inner, depth + 1, out);
        }
        if zstd_window(self.head).is_none_or(|w| w > ZSTD_WINDOW) {
            return Err(crate::error::Error::Invalid(format!(
                "its zstd frame asks for a window over {} MiB",
                ZSTD_WINDOW >> 20
            )));
        }
        let mut d = ruzstd::decoding::StreamingDecoder::new(reader)
            .map_err(|e| crate::error::Error::Invalid(format!("{e}")))?;
        scan_stream(det, &mut d, view, inner, depth + 1, out)?;
        // The decoder reads one frame: more after it is not scanned, so it
        // is not called clean.
        let mut more = [0u8; 1];
        if d.into_inner().read(&mut more)? > 0 {
            skip(
                out,
                member,
                "a zstd frame after the first was not read".into(),
            );
        }
        Ok(())
    }
}

/// Each member of a tar archive: its name (published inside the archive
/// too) and, for a file, its content.
fn scan_tar(
    det: &Detector,
    reader: impl Read,
    member: Option<&str>,
    depth: usize,
    out: &mut Scanned,
) -> Result<()> {
    let mut archive = tar::Archive::new(reader);
    for entry in archive.entries()? {
        let mut entry = entry?;
        let name = mask(det, &String::from_utf8_lossy(&entry.path_bytes()));
        let inner = inner_name(member, &name);
        for h in det.find(&entry.path_bytes()) {
            out.inner.push((inner.clone(), 0, 0, h.category));
        }
        if entry.header().entry_type().is_file() {
            let view = View::of(Path::new(&name));
            scan_stream(
                det,
                &mut entry,
                view,
                (&inner, Some(&inner)),
                depth + 1,
                out,
            )?;
        }
    }
    Ok(())
}

fn scan_text(
    det: &Detector,
    reader: impl Read,
    view: View,
    member: Option<&str>,
    out: &mut Scanned,
) -> Result<()> {
    scan_text_with(det, reader, (view, member), out, &mut |_, _| false)
}

/// What a scan of text knows of its chunks before searching them (see
/// [`scan_written`]): [`find_all`] reads nothing but a chunk's bytes and
/// view, so a chunk known to be clean in this view is not searched again.
pub(crate) trait Memo {
    /// Is the chunk at byte `start` of the stream, cut as [`Memo::cuts`]
    /// says, known to hold nothing? Asked in stream order; with cuts by
    /// content, of a whole batch of chunks before any of them is searched
    /// (so before [`Memo::found_clean`] of the ones before).
    fn known_clean(&mut self, start: u64, chunk: &[u8]) -> bool;
    /// The chunk just searched (`chunk`) held nothing.
    fn found_clean(&mut self, _chunk: &[u8]) {}
    /// Where the stream is cut into the chunks asked about.
    fn cuts(&self) -> Cuts {
        Cuts::Fixed
    }
}

/// A closure naming chunks by position and length (the one pass's copy).
impl<F: FnMut(u64, usize) -> bool> Memo for F {
    fn known_clean(&mut self, start: u64, chunk: &[u8]) -> bool {
        self(start, chunk.len())
    }
}

/// Chunks of text found clean, with the detector's fingerprint and the
/// view they were searched in: kept by the preview's
/// [`crate::site::BuildCache`] so the rescan of a large generated file
/// (audit.json) searches only the chunks a save changed. That scan cuts by
/// content ([`Cuts::Content`]): an edit that moves every byte after it
/// still leaves the chunks after it as they were. A chunk is known when
/// its bytes equal those of a kept one (looked up by a hash of a sample of
/// them, then compared whole: a memory compare, not a hash of every
/// byte). What the last build did not meet again is forgotten.
#[derive(Default)]
pub(crate) struct CleanChunks(std::sync::Mutex<Generations>);

/// A chunk found clean.
struct Kept {
    fingerprint: std::sync::Arc<str>,
    view: View,
    bytes: std::sync::Arc<[u8]>,
}

impl Kept {
    fn is(&self, fingerprint: &str, view: View, chunk: &[u8]) -> bool {
        self.view == view && *self.fingerprint == *fingerprint && *self.bytes == *chunk
    }
}

type Kepts = std::collections::HashMap<u64, Vec<std::sync::Arc<Kept>>>;

#[derive(Default)]
struct Generations {
    this: Kepts,
    last: Kepts,
}

/// At most this many kept chunks share a sample: past it a chunk is
/// searched rather than compared with ever more of them.
const SAME_SAMPLE: usize = 8;

impl CleanChunks {
    /// A new build: what the one before met is still known, older is not.
    pub(crate) fn next_build(&self) {
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        g.last = std::mem::take(&mut g.this);
    }

    /// A hash of the chunk's length, its first and last 256 bytes and 16
    /// stretches of 64 between, with the detector's and the view's.
    fn sample(fingerprint: &str, view: View, chunk: &[u8]) -> u64 {
        use std::hash::Hasher;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        h.write(fingerprint.as_bytes());
        h.write_u8(view as u8);
        h.write_usize(chunk.len());
        let n = chunk.len();
        h.write(&chunk[..n.min(256)]);
        h.write(&chunk[n.saturating_sub(256)..]);
        for i in 1..16 {
            let at = n / 16 * i;
            h.write(&chunk[at..(at + 64).min(n)]);
        }
        h.finish()
    }

    /// Is `chunk` kept under (`what`, `view`): found clean by this
    /// detector in this view (or, in the gate's memory, passed)? It is
    /// then kept for the next build too.
    pub(crate) fn knows(&self, what: &str, view: View, chunk: &[u8]) -> bool {
        let sample = Self::sample(what, view, chunk);
        let candidates: Vec<std::sync::Arc<Kept>> = {
            let g = self.0.lock().unwrap_or_else(|e| e.into_inner());
            let this = g.this.get(&sample).into_iter().flatten();
            let last = g.last.get(&sample).into_iter().flatten();
            this.chain(last).take(2 * SAME_SAMPLE).cloned().collect()
        };
        // Compared outside the lock: other files' scans go on.
        let Some(found) = candidates.into_iter().find(|k| k.is(what, view, chunk)) else {
            return false;
        };
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let here = g.this.entry(sample).or_default();
        if !here.iter().any(|k| std::sync::Arc::ptr_eq(k, &found)) && here.len() < SAME_SAMPLE {
            here.push(found);
        }
        true
    }

    /// Keep `chunk` under (`what`, `view`) for [`CleanChunks::knows`].
    pub(crate) fn remember(&self, what: &std::sync::Arc<str>, view: View, chunk: &[u8]) {
        let kept = Kept {
            fingerprint: std::sync::Arc::clone(what),
            view,
            bytes: chunk.into(),
        };
        let sample = Self::sample(what, view, chunk);
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let here = g.this.entry(sample).or_default();
        // The same bytes twice in a batch of chunks searched at once are
        // kept once.
        if here.len() < SAME_SAMPLE && !here.iter().any(|k| k.is(what, view, chunk)) {
            here.push(std::sync::Arc::new(kept));
        }
    }

    /// How many chunks are known clean.
    #[cfg(test)]
    pub(crate) fn known(&self) -> usize {
        let g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let mut all: Vec<*const Kept> = g
            .this
            .values()
            .chain(g.last.values())
            .flatten()
            .map(std::sync::Arc::as_ptr)
            .collect();
        all.sort_unstable();
        all.dedup();
        all.len()
    }
}

/// [`Memo`] over a [`CleanChunks`], for one stream scanned in one view.
struct Remembered<'a> {
    chunks: &'a CleanChunks,
    fingerprint: std::sync::Arc<str>,
    view: View,
}

impl Memo for Remembered<'_> {
    fn known_clean(&mut self, _start: u64, chunk: &[u8]) -> bool {
        self.chunks.knows(&self.fingerprint, self.view, chunk)
    }

    /// Asked only of a chunk [`Memo::known_clean`] did not know.
    fn found_clean(&mut self, chunk: &[u8]) {
        self.chunks.remember(&self.fingerprint, self.view, chunk);
    }

    /// Cut by content: a save that changes the length of a line near the
    /// start of audit.json leaves the chunks after it as they were.
    fn cuts(&self) -> Cuts {
        Cuts::Content
    }
}

/// [`scan_file`], not searching again the chunks of text `chunks` knows
/// this detector (`fingerprint`) found clean, and remembering those it
/// finds clean: for files of [`REMEMBER_FROM`] bytes or more, cut by
/// content and searched a batch of chunks at a time.
pub(crate) fn scan_file_remembered(
    det: &Detector,
    path: &Path,
    (chunks, fingerprint): (&CleanChunks, &std::sync::Arc<str>),
) -> Result<Scanned> {
    let f =
        crate::fsx::open_regular(path).map_err(|e| crate::error::Error::failed("open", path, e))?;
    let view = View::of(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    if f.metadata().map_or(0, |m| m.len()) < REMEMBER_FROM {
        return scan_named(det, f, view, &name)
            .map_err(|e| crate::error::Error::failed("read", path, e));
    }
    let mut memo = Remembered {
        chunks,
        fingerprint: std::sync::Arc::clone(fingerprint),
        view,
    };
    scan_written(det, f, (view, &name), &mut memo)
        .map_err(|e| crate::error::Error::failed("read", path, e))
}

/// [`scan_reader`] of a stream whose chunks `memo` may know to be clean:
/// the copy the one pass over a large text file writes (stream.rs) knows
/// which chunks it wrote unchanged from chunks of the original it searched
/// (in `view`) and found nothing in; the preview's rescan knows the chunks
/// an earlier build found clean ([`CleanChunks`]). Such a chunk is not
/// searched again. Every other chunk is searched, and a stream that does
/// not read as text is scanned as [`scan_reader`] scans it (`name`: what
/// its members are called by, as in [`scan_named`]).
pub(crate) fn scan_written(
    det: &Detector,
    reader: impl Read,
    (view, name): (View, &str),
    memo: &mut dyn Memo,
) -> Result<Scanned> {
    let (head, reader) = peek(reader)?;
    let mut out = Scanned::default();
    if Kind::of(&head) != Kind::Text {
        scan_stream(det, &mut { reader }, view, (name, None), 0, &mut out)?;
        return Ok(out);
    }
    scan_text_with(det, reader, (view, None), &mut out, memo)?;
    Ok(out)
}

/// [`scan_text`], not searching the chunks `memo` knows to be clean (see
/// [`scan_written`]). Chunks cut by content are small: those to search
/// wait in a [`Batch`] and are searched together, one task each; chunks
/// of [`CHUNK`] are searched one after another, so memory stays one chunk.
fn scan_text_with(
    det: &Detector,
    reader: impl Read,
    (view, member): (View, Option<&str>),
    out: &mut Scanned,
    memo: &mut dyn Memo,
) -> Result<()> {
    let cuts = memo.cuts();
    let mut batch = Batch {
        view,
        member,
        spot: Spot::START,
        at: 0,
        pending: Vec::new(),
        bytes: 0,
    };
    let seams = Some(Seams { det, view });
    for_each_chunk_cut(reader, cuts, seams, |chunk: &[u8]| {
        if cuts == Cuts::Content {
            batch.push(chunk, out, memo);
            if batch.bytes >= Batch::BYTES {
                batch.search(det, out, memo);
            }
        } else {
            batch.search_one(det, chunk, out, memo);
        }
        Ok(())
    })?;
    batch.search(det, out, memo);
    Ok(())
}

/// Chunks of one stream read and not yet reported.
struct Batch<'m> {
    view: View,
    member: Option<&'m str>,
    /// Where the first pending chunk starts: a chunk cut inside a long
    /// line starts at a column past the first.
    spot: Spot,
    /// Where the next chunk read starts.
    at: u64,
    pending: Vec<Pending>,
    /// The bytes pending chunks hold to be searched.
    bytes: usize,
}

/// A chunk read, in stream order.
enum Pending {
    /// Known clean to the memo: only how it moves the line and column on
    /// counts.
    Known { moves: Moves },
    /// To search in `view` (`as_text`: it reads as text).
    Search {
        bytes: Vec<u8>,
        view: View,
        as_text: bool,
    },
}

impl Batch<'_> {
    /// Chunks to search wait until this many of their bytes are read.
    const BYTES: usize = 2 << 20;

    /// Hold `chunk` (the next one read), copied only if it is searched.
    fn push(&mut self, chunk: &[u8], out: &mut Scanned, memo: &mut dyn Memo) {
        let pending = match self.how(chunk, out, memo) {
            None => Pending::Known {
                moves: Moves::of(chunk),
            },
            Some((view, as_text)) => {
                self.bytes += chunk.len();
                Pending::Search {
                    bytes: chunk.to_vec(),
                    view,
                    as_text,
                }
            }
        };
        self.pending.push(pending);
    }

    /// Search every chunk held, at once, and report their findings in
    /// stream order.
    fn search(&mut self, det: &Detector, out: &mut Scanned, memo: &mut dyn Memo) {
        let pending = std::mem::take(&mut self.pending);
        let found: Vec<Vec<Hit>> = pending
            .par_iter()
            .map(|p| match p {
                Pending::Known { .. } => Vec::new(),
                Pending::Search { bytes, view, .. } => find_all(det, bytes, *view),
            })
            .collect();
        for (p, hits) in pending.into_iter().zip(found) {
            match p {
                Pending::Known { moves } => self.spot = self.spot.moved(moves),
                Pending::Search { bytes, as_text, .. } => {
                    self.place(&bytes, hits, as_text, out, memo);
                }
            }
        }
        self.bytes = 0;
    }

    /// Search `chunk` (the next one read) in place and report it.
    fn search_one(&mut self, det: &Detector, chunk: &[u8], out: &mut Scanned, memo: &mut dyn Memo) {
        match self.how(chunk, out, memo) {
            None => self.spot = self.spot.moved(Moves::of(chunk)),
            Some((view, as_text)) => {
                let hits = find_all(det, chunk, view);
                self.place(chunk, hits, as_text, out, memo);
            }
        }
    }

    /// How `chunk` (the next one read) is searched: its view, and whether
    /// it reads as text (a NUL further on: from there, a binary's
    /// printable runs); `None` when the memo knows it clean.
    fn how(
        &mut self,
        chunk: &[u8],
        out: &mut Scanned,
        memo: &mut dyn Memo,
    ) -> Option<(View, bool)> {
        let start = self.at;
        self.at += chunk.len() as u64;
        let as_text = self.view == View::Strings || memchr::memchr(0, chunk).is_none();
        if !as_text {
            if self.member.is_none() {
                out.binary = true;
            }
            return Some((View::Strings, false));
        }
        (!memo.known_clean(start, chunk)).then_some((self.view, true))
    }

    /// Report what the search of `chunk` found, `as_text` or not.
    fn place(
        &mut self,
        chunk: &[u8],
        hits: Vec<Hit>,
        as_text: bool,
        out: &mut Scanned,
        memo: &mut dyn Memo,
    ) {
        if as_text && hits.is_empty() {
            memo.found_clean(chunk);
        }
        let (located, next) = locate(chunk, hits, self.spot);
        match self.member {
            None => out.hits.extend(located),
            Some(m) => out.inner.extend(
                located
                    .into_iter()
                    .map(|(l, c, h)| (m.to_string(), l, c, h.category)),
            ),
        }
        self.spot = next;
    }
}

/// Where a text starts in the stream it was cut from: its line (from 1),
/// and how many characters come before it on that line (a chunk cut
/// inside a long line starts past the line's first column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Spot {
    line: usize,
    before: usize,
}

impl Spot {
    pub(crate) const START: Spot = Spot { line: 1, before: 0 };

    /// Where a text that `moves` this one on ends.
    fn moved(self, m: Moves) -> Spot {
        match m.lines {
            0 => Spot {
                line: self.line,
                before: self.before + m.tail,
            },
            n => Spot {
                line: self.line + n,
                before: m.tail,
            },
        }
    }
}

/// How a text moves a [`Spot`] on: the line breaks it holds, and the
/// characters after the last one (all of them, without one).
#[derive(Debug, Clone, Copy)]
struct Moves {
    lines: usize,
    tail: usize,
}

impl Moves {
    fn of(bytes: &[u8]) -> Moves {
        match memchr::memrchr(b'\n', bytes) {
            Some(last) => Moves {
                lines: memchr::memchr_iter(b'\n', bytes).count(),
                tail: chars(&bytes[last + 1..]),
            },
            None => Moves {
                lines: 0,
                tail: chars(bytes),
            },
        }
    }
}

/// The characters of `s`: the bytes that start one (`s` is read as
/// UTF-8; cuts fall between characters).
fn chars(s: &[u8]) -> usize {
    s.iter().filter(|&&b| b & 0xC0 != 0x80).count()
}

/// Line and column (1-based, in characters) of each hit, and where the
/// text after `bytes` starts; `start` is where `bytes` start.
pub(crate) fn locate(
    bytes: &[u8],
    hits: Vec<Hit>,
    start: Spot,
) -> (Vec<(usize, usize, Hit)>, Spot) {
    let mut out = Vec::with_capacity(hits.len());
    // The column is counted on from the previous hit, never again from the
    // line's start: one long line of many hits stays linear. Line breaks
    // are counted with memchr, characters only on the hit's own line.
    let (mut at, mut line, mut column) = (0, start.line, 1 + start.before);
    for h in hits {
        let gap = &bytes[at..h.start];
        match memchr::memrchr(b'\n', gap) {
            Some(last) => {
                line += memchr::memchr_iter(b'\n', gap).count();
                column = 1 + chars(&gap[last + 1..]);
            }
            None => column += chars(gap),
        }
        at = h.start;
        out.push((line, column, h));
    }
    let here = Spot {
        line,
        before: column - 1,
    };
    (out, here.moved(Moves::of(&bytes[at..])))
}

pub(crate) fn scan_file_named(det: &Detector, reader: impl Read, path: &Path) -> Result<Scanned> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    scan_named(det, reader, View::of(path), &name)
}

pub(crate) fn scan_file(det: &Detector, path: &Path) -> Result<Scanned> {
    let mut f =
        crate::fsx::open_regular(path).map_err(|e| crate::error::Error::failed("open", path, e))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let view = View::of(path);
    // A file shorter than a chunk is read whole into a buffer of its size
    // (streamed, it would get a whole chunk's room however small it is,
    // as the gate runs beside).
    if f.metadata().is_ok_and(|m| m.len() < CHUNK as u64) {
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes)
            .map_err(|e| crate::error::Error::failed("read", path, e))?;
        if one_chunk(&bytes) {
            return Ok(scan_one_chunk(det, &bytes, view));
        }
        return scan_named(det, &bytes[..], view, &name)
            .map_err(|e| crate::error::Error::failed("read", path, e));
    }
    scan_named(det, f, view, &name).map_err(|e| crate::error::Error::failed("read", path, e))
}

/// Inline elements, whose tags a reader does not see as a break (names
/// in lower case).
fn inline(name: &[u8]) -> bool {
    matches!(
        name,
        b"a" | b"abbr"
            | b"b"
            | b"bdi"
            | b"bdo"
            | b"cite"
            | b"code"
            | b"data"
            | b"del"
            | b"dfn"
            | b"em"
            | b"i"
            | b"ins"
            | b"kbd"
            | b"mark"
            | b"q"
            | b"s"
            | b"samp"
            | b"small"
            | b"span"
            | b"strong"
            | b"sub"
            | b"sup"
            | b"time"
            | b"tspan"
            | b"u"
            | b"var"
            | b"wbr"
    )
}

/// The text of markup with its tags taken out: inline tags vanish, other
/// tags leave a space; line breaks inside tags are kept, so lines still
/// match the file. A view for scanning only, never output; the tests read
/// the scanner's tag decoding through it.
#[cfg(test)]
pub(super) fn strip_tags(s: &str) -> String {
    let d = decode(
        s.as_bytes(),
        Decode {
            tags: true,
            ..Decode::default()
        },
    );
    // Only whole tags (ASCII `<`..`>`) were taken out, so this is UTF-8.
    String::from_utf8(d.text).unwrap_or_default()
}

/// A folder (or one file) scanned.
#[derive(Debug, Serialize)]
pub(crate) struct Report {
    pub(crate) path: PathBuf,
    pub(crate) files: usize,
    /// Files that are not text (binaries and archives): scanned for
    /// printable runs or through their members.
    pub(crate) binary: Vec<String>,
    /// Content that could not be scanned, and why: a folder with any is
    /// never reported clean.
    pub(crate) skipped: Vec<String>,
    pub(crate) findings: Vec<Finding>,
}

impl Report {
    pub(crate) fn clean(&self) -> bool {
        self.findings.is_empty() && self.skipped.is_empty()
    }

    pub(crate) fn to_json(&self) -> Result<String> {
        let mut s = serde_json::to_string_pretty(&serde_json::json!({
            "schema": 1,
            "path": self.path,
            "clean": self.clean(),
            "files": self.files,
            "binary": self.binary,
            "skipped": self.skipped,
            "findings": self.findings,
        }))?;
        s.push('\n');
        Ok(s)
    }

    pub(crate) fn to_text(&self) -> String {
        let mut s = String::new();
        for f in &self.findings {
            let file = match &f.member {
                Some(m) => format!("{} > {m}", f.file),
                None => f.file.clone(),
            };
            let at = if f.line == 0 {
                format!("{file} (file name)")
            } else {
                format!("{file}:{}:{}", f.line, f.column)
            };
            s.push_str(&format!("{at}: {}\n", f.category.as_str()));
        }
        for b in &self.skipped {
            s.push_str(&format!("{b}: skipped, not scanned\n"));
        }
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        let scanned = self.files;
        if self.findings.is_empty() && self.skipped.is_empty() {
            s.push_str(&format!(
                "no private values found in {scanned} file{}",
                plural(scanned)
            ));
        } else {
            let mut with: Vec<&str> = self.findings.iter().map(|f| f.file.as_str()).collect();
            with.dedup();
            s.push_str(&format!(
                "{} finding{} in {} of {scanned} file{} scanned",
                self.findings.len(),
                plural(self.findings.len()),
                with.len(),
                plural(scanned)
            ));
        }
        if !self.binary.is_empty() {
            s.push_str(&format!(
                " ({} binary or archive, scanned for printable text)",
                self.binary.len()
            ));
        }
        if !self.skipped.is_empty() {
            s.push_str(&format!(
                "; {} part{} skipped, so not clean",
                self.skipped.len(),
                plural(self.skipped.len())
            ));
        }
        s.push('\n');
        s
    }
}

/// Scan every file under `path` (or `path` itself), names included.
/// `display` names a file for the report from its path relative to `path`.
pub(crate) fn scan_path(
    det: &Detector,
    path: &Path,
    display: &(dyn Fn(&str) -> String + Sync),
) -> Result<Report> {
    scan_path_except(det, path, display, &|_| false, None)
}

/// [`scan_path`], reading only the names of files `known_clean` accepts
/// (files whose bytes this same detector already found clean), and not
/// searching again the chunks of text `remembered` knows to be clean.
pub(crate) fn scan_path_except(
    det: &Detector,
    path: &Path,
    display: &(dyn Fn(&str) -> String + Sync),
    known_clean: &(dyn Fn(&str) -> bool + Sync),
    remembered: Option<&CleanChunks>,
) -> Result<Report> {
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    if path.is_file() {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        files.push((name, path.to_path_buf()));
    } else if path.is_dir() {
        for entry in walkdir::WalkDir::new(path) {
            let entry = entry.map_err(|e| crate::error::Error::failed("walk", path, e))?;
            if entry.file_type().is_file() {
                let rel = entry.path().strip_prefix(path).unwrap_or(entry.path());
                files.push((
                    rel.to_string_lossy().replace('\\', "/"),
                    entry.path().to_path_buf(),
                ));
            } else {
                crate::fsx::refuse_special(entry.path())?;
            }
        }
        // In path order; sorting names here is cheaper than walkdir
        // comparing the file names of entries (parsed anew each time).
        files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    } else {
        crate::error::bail!("`{}` does not exist", path.display());
    }
    // Names are checked one by one only if one of them could hold a value.
    // (each also as an absolute path: see `names`).
    let rooted: Vec<String> = files.iter().map(|(rel, _)| format!("/{rel}")).collect();
    let check_names = det.any_candidate_in(rooted.iter().map(String::as_str));
    let fingerprint: std::sync::Arc<str> = remembered
        .map(|_| det.fingerprint())
        .unwrap_or_default()
        .into();
    // Per file: findings, whether it is binary, what was skipped.
    type One = (Vec<Finding>, bool, Vec<String>);
    let results: Vec<Result<One>> =
        files
            .par_iter()
            .map(|(rel, full)| {
                // A report names the file, but not a private value in its name.
                let shown = display(&super::mask_name(det, rel));
                let name_hits = if check_names {
                    super::names::find(det, rel)
                } else {
                    Vec::new()
                };
                let mut findings: Vec<Finding> = name_hits
                    .into_iter()
                    .map(|h| Finding {
                        file: shown.clone(),
                        member: None,
                        line: 0,
                        column: 0,
                        category: h.category,
                    })
                    .collect();
                if known_clean(rel) {
                    return Ok((findings, false, Vec::new()));
                }
                let scanned = match remembered {
                    Some(chunks) => scan_file_remembered(det, full, (chunks, &fingerprint)),
                    None => scan_file(det, full),
                };
                let scanned = match scanned {
                    Ok(s) => s,
                    // Unreadable is not clean: listed as skipped.
                    Err(e) => Scanned {
                        skipped: vec![mask(det, &format!("{e:#}"))],
                        ..Scanned::default()
                    },
                };
                findings.extend(scanned.hits.into_iter().map(|(line, column, h)| Finding {
                    file: shown.clone(),
                    member: None,
                    line,
                    column,
                    category: h.category,
                }));
                findings.extend(scanned.inner.into_iter().map(
                    |(member, line, column, category)| Finding {
                        file: shown.clone(),
                        member: Some(member),
                        line,
                        column,
                        category,
                    },
                ));
                let skipped = scanned
                    .skipped
                    .into_iter()
                    .map(|why| format!("{shown}: {why}"))
                    .collect();
                Ok((findings, scanned.binary, skipped))
            })
            .collect();
    let mut report = Report {
        path: path.to_path_buf(),
        files: files.len(),
        binary: Vec::new(),
        skipped: Vec::new(),
        findings: Vec::new(),
    };
    for ((rel, _), r) in files.iter().zip(results) {
        let (findings, binary, skipped) = r?;
        report.findings.extend(findings);
        report.skipped.extend(skipped);
        if binary {
            report.binary.push(display(rel));
        }
    }
    Ok(report)
}

/// `exhibit scan PATH`: the built-in rules plus the redaction policy of any
/// campaign.json at PATH, beside a file PATH, or one folder below PATH.
pub(crate) fn scan_command(path: &Path) -> Result<Report> {
    if !path.exists() {
        crate::error::bail!("`{}` does not exist", path.display());
    }
    let mut metas = Vec::new();
    let base = if path.is_file() {
        path.parent().unwrap_or(Path::new("."))
    } else {
        path
    };
    metas.push(base.join(crate::campaign::META_NAME));
    if path.is_dir() {
        let entries =
            std::fs::read_dir(path).map_err(|e| crate::error::Error::failed("list", path, e))?;
        let mut subs: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path().join(crate::campaign::META_NAME)))
            .collect();
        subs.sort();
        metas.extend(subs);
    }
    let mut policies = Vec::new();
    for m in metas.iter().filter(|m| m.is_file()) {
        policies.push(load_policy(m)?);
    }
    let det = Detector::new(&policies)?;
    let shown = |rel: &str| {
        if path.is_file() {
            path.display().to_string()
        } else {
            path.join(rel).display().to_string()
        }
    };
    scan_path(&det, path, &shown)
}

/// Only the `redaction` part of a campaign.json.
fn load_policy(path: &Path) -> Result<super::Policy> {
    #[derive(serde::Deserialize)]
    struct Only {
        #[serde(default)]
        redaction: super::Policy,
    }
    let text = crate::fsx::read_to_string(path)?;
    let only: Only = serde_json::from_str(&text)
        .map_err(|e| crate::error::InputError::json(path, &text, 0, &e))?;
    for p in &only.redaction.patterns {
        super::check_pattern(p).map_err(|e| {
            crate::error::Error::Invalid(format!(
                "{}: redaction pattern `{p}` is not a valid regex: {e}",
                path.display()
            ))
        })?;
    }
    Ok(only.redaction)
}
