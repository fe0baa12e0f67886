//! Error types that decide the exit code, and positioned input errors.
//!
//! Everything that is not an [`EvidenceFailed`] is bad usage or bad input and
//! exits 2; `EvidenceFailed` (a hash mismatch, a missing or unlisted file, a
//! leak) exits 1. [`InputError`] carries a file and line:col and prints the
//! offending source line with a caret, the way `just` reports errors.

use std::fmt;
use std::path::{Path, PathBuf};

/// The evidence did not hold: the report names every bad file.
#[derive(Debug)]
pub(crate) struct EvidenceFailed {
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

/// Exit code for an error chain: 1 when the evidence failed, 2 otherwise.
pub fn exit_code(err: &anyhow::Error) -> u8 {
    if err.chain().any(|e| e.is::<EvidenceFailed>()) {
        1
    } else {
        2
    }
}

/// The error comes from writing to a pipe whose reader has closed it.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

impl InputError {
    pub(crate) fn with_prefix(mut self, prefix: &str) -> Self {
        self.message = format!("{prefix}{}", self.message);
        self
    }
}

/// An error as the command line prints it: `error: ...` and its causes.
pub fn describe(err: &anyhow::Error) -> String {
    let mut s = format!("error: {err}");
    for cause in err.chain().skip(1) {
        s.push_str(&format!("\n  caused by: {cause}"));
    }
    s
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
}
