//! CSV and TSV files (RFC 4180, a header row) as records named by the
//! header, with numbers recognised as numbers. `nvidia-smi
//! --query-gpu=... --format=csv` is read as it is written: a header unit
//! (`memory.used [MiB]`) is taken off the field name and kept as the
//! field's unit, and that column's cells (`81234 MiB`) must be numbers in
//! that unit. sysstat's `sadf -d` is read as written too: `;` between
//! fields and the header as a comment (`# hostname;interval;...`).

use super::{num, Format, Parsed};
use crate::error::InputError;
use crate::error::Result;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// What nvidia-smi writes for a sensor a GPU lacks: no value, not an error.
const NOT_AVAILABLE: &[&str] = &["[N/A]", "[Not Supported]", "N/A"];

pub(super) fn read(file: &Path, path: &str, text: &str, delimiter: u8) -> Result<Parsed> {
    let commented = commented_header(text);
    let text = commented.as_deref().unwrap_or(text);
    let delimiter = sniff(text, delimiter);
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| csv_error(file, text, &e))?
        .clone();
    let mut names = Vec::with_capacity(headers.len());
    let mut units = BTreeMap::new();
    for (i, h) in headers.iter().enumerate() {
        let (name, unit) = split_unit(h);
        if name.is_empty() {
            return Err(at_cell(
                file,
                text,
                1,
                i,
                delimiter,
                "a header cell is empty: every column needs a name",
            ));
        }
        if names.contains(&name) {
            return Err(at_cell(
                file,
                text,
                1,
                i,
                delimiter,
                format!("the header names `{name}` twice"),
            ));
        }
        if let Some(u) = unit {
            units.insert(name.to_string(), u.to_string());
        }
        names.push(name);
    }
    let mut records = Vec::new();
    let mut labels = Vec::new();
    for row in reader.records() {
        let row = row.map_err(|e| csv_error(file, text, &e))?;
        let line = row.position().map_or(0, |p| p.line() as usize);
        let mut rec = Map::new();
        for (i, (cell, name)) in row.iter().zip(&names).enumerate() {
            let value = match units.get(*name) {
                Some(unit) => measured(cell, unit).map_err(|m| {
                    at_cell(
                        file,
                        text,
                        line,
                        i,
                        delimiter,
                        format!("column `{name}` [{unit}]: {m}"),
                    )
                })?,
                None => plain(cell),
            };
            rec.insert(name.to_string(), value);
        }
        records.push(Value::Object(rec));
        labels.push(format!("{path}:{line}"));
    }
    Ok(Parsed {
        doc: Value::Array(records),
        labels: Some(labels),
        units,
        format: if delimiter == b'\t' {
            Format::Tsv
        } else {
            Format::Csv
        },
        written: None,
    })
}

/// A header written as a comment (`# hostname;interval`, as `sadf -d`
/// writes it) with its `#` blanked, so the cells keep their columns for
/// messages; `None` when the header is not commented.
fn commented_header(text: &str) -> Option<String> {
    let rest = text.strip_prefix('#')?;
    rest.starts_with([' ', '\t']).then(|| format!(" {rest}"))
}

/// `;` for a CSV whose header holds semicolons and no comma (`sadf -d`,
/// and spreadsheets saved where `,` is the decimal mark); else `delimiter`.
fn sniff(text: &str, delimiter: u8) -> u8 {
    let header = text.lines().next().unwrap_or("");
    match delimiter == b',' && !header.contains(',') && header.contains(';') {
        true => b';',
        false => delimiter,
    }
}

/// `memory.used [MiB]` into (`memory.used`, `MiB`).
fn split_unit(header: &str) -> (&str, Option<&str>) {
    let h = header.trim();
    match h.strip_suffix(']').and_then(|s| s.rsplit_once('[')) {
        Some((name, unit)) if !unit.is_empty() && !name.trim().is_empty() => {
            (name.trim(), Some(unit.trim()))
        }
        _ => (h, None),
    }
}

/// A cell of a column without a unit: a number if it reads as one.
fn plain(cell: &str) -> Value {
    number(cell).unwrap_or_else(|| Value::String(cell.to_string()))
}

/// A cell of a column with a unit: a number, optionally followed by the
/// unit (`97 %`); empty and nvidia-smi's "not available" are null.
fn measured(cell: &str, unit: &str) -> Result<Value, String> {
    if cell.is_empty() || NOT_AVAILABLE.contains(&cell) {
        return Ok(Value::Null);
    }
    let bare = cell.strip_suffix(unit).map_or(cell, str::trim_end);
    number(bare).ok_or_else(|| format!("`{cell}` is not a number in {unit}"))
}

/// A decimal number as JSON: integers stay integers. Words that Rust's
/// float parser accepts (`inf`, `NaN`) stay text.
fn number(s: &str) -> Option<Value> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if !digits.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    if let Ok(i) = s.parse::<i64>() {
        return Some(Value::from(i));
    }
    let x: f64 = s.parse().ok()?;
    x.is_finite().then(|| num(x))
}

/// A csv error (a ragged row, bad UTF-8) at its position in the file.
fn csv_error(file: &Path, text: &str, e: &csv::Error) -> crate::error::Error {
    let at = |pos: &csv::Position| pos.byte() as usize;
    match e.kind() {
        csv::ErrorKind::UnequalLengths {
            pos,
            expected_len,
            len,
        } => {
            let offset = pos.as_ref().map_or(0, at);
            InputError::at_offset(
                file,
                text,
                offset,
                format!("this row has {len} fields, the header has {expected_len}"),
            )
            .into()
        }
        csv::ErrorKind::Utf8 { pos, .. } => {
            let offset = pos.as_ref().map_or(0, at);
            InputError::at_offset(file, text, offset, "this row is not valid UTF-8").into()
        }
        _ => InputError::new(file, 0, 0, format!("cannot read as CSV: {e}")).into(),
    }
}

/// An error at cell `index` of file line `line`. The column is found by
/// counting delimiters outside quotes on the raw line, since csv gives
/// only the record's start.
fn at_cell(
    file: &Path,
    text: &str,
    line: usize,
    index: usize,
    delimiter: u8,
    message: impl Into<String>,
) -> crate::error::Error {
    let raw = text.lines().nth(line.saturating_sub(1)).unwrap_or("");
    let (mut seen, mut quoted, mut col) = (0, false, 1);
    for (i, b) in raw.bytes().enumerate() {
        if seen == index {
            col = raw[..i].chars().count() + 1;
            break;
        }
        match b {
            b'"' => quoted = !quoted,
            b if b == delimiter && !quoted => seen += 1,
            _ => {}
        }
    }
    if seen < index {
        col = raw.chars().count() + 1;
    }
    // Point at the cell's first character, past the spaces nvidia-smi writes.
    let start: usize = raw.chars().skip(col - 1).take_while(|c| *c == ' ').count();
    let mut e = InputError::new(file, line, col + start, message);
    e.source_line = Some(raw.to_string());
    e.into()
}
