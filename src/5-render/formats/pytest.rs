//! pytest-benchmark `--benchmark-json`: one record per benchmark, its
//! `stats` (seconds) lifted beside its name, `times` the per-round data
//! pytest-benchmark keeps.

use super::{typed, Format, Parsed};
use crate::error::Result;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::path::Path;

#[derive(Deserialize)]
struct Report {
    benchmarks: Vec<Bench>,
}

/// The fields of pytest-benchmark 3 to 5; `stats` holds min, max, mean,
/// stddev, median, iqr, q1, q3, ops, rounds, iterations, total, data.
#[derive(Deserialize)]
struct Bench {
    name: String,
    fullname: String,
    #[serde(default)]
    group: Option<String>,
    #[serde(default)]
    param: Option<String>,
    #[serde(default)]
    params: Option<Map<String, Value>>,
    #[serde(default)]
    extra_info: Map<String, Value>,
    stats: Stats,
}

#[derive(Deserialize)]
struct Stats {
    min: f64,
    max: f64,
    mean: f64,
    median: f64,
    #[serde(flatten)]
    rest: Map<String, Value>,
}

pub(super) fn read(file: &Path, text: &str) -> Result<Parsed> {
    let report: Report = typed(file, text, "pytest-benchmark --benchmark-json")?;
    let records = report
        .benchmarks
        .into_iter()
        .map(|b| {
            let mut rec = Map::new();
            rec.insert("name".into(), Value::String(b.name));
            rec.insert("fullname".into(), Value::String(b.fullname));
            rec.insert("group".into(), b.group.map_or(Value::Null, Value::String));
            rec.insert("param".into(), b.param.map_or(Value::Null, Value::String));
            rec.insert("params".into(), b.params.map_or(Value::Null, Value::Object));
            rec.insert("extra_info".into(), Value::Object(b.extra_info));
            for (k, v) in [
                ("min", b.stats.min),
                ("max", b.stats.max),
                ("mean", b.stats.mean),
                ("median", b.stats.median),
            ] {
                rec.insert(k.into(), super::num(v));
            }
            let mut rest = b.stats.rest;
            // The per-round times, named as hyperfine's are.
            let times = rest.remove("data").unwrap_or(Value::Array(Vec::new()));
            rec.extend(rest);
            rec.insert("times".into(), times);
            Value::Object(rec)
        })
        .collect();
    Ok(Parsed::records(
        Value::Array(records),
        Format::PytestBenchmark,
    ))
}
