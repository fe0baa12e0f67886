//! Google Benchmark `--benchmark_format=json` (and `--benchmark_out`):
//! one record per row of `benchmarks`, repetitions and aggregate rows
//! (`mean`, `median`, `stddev`, `cv`) alike, every counter kept. Each
//! record has `aggregate_name` (null for a run), `error_message` and
//! `failed` (Google Benchmark's `error_occurred`), so every record has
//! the same fields.

use super::{typed, Format, Parsed};
use crate::error::Result;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::path::Path;

#[derive(Deserialize)]
struct Report {
    benchmarks: Vec<Row>,
}

/// The fields of Google Benchmark 1.5 to 1.9; counters are free-form.
#[derive(Deserialize)]
struct Row {
    name: String,
    run_type: String,
    #[serde(default)]
    real_time: Option<f64>,
    #[serde(default)]
    cpu_time: Option<f64>,
    #[serde(default)]
    time_unit: Option<String>,
    #[serde(flatten)]
    rest: Map<String, Value>,
}

pub(super) fn read(file: &Path, text: &str) -> Result<Parsed> {
    let report: Report = typed(file, text, "Google Benchmark JSON")?;
    let records = report.benchmarks.into_iter().map(row).collect();
    Ok(Parsed::records(
        Value::Array(records),
        Format::GoogleBenchmark,
    ))
}

fn row(r: Row) -> Value {
    let mut rec = Map::new();
    rec.insert("name".into(), Value::String(r.name));
    rec.insert("run_type".into(), Value::String(r.run_type));
    rec.insert(
        "real_time".into(),
        r.real_time.map_or(Value::Null, super::num),
    );
    rec.insert(
        "cpu_time".into(),
        r.cpu_time.map_or(Value::Null, super::num),
    );
    rec.insert(
        "time_unit".into(),
        r.time_unit.map_or(Value::Null, Value::String),
    );
    let mut rest = r.rest;
    let failed = rest
        .get("error_occurred")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    for k in ["aggregate_name", "error_message"] {
        rest.entry(k).or_insert(Value::Null);
    }
    rec.extend(rest);
    rec.insert("failed".into(), Value::Bool(failed));
    Value::Object(rec)
}
