//! Data files behind cards, tables and charts: JSON documents addressed by
//! JSON Pointer, files of records (JSONL, CSV, TSV) and what benchmark
//! tools write (read by [`crate::formats`]), one file or many through a
//! glob. Each source is read once per build, from the verified evidence
//! only, and redacted before any block sees it.

use crate::error::InputError;
use crate::error::Result;
use crate::evidence::Evidence;
use crate::formats::{self, Format};
use crate::public::Public;
use crate::redact::Redactor;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// One loaded source: a data file, or every file a glob matched.
#[derive(Debug)]
pub(crate) struct Source {
    /// Relative path in the campaign, or the glob (for messages).
    pub(crate) path: String,
    /// The path as published (redacted; for the page).
    pub(crate) public: String,
    /// The published copy's hash; for a glob, the SHA-256 of its
    /// members' `SHA256SUMS` lines.
    pub(crate) sha256: String,
    /// The records blocks read without a pointer: a file of records (or a
    /// native format) is an array of its records.
    pub(crate) doc: Value,
    /// A native format's JSON document as the tool wrote it: what pointers
    /// and expressions address. None when `doc` is the file as written.
    pub(crate) written: Option<Value>,
    /// For a file of records, each record's label for messages
    /// (`path:line`); pointers are then not allowed.
    pub(crate) labels: Option<Vec<String>>,
    /// Units of fields, from CSV headers (`memory.used [MiB]` -> `MiB`).
    pub(crate) units: BTreeMap<String, String>,
    /// For a glob: each matched file's public path and published hash.
    pub(crate) members: Vec<(String, String)>,
}

/// Records picked from a source: (record, label for messages).
pub(crate) struct Records<'a> {
    pub(crate) items: Vec<(&'a Value, String)>,
}

impl Source {
    pub(crate) fn short_hash(&self) -> &str {
        self.sha256.get(..12).unwrap_or(&self.sha256)
    }

    /// The unit a CSV header gave a field, for axis labels.
    pub(crate) fn unit(&self, field: &str) -> Option<&str> {
        self.units.get(field).map(String::as_str)
    }

    /// The file as written, for expressions (`/results/0/times` of a
    /// hyperfine export, even though its blocks read one record per command).
    pub(crate) fn document(&self) -> &Value {
        self.written.as_ref().unwrap_or(&self.doc)
    }

    /// The value a pointer names, in the file as written; no pointer: the
    /// records. A file of records (JSONL, CSV, a glob) takes no pointer.
    pub(crate) fn select(&self, pointer: Option<&str>) -> Result<&Value, String> {
        match (pointer, &self.labels) {
            (None, _) => Ok(&self.doc),
            (Some(p), _) if self.written.is_some() => self.at(p),
            (Some(_), Some(_)) => Err(format!(
                "`{}` is a list of records (JSONL, CSV, a glob's files): its records are read as they are, so `pointer` is not allowed",
                self.path
            )),
            (Some(p), None) => self.at(p),
        }
    }

    /// The value pointer `p` names in the file as written.
    fn at(&self, p: &str) -> Result<&Value, String> {
        if !(p.is_empty() || p.starts_with('/')) {
            return Err(format!("pointer `{p}` must start with `/`"));
        }
        self.document()
            .pointer(p)
            .ok_or_else(|| format!("pointer `{p}` resolves to nothing in `{}`", self.path))
    }

    /// The array of objects a pointer names.
    pub(crate) fn records(&self, pointer: Option<&str>) -> Result<Records<'_>, String> {
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

    pub(crate) fn record_label(&self, pointer: Option<&str>, i: usize) -> String {
        match self.labels.as_ref().and_then(|l| l.get(i)) {
            Some(label) => label.clone(),
            None => format!("{}#{}/{i}", self.path, pointer.unwrap_or("")),
        }
    }
}

pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A source as a block names it: path or glob, and the format asked for.
pub(crate) type SourceKey = (String, Option<Format>);

/// Loads sources on first use and keeps them for the rest of the build.
pub(crate) struct DataStore<'a> {
    evidence: &'a Evidence,
    pub(crate) redactor: &'a Redactor,
    pub(crate) public: &'a Public,
    /// The published copies, whose hashes the pages show.
    pub(crate) copies: &'a crate::copies::Copies,
    cache: Mutex<HashMap<SourceKey, Arc<Source>>>,
}

