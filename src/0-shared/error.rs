//! The crate's one error type, whose kind decides the exit code, and
//! positioned input errors.
//!
//! [`Error::Evidence`] (a hash mismatch, a missing or unlisted file, a
//! leak, a failing check) exits 1; every other kind is bad usage or bad
//! input and exits 2. [`InputError`] carries a file and line:col and prints
//! the offending source line with a caret, the way `just` reports errors.
//! [`Error::Context`] says what was being done and keeps its cause typed:
//! it exits as its cause does, and prints as `what` with the cause below.

use std::fmt;
use std::path::{Path, PathBuf};

/// The crate's result: [`Error`] unless told otherwise.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong, by the kind the exit code follows.
#[derive(Debug)]
pub enum Error {
    /// Bad input at a file's line:col (exit 2).
    Input(InputError),
    /// The evidence did not hold (exit 1): a hash mismatch, a missing or
    /// unlisted file, a refused file type, a leak, a failing consistency
    /// check, an unmatched figure under `--strict`.
    Evidence(EvidenceFailed),
    /// An I/O operation on a known path failed (exit 2); prints as
    /// "failed to {action} `{path}`" with the OS error as its cause.
    Io {
        path: PathBuf,
        action: &'static str,
        source: std::io::Error,
    },
    /// An operation on a known path failed, its cause told on the same
    /// line: "failed to {action} `{path}`: {cause}" (exit 2). For causes
    /// that are not the operating system's alone (a scan, a directory
    /// walk), or messages that name them inline.
    Failed {
        action: &'static str,
        path: PathBuf,
        cause: Box<dyn std::error::Error + Send + Sync>,
    },
    /// An I/O error with no path to name: standard output, mostly (exit 2;
    /// a closed pipe is no failure, see [`Error::is_broken_pipe`]).
    Os(std::io::Error),
    /// The command line asks for what cannot be done (exit 2).
    Usage(String),
    /// Bad input with no position to point at (exit 2).
    Invalid(String),
    /// What was being done when `source` went wrong: exits as `source`.
    Context { what: String, source: Box<Error> },
}

impl Error {
    /// The exit code this error ends the program with: 1 when the
    /// evidence failed, 2 for bad usage or input.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Evidence(_) => 1,
            Error::Context { source, .. } => source.exit_code(),
            Error::Input(_)
            | Error::Io { .. }
            | Error::Failed { .. }
            | Error::Os(_)
            | Error::Usage(_)
            | Error::Invalid(_) => 2,
        }
    }

    /// The error comes from writing to a pipe whose reader has closed it.
    pub fn is_broken_pipe(&self) -> bool {
        match self {
            Error::Io { source, .. } | Error::Os(source) => {
                source.kind() == std::io::ErrorKind::BrokenPipe
            }
            Error::Context { source, .. } => source.is_broken_pipe(),
            _ => false,
        }
    }

    /// The error as the command line prints it: `error: ...` and its causes.
    pub fn describe(&self) -> String {
        let mut s = format!("error: {self}");
        let mut cause = std::error::Error::source(self);
        while let Some(c) = cause {
            s.push_str(&format!("\n  caused by: {c}"));
            cause = c.source();
        }
        s
    }

    /// This error as the cause of `what`.
    pub(crate) fn context(self, what: impl Into<String>) -> Error {
        Error::Context {
            what: what.into(),
            source: Box::new(self),
        }
    }

    /// Another library's error as plain bad input, its causes kept as
    /// causes (printed one a line, as they were).
    pub(crate) fn foreign(e: &dyn std::error::Error) -> Error {
        match e.source() {
            Some(cause) => Error::foreign(cause).context(e.to_string()),
            None => Error::Invalid(e.to_string()),
        }
    }

    /// An I/O error on `path` while doing `action` ("read", "write"...).
    pub(crate) fn io(path: &Path, action: &'static str, source: std::io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            action,
            source,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Input(e) => e.fmt(f),
            Error::Evidence(e) => e.fmt(f),
            Error::Io { path, action, .. } => {
                write!(f, "failed to {action} `{}`", path.display())
            }
            Error::Failed {
                action,
                path,
                cause,
            } => write!(f, "failed to {action} `{}`: {cause}", path.display()),
            Error::Os(e) => e.fmt(f),
            Error::Usage(m) | Error::Invalid(m) => f.write_str(m),
            Error::Context { what, .. } => f.write_str(what),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Context { source, .. } => Some(&**source),
            _ => None,
        }
    }
}

