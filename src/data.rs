//! Data files behind cards, tables and charts: JSON documents addressed by
//! JSON Pointer, and JSONL files of one record per line. Each file is read
//! once per build, from the verified evidence only.

use crate::error::InputError;
use crate::evidence::Evidence;
use crate::public::Public;
use crate::redact::Redactor;
use anyhow::Result;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// One loaded data file.
#[derive(Debug)]
pub struct Source {
    /// Relative path in the campaign (for messages).
    pub path: String,
    /// The path as published (redacted; for the page).
    pub public: String,
    /// The published copy's hash.
    pub sha256: String,
    /// The document; a JSONL file is an array of its records.
    pub doc: Value,
    /// For JSONL, the file line of each record.
    pub lines: Option<Vec<usize>>,
}

/// Records picked from a source: (record, label for messages).
pub struct Records<'a> {
    pub items: Vec<(&'a Value, String)>,
}

impl Source {
    pub fn short_hash(&self) -> &str {
        self.sha256.get(..12).unwrap_or(&self.sha256)
    }

    /// The value a pointer names; for JSONL, pointers are not allowed.
    pub fn select(&self, pointer: Option<&str>) -> Result<&Value, String> {
        match (pointer, &self.lines) {
            (None, _) => Ok(&self.doc),
            (Some(_), Some(_)) => Err(format!(
                "`{}` is JSONL: its records are its lines, so `pointer` is not allowed",
                self.path
            )),
            (Some(p), None) => {
                if !(p.is_empty() || p.starts_with('/')) {
                    return Err(format!("pointer `{p}` must start with `/`"));
                }
                self.doc
                    .pointer(p)
                    .ok_or_else(|| format!("pointer `{p}` resolves to nothing in `{}`", self.path))
            }
        }
    }

    /// The array of objects a pointer names.
    pub fn records(&self, pointer: Option<&str>) -> Result<Records<'_>, String> {
        let v = self.select(pointer)?;
        let arr = v.as_array().ok_or_else(|| {
            format!(
                "`{}`{} is {}, not an array of records",
                self.path,
                pointer.map(|p| format!(" at `{p}`")).unwrap_or_default(),
                kind(v)
            )
        })?;
        let mut items = Vec::with_capacity(arr.len());
        for (i, rec) in arr.iter().enumerate() {
            let label = self.record_label(pointer, i);
            if !rec.is_object() {
                return Err(format!("record {label} is {}, not an object", kind(rec)));
            }
            items.push((rec, label));
        }
        Ok(Records { items })
    }

    pub fn record_label(&self, pointer: Option<&str>, i: usize) -> String {
        match &self.lines {
            Some(lines) => format!("{}:{}", self.path, lines[i]),
            None => format!("{}#{}/{i}", self.path, pointer.unwrap_or("")),
        }
    }
}

pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Loads data files on first use and keeps them for the rest of the build.
pub struct DataStore<'a> {
    evidence: &'a Evidence,
    pub redactor: &'a Redactor,
    pub public: &'a Public,
    /// The published copies, whose hashes the pages show.
    pub copies: &'a crate::copies::Copies,
    cache: Mutex<HashMap<String, Arc<Source>>>,
}

/// Why a source could not be had: positioned at the block, or already
/// positioned in the data file itself.
pub enum LoadError {
    AtBlock(String),
    Other(anyhow::Error),
}

impl<'a> DataStore<'a> {
    pub fn new(
        evidence: &'a Evidence,
        redactor: &'a Redactor,
        public: &'a Public,
        copies: &'a crate::copies::Copies,
    ) -> Self {
        DataStore {
            evidence,
            redactor,
            public,
            copies,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// Every source loaded so far, sorted by path.
    pub fn loaded(&self) -> Vec<Arc<Source>> {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let mut v: Vec<_> = cache.values().cloned().collect();
        v.sort_by(|a, b| a.path.cmp(&b.path));
        v
    }

    /// A data file named by its public or its original path.
    pub fn load(&self, path: &str) -> Result<Arc<Source>, LoadError> {
        let path = self.public.original(path);
        if let Some(s) = self
            .cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(path)
        {
            return Ok(s.clone());
        }
        let source = Arc::new(self.read(path)?);
        self.cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(path.to_string(), source.clone());
        Ok(source)
    }

    fn read(&self, path: &str) -> Result<Source, LoadError> {
        let jsonl = path.ends_with(".jsonl");
        if !jsonl && !path.ends_with(".json") {
            return Err(LoadError::AtBlock(format!(
                "data file `{path}` must be `.json` or `.jsonl`"
            )));
        }
        if self.evidence.get(path).is_none() {
            return Err(LoadError::AtBlock(format!(
                "data file `{path}` does not exist in the campaign (paths are relative to the campaign folder)"
            )));
        }
        // The hash the page shows is the published copy's: a redacted
        // file's original hash would let readers test guesses.
        let sha256 = self
            .copies
            .get(path)
            .map(|k| k.public_sha256().to_string())
            .unwrap_or_default();
        let bytes = self
            .evidence
            .read_verified(path)
            .map_err(LoadError::Other)?;
        let file = self.evidence.dir.join(path);
        let text = String::from_utf8(bytes).map_err(|_| {
            LoadError::Other(InputError::new(&file, 0, 0, "data file is not valid UTF-8").into())
        })?;
        let (doc, lines) = if jsonl {
            let mut records = Vec::new();
            let mut lines = Vec::new();
            for (i, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let v: Value = serde_json::from_str(line)
                    .map_err(|e| LoadError::Other(InputError::json(&file, &text, i, &e).into()))?;
                records.push(v);
                lines.push(i + 1);
            }
            (Value::Array(records), Some(lines))
        } else {
            let v: Value = serde_json::from_str(&text)
                .map_err(|e| LoadError::Other(InputError::json(&file, &text, 0, &e).into()))?;
            (v, None)
        };
        let mut doc = doc;
        self.redactor
            .redact_value(&mut doc, &mut Default::default());
        Ok(Source {
            path: path.to_string(),
            public: self.public.name(path).to_string(),
            sha256,
            doc,
            lines,
        })
    }
}
