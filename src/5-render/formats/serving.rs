//! LLM-serving benchmark results: `vllm bench serve --save-result` (one
//! JSON object; `--append-result` adds one per line) and SGLang's
//! `bench_serving --output-file` (JSONL, one line per run). Each run is
//! one record with the tool's own field names (`request_throughput`,
//! `output_throughput`, `mean_ttft_ms`, `p99_itl_ms`, ...); docs/FORMAT.md
//! names the versions they follow.

use super::{Format, Parsed};
use crate::error::InputError;
use crate::error::Result;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// Fields every vLLM serve result has, whatever its percentiles.
const VLLM: &[&str] = &[
    "request_throughput",
    "output_throughput",
    "completed",
    "duration",
];
/// Fields of SGLang's result line that vLLM's lacks.
const SGLANG: &[&str] = &["request_throughput", "mean_e2e_latency_ms", "dataset_name"];

pub(super) fn recognise_vllm(obj: &Map<String, Value>) -> bool {
    VLLM.iter().all(|k| obj.contains_key(*k)) && !obj.contains_key("mean_e2e_latency_ms")
}

/// A JSONL file whose every line is an SGLang result.
pub(super) fn recognise_lines(doc: &Value) -> bool {
    doc.as_array().is_some_and(|lines| {
        !lines.is_empty()
            && lines
                .iter()
                .all(|l| SGLANG.iter().all(|k| l.get(*k).is_some()))
    })
}

/// Does `text` start with a vLLM result (so several appended results,
/// not one broken document)?
pub(super) fn is_vllm_stream(text: &str) -> bool {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    matches!(stream.next(), Some(Ok(Value::Object(o))) if recognise_vllm(&o))
}

/// One record per JSON object in the file, each checked to be a result.
pub(super) fn read_vllm(file: &Path, path: &str, text: &str) -> Result<Parsed> {
    let mut records = Vec::new();
    let mut labels = Vec::new();
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    loop {
        let start = stream.byte_offset();
        let Some(next) = stream.next() else { break };
        let v = next.map_err(|e| InputError::json(file, text, 0, &e))?;
        let (line, _) = crate::error::line_col(text, start + leading_space(&text[start..]));
        match &v {
            Value::Object(o) if VLLM.iter().all(|k| o.contains_key(*k)) => {}
            _ => {
                let missing: Vec<&str> = VLLM
                    .iter()
                    .filter(|k| v.get(**k).is_none())
                    .copied()
                    .collect();
                return Err(InputError::new(
                    file,
                    line,
                    1,
                    format!(
                        "not a `vllm bench serve` result this version of exhibit knows: no {}",
                        missing.join(", ")
                    ),
                )
                .into());
            }
        }
        records.push(v);
        labels.push(format!("{path}:{line}"));
    }
    Ok(Parsed {
        doc: Value::Array(records),
        labels: Some(labels),
        units: BTreeMap::new(),
        format: Format::Vllm,
        written: None,
    })
}

fn leading_space(s: &str) -> usize {
    s.len() - s.trim_start().len()
}