impl Error {
    /// [`Error::Failed`]: `action` on `path` failed because of `cause`.
    pub(crate) fn failed(
        action: &'static str,
        path: &Path,
        cause: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Error {
        Error::Failed {
            action,
            path: path.to_path_buf(),
            cause: cause.into(),
        }
    }
}

impl From<InputError> for Error {
    fn from(e: InputError) -> Error {
        Error::Input(e)
    }
}

impl From<EvidenceFailed> for Error {
    fn from(e: EvidenceFailed) -> Error {
        Error::Evidence(e)
    }
}

/// An I/O error where no path is known: a stream being read or decoded
/// (its caller names the file), standard output.
impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::Os(e)
    }
}

/// Serializing a report, or a value's shape: the message and its causes.
impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Error {
        Error::foreign(&e)
    }
}

/// A pattern that does not compile (a campaign's redaction rules).
impl From<regex::Error> for Error {
    fn from(e: regex::Error) -> Error {
        Error::foreign(&e)
    }
}

/// The preview's file watcher could not start or watch a folder.
impl From<notify::Error> for Error {
    fn from(e: notify::Error) -> Error {
        Error::foreign(&e)
    }
}

/// `return Err(Error::Invalid(format!(...)))`: bad input, no position.
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::error::Error::Invalid(format!($($arg)*)))
    };
}
pub(crate) use bail;

/// `.context(...)` on a result: its error becomes the cause of `what`.
pub(crate) trait Context<T> {
    fn context(self, what: impl Into<String>) -> Result<T>;
    fn with_context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: Into<Error>> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl Into<String>) -> Result<T> {
        self.map_err(|e| e.into().context(what))
    }

    fn with_context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| e.into().context(what()))
    }
}

/// The evidence did not hold: the report names every bad file.
#[derive(Debug)]
pub struct EvidenceFailed {
    pub(crate) report: String,
}

impl fmt::Display for EvidenceFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.report)
    }
}

impl std::error::Error for EvidenceFailed {}

/// Bad input at a known position in a file.
#[derive(Debug)]
pub struct InputError {
    pub path: PathBuf,
    /// 1-based line and column; 0 when unknown.
    pub line: usize,
    pub col: usize,
    pub(crate) message: String,
    /// The text of the offending line, when it is known.
    pub(crate) source_line: Option<String>,
}

impl InputError {
    pub(crate) fn new(path: &Path, line: usize, col: usize, message: impl Into<String>) -> Self {
        InputError {
            path: path.to_path_buf(),
            line,
            col,
            message: message.into(),
            source_line: None,
        }
    }

    /// An error at a byte offset of `text`, the contents of `path`.
    pub(crate) fn at_offset(
        path: &Path,
        text: &str,
        offset: usize,
        message: impl Into<String>,
    ) -> Self {
        let (line, col) = line_col(text, offset);
        let mut err = InputError::new(path, line, col, message);
        err.source_line = text.lines().nth(line - 1).map(str::to_string);
        err
    }

    /// A JSON syntax or shape error from serde_json, positioned in `path`.
    /// `line_offset` is added to serde's line (a block body starts inside a page).
    pub(crate) fn json(
        path: &Path,
        text: &str,
        line_offset: usize,
        err: &serde_json::Error,
    ) -> Self {
        let line = err.line() + line_offset;
        let mut e = InputError::new(path, line, err.column().max(1), clean_serde_message(err));
        e.source_line = text.lines().nth(line.saturating_sub(1)).map(str::to_string);
        e
    }
}

