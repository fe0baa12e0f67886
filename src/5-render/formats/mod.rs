//! What benchmark tools write, read as records: CSV and TSV (nvidia-smi's
//! too), hyperfine, criterion, pytest-benchmark, Google Benchmark, vLLM and
//! SGLang serving results, next to plain JSON and JSONL.
//!
//! [`read`] takes a data file's verified text and gives the [`Parsed`]
//! document the blocks read through their pointers and fields: for a native
//! format an array of one record per benchmark (serde_json values, so
//! tables, charts, cards and ledgers need nothing new). A format is
//! recognised from the file's name and content, or named in the block
//! (`"format": "hyperfine"`) when the content is ambiguous. Each format is
//! one file here; docs/FORMAT.md lists the records and fields of each.

mod criterion;
mod delimited;
mod gbench;
pub(crate) mod glob;
mod hyperfine;
mod pytest;
mod serving;

use crate::error::InputError;
use crate::error::Result;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// The formats a data file can be read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Format {
    Json,
    Jsonl,
    Csv,
    Tsv,
    Hyperfine,
    Criterion,
    PytestBenchmark,
    GoogleBenchmark,
    Vllm,
    Sglang,
}

const NAMES: &[(&str, Format)] = &[
    ("json", Format::Json),
    ("jsonl", Format::Jsonl),
    ("csv", Format::Csv),
    ("tsv", Format::Tsv),
    ("hyperfine", Format::Hyperfine),
    ("criterion", Format::Criterion),
    ("pytest-benchmark", Format::PytestBenchmark),
    ("google-benchmark", Format::GoogleBenchmark),
    ("vllm", Format::Vllm),
    ("sglang", Format::Sglang),
];

impl Format {
    /// A format named in a block.
    pub(crate) fn named(name: &str) -> Result<Format, String> {
        NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| *f)
            .ok_or_else(|| {
                let all: Vec<&str> = NAMES.iter().map(|(n, _)| *n).collect();
                format!(
                    "unknown format `{name}`: expected one of {}",
                    all.join(", ")
                )
            })
    }

    /// The formats a file of this name may hold, before its content is read.
    fn by_extension(path: &str) -> Option<Format> {
        let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
        match ext.as_deref() {
            Some("json") => Some(Format::Json),
            Some("jsonl") => Some(Format::Jsonl),
            Some("csv") => Some(Format::Csv),
            Some("tsv") => Some(Format::Tsv),
            _ => None,
        }
    }
}

/// A data file read into the document blocks address.
#[derive(Debug)]
pub(crate) struct Parsed {
    pub(crate) doc: Value,
    /// Set for a file that is a list of records (JSONL, CSV, a native
    /// format read from lines): each record's label for messages
    /// (`path:line`); pointers are then not allowed.
    pub(crate) labels: Option<Vec<String>>,
    /// Units of fields, from CSV headers (`memory.used [MiB]`).
    pub(crate) units: BTreeMap<String, String>,
    pub(crate) format: Format,
    /// For a native format read from JSON: the document as the tool wrote
    /// it. Pointers and expressions address this (`/results/0/times`);
    /// blocks that read records without a pointer get `doc`.
    pub(crate) written: Option<Value>,
}

impl Parsed {
    fn records(doc: Value, format: Format) -> Parsed {
        Parsed {
            doc,
            labels: None,
            units: BTreeMap::new(),
            format,
            written: None,
        }
    }
}

/// Other files of the campaign a reader may consult (criterion keeps a
/// benchmark's name and samples beside its estimates): the verified text
/// of a campaign path, if the manifest lists it.
pub(crate) type Siblings<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Read `text`, the contents of campaign file `path` (on disk at `file`).
pub(crate) fn read(
    file: &Path,
    path: &str,
    text: &str,
    named: Option<Format>,
    siblings: Siblings,
) -> Result<Parsed> {
    let format = match named.or_else(|| Format::by_extension(path)) {
        Some(f) => f,
        None => {
            return Err(InputError::new(
                file,
                0,
                0,
                format!(
                    "data file `{path}` must be `.json`, `.jsonl`, `.csv` or `.tsv`, or name its `format`"
                ),
            )
            .into())
        }
    };
    match format {
        Format::Csv => delimited::read(file, path, text, b','),
        Format::Tsv => delimited::read(file, path, text, b'\t'),
        Format::Jsonl => {
            let parsed = jsonl(file, path, text)?;
            Ok(match serving::recognise_lines(&parsed.doc) {
                true => Parsed {
                    format: Format::Sglang,
                    ..parsed
                },
                false => parsed,
            })
        }
        Format::Json => json(file, path, text, siblings),
        Format::Hyperfine => as_written(hyperfine::read(file, text)?, text),
        Format::Criterion => as_written(criterion::read(file, path, text, siblings)?, text),
        Format::PytestBenchmark => as_written(pytest::read(file, text)?, text),
        Format::GoogleBenchmark => as_written(gbench::read(file, text)?, text),
        Format::Vllm => as_written(serving::read_vllm(file, path, text)?, text),
        Format::Sglang => {
            let parsed = jsonl(file, path, text)?;
            Ok(Parsed {
                format: Format::Sglang,
                ..parsed
            })
        }
    }
}

