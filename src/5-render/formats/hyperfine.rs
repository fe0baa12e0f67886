//! hyperfine `--export-json`: one record per command with its statistics
//! (seconds), its per-run `times` and `exit_codes`, and `failed` when a run
//! exited non-zero. hyperfine leaves an empty export when a command fails
//! without `--ignore-failure`: that file is one failed record.

use super::{num, record, typed, Format, Parsed};
use crate::error::Result;
use serde::Deserialize;
use serde_json::Value;
use std::path::Path;

#[derive(Deserialize)]
struct Export {
    results: Vec<Run>,
}

/// The fields hyperfine 1.11 to 1.19 write for each command.
#[derive(Deserialize)]
struct Run {
    command: String,
    mean: f64,
    /// Null for a single run.
    stddev: Option<f64>,
    median: f64,
    user: f64,
    system: f64,
    min: f64,
    max: f64,
    times: Vec<f64>,
    /// Null for a run killed by a signal.
    #[serde(default)]
    exit_codes: Vec<Option<i64>>,
    #[serde(default)]
    parameters: Option<serde_json::Map<String, Value>>,
}

pub(super) fn read(file: &Path, text: &str) -> Result<Parsed> {
    if text.trim().is_empty() {
        return Ok(Parsed::records(
            Value::Array(vec![failed_export()]),
            Format::Hyperfine,
        ));
    }
    let export: Export = typed(file, text, "hyperfine --export-json")?;
    let records = export.results.into_iter().map(run_record).collect();
    Ok(Parsed::records(Value::Array(records), Format::Hyperfine))
}

fn run_record(r: Run) -> Value {
    let bad = r.exit_codes.iter().filter(|c| **c != Some(0)).count();
    let error = (bad > 0).then(|| {
        let codes: Vec<String> = r
            .exit_codes
            .iter()
            .map(|c| c.map_or("signal".to_string(), |c| c.to_string()))
            .collect();
        format!(
            "non-zero exit in {bad} of {} runs (exit codes {})",
            r.exit_codes.len(),
            codes.join(", ")
        )
    });
    record([
        ("command", Value::String(r.command)),
        ("mean", num(r.mean)),
        ("stddev", r.stddev.map_or(Value::Null, num)),
        ("median", num(r.median)),
        ("user", num(r.user)),
        ("system", num(r.system)),
        ("min", num(r.min)),
        ("max", num(r.max)),
        ("runs", Value::from(r.times.len())),
        (
            "times",
            Value::Array(r.times.into_iter().map(num).collect()),
        ),
        (
            "exit_codes",
            Value::Array(
                r.exit_codes
                    .into_iter()
                    .map(|c| c.map_or(Value::Null, Value::from))
                    .collect(),
            ),
        ),
        (
            "parameters",
            r.parameters.map_or(Value::Null, Value::Object),
        ),
        ("failed", Value::Bool(bad > 0)),
        ("error", error.map_or(Value::Null, Value::String)),
    ])
}

/// The record of an empty export: every statistic absent, `failed` set.
/// `times` is null too, not an empty list, so `median(/times)` in a table
/// is a missing cell, as a failed measurement is, rather than an error.
pub(super) fn failed_export() -> Value {
    let mut fields: Vec<(&str, Value)> = vec![("command", Value::Null)];
    for k in ["mean", "stddev", "median", "user", "system", "min", "max"] {
        fields.push((k, Value::Null));
    }
    fields.extend([
        ("runs", Value::from(0)),
        ("times", Value::Null),
        ("exit_codes", Value::Array(Vec::new())),
        ("parameters", Value::Null),
        ("failed", Value::Bool(true)),
        (
            "error",
            Value::String("empty export: the command failed and hyperfine wrote no results".into()),
        ),
    ]);
    record(fields)
}