/// serde_json appends " at line X column Y"; we print the position ourselves.
fn clean_serde_message(err: &serde_json::Error) -> String {
    let msg = err.to_string();
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg,
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A message or a quoted line may hold a private value (the line an
        // error points at in a log or a page): printed masked, never raw.
        writeln!(f, "{}", crate::redact::mask_line(&self.message, 0).0)?;
        if self.line == 0 {
            return write!(f, "  --> {}", self.path.display());
        }
        write!(
            f,
            "  --> {}:{}:{}",
            self.path.display(),
            self.line,
            self.col
        )?;
        if let Some(src) = &self.source_line {
            let (src, col) = crate::redact::mask_line(src, self.col);
            let num = self.line.to_string();
            let pad = " ".repeat(num.len());
            let caret_at: usize = src
                .chars()
                .take(col.saturating_sub(1))
                .map(|c| if c == '\t' { 4 } else { 1 })
                .sum();
            let shown = src.replace('\t', "    ");
            write!(
                f,
                "\n{pad} |\n{num} | {shown}\n{pad} | {}^",
                " ".repeat(caret_at)
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for InputError {}

/// 1-based line and column (in characters) of a byte offset.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..floor_char_boundary(text, offset)];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = before[line_start..].chars().count() + 1;
    (line, col)
}

/// Line and column of many byte offsets in one text: line starts are
/// found once, and a column is counted on from the previous lookup when
/// that was earlier on the same line, so a page's positions looked up in
/// order cost one pass over it (a one-line page of numbers included).
pub(crate) struct Lines<'a> {
    text: &'a str,
    /// Byte offset where each line starts.
    starts: Vec<usize>,
    /// The last lookup: its offset and column.
    last: std::cell::Cell<(usize, usize)>,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(text: &'a str) -> Lines<'a> {
        let breaks = memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1);
        Lines {
            text,
            starts: std::iter::once(0).chain(breaks).collect(),
            last: std::cell::Cell::new((0, 1)),
        }
    }

    /// The text positions are looked up in.
    pub(crate) fn text(&self) -> &'a str {
        self.text
    }

    /// 1-based line and column (in characters) of `offset`, as
    /// [`line_col`] gives them.
    pub(crate) fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = floor_char_boundary(self.text, offset.min(self.text.len()));
        let line = self.starts.partition_point(|&s| s <= offset);
        let start = self.starts[line - 1];
        let (from, col) = match self.last.get() {
            (o, c) if o >= start && o <= offset => (o, c),
            _ => (start, 1),
        };
        let col = col + self.text[from..offset].chars().count();
        self.last.set((offset, col));
        (line, col)
    }
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl InputError {
    pub(crate) fn with_prefix(mut self, prefix: &str) -> Self {
        self.message = format!("{prefix}{}", self.message);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters() {
        let text = "ab\ncdé f\n";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 3), (2, 1));
        assert_eq!(line_col(text, text.find('f').unwrap()), (2, 5));
        let lines = Lines::new(text);
        for offset in (0..=text.len() + 2).chain([7, 2, 0, 9]) {
            assert_eq!(
                lines.line_col(offset),
                line_col(text, offset),
                "at {offset}"
            );
        }
    }

    #[test]
    fn display_shows_caret_under_column() {
        let e = InputError::at_offset(Path::new("p.md"), "x\n  bad\n", 4, "oops");
        let shown = e.to_string();
        assert!(shown.contains("--> p.md:2:3"), "{shown}");
        assert!(shown.ends_with("  |   ^"), "{shown}");
    }

    fn io(kind: std::io::ErrorKind) -> std::io::Error {
        std::io::Error::new(kind, "os says no")
    }

    #[test]
    fn evidence_exits_1() {
        let e = Error::from(EvidenceFailed {
            report: "hash mismatch".into(),
        });
        assert_eq!(e.exit_code(), 1);
        assert_eq!(e.describe(), "error: hash mismatch");
    }

    #[test]
    fn input_exits_2() {
        let e = Error::from(InputError::new(Path::new("c.json"), 3, 4, "bad"));
        assert_eq!(e.exit_code(), 2);
        assert_eq!(e.describe(), "error: bad\n  --> c.json:3:4");
    }

    #[test]
    fn io_exits_2_with_its_cause_below() {
        let e = Error::io(Path::new("a/b"), "read", io(std::io::ErrorKind::NotFound));
        assert_eq!(e.exit_code(), 2);
        assert_eq!(
            e.describe(),
            "error: failed to read `a/b`\n  caused by: os says no"
        );
        assert!(!e.is_broken_pipe());
    }

    #[test]
    fn failed_exits_2_with_its_cause_on_the_line() {
        let cause = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let e = Error::failed("list", Path::new("camp"), cause);
        assert_eq!(e.exit_code(), 2);
        assert_eq!(e.describe(), "error: failed to list `camp`: gone");
    }

    #[test]
    fn os_exits_2_and_a_closed_pipe_is_seen() {
        let e = Error::Os(io(std::io::ErrorKind::BrokenPipe));
        assert_eq!(e.exit_code(), 2);
        assert!(e.is_broken_pipe());
        assert!(e.context("printing").is_broken_pipe());
    }

    #[test]
    fn usage_and_invalid_exit_2() {
        assert_eq!(Error::Usage("no ROOT given".into()).exit_code(), 2);
        assert_eq!(Error::Invalid("`x` is not a folder".into()).exit_code(), 2);
    }

    #[test]
    fn context_exits_as_its_source() {
        let evidence = Error::from(EvidenceFailed {
            report: "leak".into(),
        })
        .context("in `p.md`")
        .context("building");
        assert_eq!(evidence.exit_code(), 1);
        assert_eq!(
            evidence.describe(),
            "error: building\n  caused by: in `p.md`\n  caused by: leak"
        );
        let input = Error::Invalid("bad".into()).context("outer");
        assert_eq!(input.exit_code(), 2);
        let r: Result<()> = Err(InputError::new(Path::new("x"), 0, 0, "m")).context("c");
        assert!(
            matches!(r, Err(Error::Context { ref source, .. }) if matches!(**source, Error::Input(_)))
        );
    }
}