/// A native format named in a block keeps its JSON document as written, for
/// pointers (an empty hyperfine export has none: its one failed record is
/// all there is).
fn as_written(parsed: Parsed, text: &str) -> Result<Parsed> {
    let written = serde_json::from_str(text).ok();
    Ok(Parsed { written, ..parsed })
}

/// A `.json` file: plain JSON, or a native format recognised from its shape.
fn json(file: &Path, path: &str, text: &str, siblings: Siblings) -> Result<Parsed> {
    if text.trim().is_empty() {
        return Err(InputError::new(
            file,
            1,
            1,
            "data file is empty (if it is the export of a failed hyperfine command, name `\"format\": \"hyperfine\"` in the block, or read it with its siblings through a glob)",
        )
        .into());
    }
    let doc: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        // `vllm bench serve --append-result` writes one object per line.
        Err(_) if serving::is_vllm_stream(text) => return serving::read_vllm(file, path, text),
        Err(e) => return Err(InputError::json(file, text, 0, &e).into()),
    };
    let parsed = match recognise(&doc) {
        Some(Format::Hyperfine) => hyperfine::read(file, text)?,
        Some(Format::Criterion) => criterion::read(file, path, text, siblings)?,
        Some(Format::PytestBenchmark) => pytest::read(file, text)?,
        Some(Format::GoogleBenchmark) => gbench::read(file, text)?,
        Some(Format::Vllm) => serving::read_vllm(file, path, text)?,
        _ => return Ok(Parsed::records(doc, Format::Json)),
    };
    Ok(Parsed {
        written: Some(doc),
        ..parsed
    })
}

/// The native format a JSON document is, from the keys each tool writes.
fn recognise(doc: &Value) -> Option<Format> {
    let obj = doc.as_object()?;
    let has = |k: &str| obj.contains_key(k);
    let first_has = |list: &str, k: &str| {
        obj.get(list)
            .and_then(Value::as_array)
            .is_some_and(|a| a.first().is_none_or(|r| r.get(k).is_some()))
    };
    // Every hyperfine version writes these three for each command; a file
    // of one's own with a `command` field stays plain JSON.
    if ["command", "mean", "times"]
        .iter()
        .all(|k| first_has("results", k))
    {
        Some(Format::Hyperfine)
    } else if has("benchmarks") && has("machine_info") {
        Some(Format::PytestBenchmark)
    } else if has("benchmarks") && has("context") {
        Some(Format::GoogleBenchmark)
    } else if criterion::recognise(obj) {
        Some(Format::Criterion)
    } else if serving::recognise_vllm(obj) {
        Some(Format::Vllm)
    } else {
        None
    }
}

/// One JSON value per non-blank line.
fn jsonl(file: &Path, path: &str, text: &str) -> Result<Parsed> {
    let mut records = Vec::new();
    let mut labels = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value =
            serde_json::from_str(line).map_err(|e| InputError::json(file, text, i, &e))?;
        records.push(v);
        labels.push(format!("{path}:{}", i + 1));
    }
    Ok(Parsed {
        doc: Value::Array(records),
        labels: Some(labels),
        units: BTreeMap::new(),
        format: Format::Jsonl,
        written: None,
    })
}

/// A typed view of a tool's file, with serde's line and column on a
/// field of the wrong shape.
fn typed<T: serde::de::DeserializeOwned>(file: &Path, text: &str, tool: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| {
        InputError::json(file, text, 0, &e)
            .with_prefix(&format!(
                "not a {tool} file this version of exhibit knows: "
            ))
            .into()
    })
}

/// A record from fields in order; `None` values are left out.
fn record<'a>(fields: impl IntoIterator<Item = (&'a str, Value)>) -> Value {
    let mut m = Map::new();
    for (k, v) in fields {
        m.insert(k.to_string(), v);
    }
    Value::Object(m)
}

/// A finite number as JSON (NaN and infinities, which JSON cannot hold,
/// become null).
fn num(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}
