//! audit.json's layout: JSON indented as `to_string_pretty` writes it,
//! except that each record of a list (an object at depth three or deeper)
//! is one line. The render stage writes the typed figures' lines as it
//! checks them ([`line`]); the write stage writes the rest around them.

use serde::Serialize;

/// One record written as a line of a list in audit.json (four spaces, the
/// object, no line break).
pub(crate) fn line(out: &mut Vec<u8>, record: &impl Serialize) -> serde_json::Result<()> {
    out.extend_from_slice(b"    ");
    let at_list = RecordLines {
        depth: 2,
        ..RecordLines::default()
    };
    record.serialize(&mut serde_json::Serializer::with_formatter(out, at_list))
}

/// audit.json's layout: indented like `to_string_pretty`, except that an
/// object at depth three or deeper (a record of a list: a file, a block,
/// a figure) is written on one line (`{"page": "a.md", "at": "3:7", ...}`):
/// a file of many figures stays readable line by line and about 30% smaller.
#[derive(Default)]
pub(crate) struct RecordLines {
    /// Arrays and objects open around the value being written.
    depth: usize,
    /// The depth of the record being written on one line (0: none).
    record: usize,
    /// Whether the open array or object has a value written yet.
    has_value: bool,
}

impl RecordLines {
    /// Objects this deep are records.
    const RECORD: usize = 3;

    fn indent<W: ?Sized + std::io::Write>(&self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..self.depth {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    fn open<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        b: &[u8],
        object: bool,
    ) -> std::io::Result<()> {
        self.depth += 1;
        if self.record == 0 && object && self.depth >= Self::RECORD {
            self.record = self.depth;
        }
        self.has_value = false;
        w.write_all(b)
    }

    fn close<W: ?Sized + std::io::Write>(&mut self, w: &mut W, b: &[u8]) -> std::io::Result<()> {
        let on_lines = self.record == 0;
        if self.record == self.depth {
            self.record = 0;
        }
        self.depth -= 1;
        if self.has_value && on_lines {
            self.indent(w)?;
        }
        self.has_value = true;
        w.write_all(b)
    }

    /// Before a list's value or an object's key: a comma after the first,
    /// then a new line, or a space inside a record.
    fn next<W: ?Sized + std::io::Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        if self.record == 0 {
            self.indent(w)
        } else if first {
            Ok(())
        } else {
            w.write_all(b" ")
        }
    }
}

impl serde_json::ser::Formatter for RecordLines {
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"[", false)
    }

    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.next(w, first)
    }

    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"{", true)
    }

    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.next(w, first)
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}
