//! criterion's `target/criterion/<group>/<bench>/new/` files: one record
//! per benchmark. `estimates.json` gives each statistic's point estimate
//! and confidence bounds (nanoseconds); the `benchmark.json` and
//! `sample.json` beside it, when the manifest lists them, add the
//! benchmark's name and its per-iteration sample times.

use super::{num, typed, Format, Parsed, Siblings};
use crate::error::Result;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Deserialize)]
struct Estimate {
    confidence_interval: Interval,
    point_estimate: f64,
    standard_error: f64,
}

#[derive(Deserialize)]
struct Interval {
    confidence_level: f64,
    lower_bound: f64,
    upper_bound: f64,
}

#[derive(Deserialize)]
struct Sample {
    sampling_mode: String,
    iters: Vec<f64>,
    times: Vec<f64>,
}

/// `estimates.json`: the statistics criterion 0.3 to 0.5 estimate.
type Estimates = BTreeMap<String, Option<Estimate>>;

pub(super) fn recognise(obj: &Map<String, Value>) -> bool {
    let estimates = obj
        .get("mean")
        .is_some_and(|m| m.get("point_estimate").is_some());
    let sample = ["iters", "times", "sampling_mode"]
        .iter()
        .all(|k| obj.contains_key(*k));
    let benchmark = ["group_id", "full_id", "directory_name"]
        .iter()
        .all(|k| obj.contains_key(*k));
    estimates || sample || benchmark
}

pub(super) fn read(file: &Path, path: &str, text: &str, siblings: Siblings) -> Result<Parsed> {
    let doc: Value = typed(file, text, "criterion")?;
    let obj = doc.as_object().cloned().unwrap_or_default();
    let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
    let sibling = |name: &str| {
        let p = if dir.is_empty() {
            name.to_string()
        } else {
            format!("{dir}/{name}")
        };
        (p != path).then(|| siblings(&p)).flatten()
    };
    let mut rec = Map::new();
    if obj.contains_key("full_id") {
        rec.extend(obj.clone());
    } else if let Some(b) = sibling("benchmark.json") {
        // A sibling that does not parse is left out: it is read as a data
        // file of its own only when a block names it.
        if let Ok(Value::Object(b)) = serde_json::from_str::<Value>(&b) {
            rec.extend(b);
        }
    }
    if obj.contains_key("mean") {
        let estimates: Estimates = typed(file, text, "criterion estimates.json")?;
        add_estimates(&mut rec, estimates);
        if let Some(s) = sibling("sample.json") {
            if let Ok(sample) = serde_json::from_str::<Sample>(&s) {
                add_sample(&mut rec, sample);
            }
        }
    } else if obj.contains_key("iters") {
        let sample: Sample = typed(file, text, "criterion sample.json")?;
        add_sample(&mut rec, sample);
    }
    rec.insert("unit".into(), Value::String("ns".into()));
    Ok(Parsed::records(
        Value::Array(vec![Value::Object(rec)]),
        Format::Criterion,
    ))
}

/// `mean` -> `mean`, `mean_lower`, `mean_upper`, `mean_standard_error`.
fn add_estimates(rec: &mut Map<String, Value>, estimates: Estimates) {
    for (name, e) in estimates {
        let fields = [
            (name.clone(), e.as_ref().map(|e| e.point_estimate)),
            (
                format!("{name}_lower"),
                e.as_ref().map(|e| e.confidence_interval.lower_bound),
            ),
            (
                format!("{name}_upper"),
                e.as_ref().map(|e| e.confidence_interval.upper_bound),
            ),
            (
                format!("{name}_standard_error"),
                e.as_ref().map(|e| e.standard_error),
            ),
        ];
        if let Some(e) = &e {
            rec.insert(
                "confidence_level".into(),
                num(e.confidence_interval.confidence_level),
            );
        }
        for (k, v) in fields {
            rec.insert(k, v.map_or(Value::Null, num));
        }
    }
}

/// Per-iteration times: criterion stores each sample's total time and
/// its iteration count.
fn add_sample(rec: &mut Map<String, Value>, s: Sample) {
    let per: Vec<Value> = s
        .times
        .iter()
        .zip(&s.iters)
        .map(|(t, n)| if *n > 0.0 { num(t / n) } else { Value::Null })
        .collect();
    rec.insert("sampling_mode".into(), Value::String(s.sampling_mode));
    rec.insert("samples".into(), Value::from(per.len()));
    rec.insert("times".into(), Value::Array(per));
}