/// Why a source could not be had: positioned at the block, or already
/// positioned in the data file itself.
pub(crate) enum LoadError {
    AtBlock(String),
    Other(crate::error::Error),
}

impl<'a> DataStore<'a> {
    pub(crate) fn new(
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

    /// Every source loaded so far, sorted by path, with the key it was
    /// loaded by.
    pub(crate) fn loaded(&self) -> Vec<(SourceKey, Arc<Source>)> {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let mut v: Vec<_> = cache.iter().map(|(k, s)| (k.clone(), s.clone())).collect();
        v.sort_by(|a, b| a.1.path.cmp(&b.1.path));
        v
    }

    /// Take `source` as loaded by `key`: one an earlier build of the same
    /// bytes, numbering and names loaded (the preview's cache).
    pub(crate) fn seed(&self, key: SourceKey, source: Arc<Source>) {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache.insert(key, source);
    }

    /// A data file named by its public or its original path, its format
    /// recognised.
    pub(crate) fn load(&self, path: &str) -> Result<Arc<Source>, LoadError> {
        self.load_as(path, None)
    }

    /// A block's `source` (a path or a glob) read as `format` (a name from
    /// [`Format::named`]), or as recognised when `None`.
    pub(crate) fn load_as(
        &self,
        source: &str,
        format: Option<&str>,
    ) -> Result<Arc<Source>, LoadError> {
        let format = format
            .map(Format::named)
            .transpose()
            .map_err(LoadError::AtBlock)?;
        let glob = crate::formats::glob::is_glob(source);
        let path = if glob {
            source
        } else {
            self.public.original(source)
        };
        let key = (path.to_string(), format);
        if let Some(s) = self
            .cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return Ok(s.clone());
        }
        let source = Arc::new(if glob {
            self.read_glob(path, format)?
        } else {
            self.read(path, format)?
        });
        self.cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, source.clone());
        Ok(source)
    }

    /// The verified text of a campaign file.
    fn text(&self, path: &str) -> Result<String, LoadError> {
        if self.evidence.get(path).is_none() {
            return Err(LoadError::AtBlock(format!(
                "data file `{path}` does not exist in the campaign (paths are relative to the campaign folder)"
            )));
        }
        let bytes = self
            .evidence
            .read_verified(path)
            .map_err(LoadError::Other)?;
        String::from_utf8(bytes).map_err(|_| {
            let file = self.evidence.dir.join(path);
            LoadError::Other(InputError::new(&file, 0, 0, "data file is not valid UTF-8").into())
        })
    }

    /// `text` (of campaign file `path`) read as `format`, redacted.
    fn parse(
        &self,
        path: &str,
        text: &str,
        format: Option<Format>,
    ) -> Result<formats::Parsed, LoadError> {
        let file = self.evidence.dir.join(path);
        // criterion keeps a benchmark's name and samples in sibling files.
        let siblings = |p: &str| {
            self.evidence.verified_sha256(p)?;
            String::from_utf8(self.evidence.read_verified(p).ok()?).ok()
        };
        let mut parsed =
            formats::read(&file, path, text, format, &siblings).map_err(LoadError::Other)?;
        self.redactor
            .redact_value(&mut parsed.doc, &mut Default::default());
        if let Some(w) = &mut parsed.written {
            self.redactor.redact_value(w, &mut Default::default());
        }
        Ok(parsed)
    }

    /// The hash the page shows: the published copy's, since a redacted
    /// file's original hash would let readers test guesses.
    fn published_sha256(&self, path: &str) -> String {
        self.copies
            .get(path)
            .map(|k| k.public_sha256().to_string())
            .unwrap_or_default()
    }

    fn read(&self, path: &str, format: Option<Format>) -> Result<Source, LoadError> {
        let text = self.text(path)?;
        let parsed = self.parse(path, &text, format)?;
        Ok(Source {
            path: path.to_string(),
            public: self.public.name(path).to_string(),
            sha256: self.published_sha256(path),
            doc: parsed.doc,
            written: parsed.written,
            labels: parsed.labels,
            units: parsed.units,
            members: Vec::new(),
        })
    }

    /// Why a glob matched nothing, with what it could have matched: the
    /// verified files whose names end as the pattern's do, so a misspelt
    /// folder shows beside the right one.
    fn no_match(&self, pattern: &str) -> String {
        let ext = pattern
            .rsplit_once('.')
            .map(|(_, e)| e)
            .filter(|e| !e.contains('/'));
        let like: Vec<&str> = self
            .evidence
            .files
            .iter()
            .filter(|f| self.evidence.verified_sha256(&f.path).is_some())
            .map(|f| self.public.name(&f.path))
            .filter(|p| ext.is_none_or(|e| p.ends_with(&format!(".{e}"))))
            .collect();
        let shown: Vec<String> = like.iter().take(4).map(|p| format!("`{p}`")).collect();
        let hint = match like.len() {
            0 => String::new(),
            n if n > shown.len() => format!(
                "; it lists {} and {} more",
                shown.join(", "),
                n - shown.len()
            ),
            _ => format!("; it lists {}", shown.join(", ")),
        };
        format!(
            "source `{pattern}` matches no file of the manifest (a glob matches paths from the campaign folder: `*` within one folder, `**/` across folders){hint}"
        )
    }

    /// Every verified file whose public path matches `pattern`, in path
    /// order, as one list of records, each with its file's path and the
    /// glob's captures (`source_path`, `source_1`, ...).
    fn read_glob(&self, pattern: &str, format: Option<Format>) -> Result<Source, LoadError> {
        let glob = formats::glob::Glob::new(pattern).map_err(LoadError::AtBlock)?;
        // Only files the manifest lists and that verified can match.
        let mut matched: Vec<(String, &str, Vec<String>)> = self
            .evidence
            .files
            .iter()
            .filter(|f| self.evidence.verified_sha256(&f.path).is_some())
            .filter_map(|f| {
                let public = self.public.name(&f.path);
                glob.captures(public)
                    .map(|c| (public.to_string(), f.path.as_str(), c))
            })
            .collect();
        matched.sort();
        if matched.is_empty() {
            return Err(LoadError::AtBlock(self.no_match(pattern)));
        }
        let texts: Vec<String> = matched
            .iter()
            .map(|(_, path, _)| self.text(path))
            .collect::<Result<_, _>>()?;
        // An empty file among hyperfine exports is a failed command's.
        let mut parsed = Vec::with_capacity(texts.len());
        for ((_, path, _), text) in matched.iter().zip(&texts) {
            let deferred = format.is_none() && text.trim().is_empty();
            parsed.push(if deferred {
                None
            } else {
                Some(self.parse(path, text, format)?)
            });
        }
        let hyperfine = parsed
            .iter()
            .flatten()
            .any(|p| p.format == Format::Hyperfine);
        let mut records = Vec::new();
        let mut labels = Vec::new();
        let mut units = BTreeMap::new();
        let mut members = Vec::new();
        for (((public, path, captures), text), p) in matched.iter().zip(&texts).zip(parsed) {
            let p = match p {
                Some(p) => p,
                None if hyperfine => self.parse(path, text, Some(Format::Hyperfine))?,
                None => self.parse(path, text, None)?,
            };
            units.extend(p.units);
            let file_records = match p.doc {
                Value::Array(a) => a,
                other => vec![other],
            };
            for (i, mut rec) in file_records.into_iter().enumerate() {
                let label = match &p.labels {
                    Some(l) => l.get(i).cloned().unwrap_or_else(|| public.clone()),
                    None => format!("{public}#/{i}"),
                };
                let Value::Object(fields) = &mut rec else {
                    return Err(LoadError::AtBlock(format!(
                        "record {label} is {}, not an object",
                        kind(&rec)
                    )));
                };
                fields.insert("source_path".into(), Value::String(public.clone()));
                for (n, c) in captures.iter().enumerate() {
                    fields.insert(format!("source_{}", n + 1), Value::String(c.clone()));
                }
                records.push(rec);
                labels.push(label);
            }
            members.push((public.clone(), self.published_sha256(path)));
        }
        let listing: String = members.iter().map(|(p, h)| format!("{h}  {p}\n")).collect();
        Ok(Source {
            path: pattern.to_string(),
            public: self.redactor.redact(pattern).into_owned(),
            sha256: crate::hash::sha256_bytes(listing.as_bytes()),
            doc: Value::Array(records),
            written: None,
            labels: Some(labels),
            units,
            members,
        })
    }
}
