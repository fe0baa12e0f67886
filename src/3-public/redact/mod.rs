//! Redaction: find private values (endpoints, host paths, GPU UUIDs,
//! credentials, and whatever a campaign's policy denies) in any text bound
//! for the output, and replace each with a numbered placeholder such as
//! `[gpu-uuid-1]`. The same value gets the same placeholder everywhere in a
//! build; numbers follow the order values are first registered.

mod lanes;
mod map;
mod names;
pub(crate) use names::{mask as mask_name, mask_line};
mod policy;
pub(crate) use policy::{check_pattern, Policy};
mod rules;
pub(crate) mod scan;

use crate::error::Result;
use regex::bytes::{Regex, RegexBuilder};
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;

pub(crate) use rules::{pattern as builtin_pattern, Hit};

/// What kind of private value a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub(crate) enum Category {
    #[serde(rename = "private-endpoint")]
    Endpoint,
    #[serde(rename = "host-path")]
    HostPath,
    #[serde(rename = "gpu-uuid")]
    GpuUuid,
    #[serde(rename = "credential")]
    Credential,
    #[serde(rename = "policy")]
    Policy,
}

impl Category {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Category::Endpoint => "private-endpoint",
            Category::HostPath => "host-path",
            Category::GpuUuid => "gpu-uuid",
            Category::Credential => "credential",
            Category::Policy => "policy",
        }
    }

    fn placeholder(self) -> &'static str {
        match self {
            Category::Policy => "redacted",
            other => other.as_str(),
        }
    }
}

/// `[gpu-uuid-3]`, `[redacted-1]`: a placeholder this module wrote.
fn is_placeholder(s: &str) -> bool {
    let Some(inner) = s.strip_prefix('[').and_then(|s| s.strip_suffix(']')) else {
        return false;
    };
    let Some((name, n)) = inner.rsplit_once('-') else {
        return false;
    };
    !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
        && [
            Category::Endpoint,
            Category::HostPath,
            Category::GpuUuid,
            Category::Credential,
            Category::Policy,
        ]
        .iter()
        .any(|c| c.placeholder() == name)
}

/// Redactions made in one file or string, by category.
pub(crate) type Counts = BTreeMap<Category, usize>;

pub(crate) fn describe(counts: &Counts) -> String {
    counts
        .iter()
        .map(|(c, n)| format!("{n} {}", c.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Known literals, and the category and key of those that are no credential.
type Known = (Regex, HashMap<Vec<u8>, (Category, String)>);

/// The built-in rules plus the campaigns' policies: what counts as private.
pub(crate) struct Detector {
    policy: Option<Regex>,
    allow: HashSet<String>,
    /// Values already found elsewhere in the build where the context told
    /// (a value read from a secret-named field, the private part of a file
    /// name), matched wherever they appear again; with the category and
    /// key of each literal that is not a credential.
    known: Option<Known>,
    /// No policy pattern is anchored at the text's start or end (`\A`,
    /// `\z`, `(?-m:^)`): a value in one of many texts joined one per line
    /// is then a match in the joined text ([`Self::any_candidate_in`]).
    joinable: bool,
}

impl Detector {
    /// What decides this detector's findings besides the built-in rules:
    /// two detectors with the same fingerprint find the same values.
    pub(crate) fn fingerprint(&self) -> String {
        let mut allow: Vec<&String> = self.allow.iter().collect();
        allow.sort();
        format!(
            "{}\0{}\0{allow:?}",
            self.policy.as_ref().map_or("", |r| r.as_str()),
            self.known.as_ref().map_or("", |(r, _)| r.as_str())
        )
    }

    /// Built-in rules only.
    pub(crate) fn builtin() -> Self {
        Detector {
            policy: None,
            allow: HashSet::new(),
            known: None,
            joinable: true,
        }
    }

    /// Built-in rules plus every policy given; patterns were checked when
    /// campaign.json was loaded.
    pub(crate) fn new<'a>(policies: impl IntoIterator<Item = &'a Policy>) -> Result<Self> {
        let mut alternatives = Vec::new();
        let mut allow = HashSet::new();
        for p in policies {
            // A published campaign.json holds its deny terms as
            // placeholders; those are not terms to look for.
            let terms = p.deny.iter().map(|t| t.trim());
            for term in terms.filter(|t| !t.is_empty() && !is_placeholder(t)) {
                alternatives.push(deny_term(term));
            }
            for pat in &p.patterns {
                alternatives.push(format!("(?:{pat})"));
            }
            allow.extend(p.allow.iter().map(|a| a.trim().to_lowercase()));
        }
        let pattern = alternatives.join("|");
        let policy = if alternatives.is_empty() {
            None
        } else {
            Some(
                RegexBuilder::new(&pattern)
                    // `^` and `$` at every line: a pattern finds the same
                    // values in a file as in its lines taken one by one.
                    .multi_line(true)
                    .size_limit(64 << 20)
                    .build()?,
            )
        };
        let lines = regex_automata::util::syntax::Config::new().multi_line(true);
        let joinable = regex_automata::util::syntax::parse_with(&pattern, &lines)
            .is_ok_and(|hir| !hir.properties().look_set().contains_anchor_haystack());
        Ok(Detector {
            policy,
            allow,
            known: None,
            joinable,
        })
    }

    /// `false` when no pattern of this detector matches anywhere in
    /// `text`, so [`Self::find`] would find nothing in it or in any part
    /// of it: a cheap test before redacting many small strings one by one.
    pub(crate) fn any_candidate(&self, text: &[u8]) -> bool {
        rules::any_candidate(text)
            || self.policy.as_ref().is_some_and(|re| re.is_match(text))
            || self.known.as_ref().is_some_and(|(re, _)| re.is_match(text))
    }

    /// [`Self::any_candidate`] over many short strings at once (file
    /// names, a page's texts): `false` means none of them holds a value.
    /// They are joined one per line, where a match in any one of them is
    /// still a match (`^` and `$` are line anchors).
    pub(crate) fn any_candidate_in<'s>(&self, strings: impl IntoIterator<Item = &'s str>) -> bool {
        if !self.joinable {
            // A pattern anchored at the text's start or end matches a
            // string alone, not joined after another.
            return strings
                .into_iter()
                .any(|s| self.any_candidate(s.as_bytes()));
        }
        let mut all = String::new();
        for s in strings {
            all.push_str(s);
            all.push('\n');
        }
        self.any_candidate(all.as_bytes())
    }

    /// Keep the items whose word (`word_of`; `None`: kept unread) holds no
    /// candidate. The words are tested in batches of about 64 KB joined
    /// one per line (a search has a fixed cost, and a page has dozens of
    /// figures), and one by one only in a batch where something matched.
    pub(crate) fn retain_clear<'w, T>(
        &self,
        items: &mut Vec<T>,
        word_of: impl Fn(&T) -> Option<&'w str>,
    ) {
        const BATCH: usize = 64 << 10;
        let mut keep = vec![true; items.len()];
        let mut start = 0;
        while start < items.len() {
            let mut end = start;
            let mut bytes = 0;
            while end < items.len() && (end == start || bytes < BATCH) {
                bytes += word_of(&items[end]).map_or(0, |w| w.len() + 1);
                end += 1;
            }
            let batch = &items[start..end];
            if self.any_candidate_in(batch.iter().filter_map(&word_of)) {
                for (k, item) in keep[start..end].iter_mut().zip(batch) {
                    *k = word_of(item).is_none_or(|w| !self.any_candidate_in([w]));
                }
            }
            start = end;
        }
        let mut k = keep.into_iter();
        items.retain(|_| k.next().unwrap_or(true));
    }

    /// Every finding in `text`, in order, overlaps resolved (the earlier,
    /// then the longer, wins), allowed values dropped.
    pub(crate) fn find(&self, text: &[u8]) -> Vec<Hit> {
        let mut hits = Vec::new();
        rules::find(text, &mut hits);
        if let Some(re) = &self.policy {
            for m in re.find_iter(text).filter(|m| !m.is_empty()) {
                hits.push(Hit {
                    start: m.start(),
                    end: m.end(),
                    category: Category::Policy,
                    key: String::from_utf8_lossy(m.as_bytes()).to_lowercase(),
                });
            }
        }
        if let Some((re, kinds)) = &self.known {
            for m in re.find_iter(text) {
                let (category, key) = kinds.get(m.as_bytes()).cloned().unwrap_or_else(|| {
                    (
                        Category::Credential,
                        String::from_utf8_lossy(m.as_bytes()).into_owned(),
                    )
                });
                hits.push(Hit {
                    start: m.start(),
                    end: m.end(),
                    category,
                    key,
                });
            }
        }
        if self.policy.is_some() || self.known.is_some() {
            hits.sort_by_key(|h| (h.start, std::cmp::Reverse(h.end)));
        }
        let mut kept: Vec<Hit> = Vec::with_capacity(hits.len());
        for h in hits {
            if kept.last().is_some_and(|k| h.start < k.end) {
                continue;
            }
            if !self.allow.is_empty() {
                let span = String::from_utf8_lossy(&text[h.start..h.end]).to_lowercase();
                if self.allow.contains(&span) || self.allow.contains(&h.key.to_lowercase()) {
                    continue;
                }
            }
            kept.push(h);
        }
        kept
    }
}

/// Could `text` name a secret by key (`"api_key": ...`, a row labelled
/// `token`)? `false` is certain: no value in it is a secret met by key.
pub(crate) fn may_name_a_secret(text: &[u8]) -> bool {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        RegexBuilder::new(&format!("(?i:{})", rules::KEYS))
            .build()
            .unwrap_or_else(|e| unreachable!("the key pattern compiles: {e}"))
    })
    .is_match(text)
}

/// A deny term matches case-insensitively, as a whole word where it begins
/// or ends with a word character.
fn deny_term(term: &str) -> String {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    format!(
        "(?i:{}{}{})",
        if word(term.chars().next()) { r"\b" } else { "" },
        // Any run of white space between words: a soft line break or a
        // double space must not let a name through.
        term.split_whitespace()
            .map(regex::escape)
            .collect::<Vec<_>>()
            .join(r"\s+"),
        if word(term.chars().last()) { r"\b" } else { "" }
    )
}

#[derive(Clone, Default)]
pub(crate) struct Table {
    ids: HashMap<(Category, String), usize>,
    next: BTreeMap<Category, usize>,
}

/// A detector and the build's placeholder numbering.
pub(crate) struct Redactor {
    pub(crate) detector: Detector,
    table: Mutex<Table>,
    /// The private parts of file names as written (`db01.internal` in
    /// `db01.internal.log`), with category and key: known values for
    /// [`Redactor::with_known_secrets`], so a page or log naming the file
    /// gets the name's placeholder.
    names: Mutex<BTreeMap<String, (Category, String)>>,
}

impl Redactor {
    pub(crate) fn new(detector: Detector) -> Self {
        Redactor {
            detector,
            table: Mutex::new(Table::default()),
            names: Mutex::default(),
        }
    }

    /// The same redactor, whose detector also finds every credential it
    /// has numbered so far wherever it appears: a secret read from a
    /// secret-named field is caught in copies and the rescan too, where no
    /// key stands beside it.
    pub(crate) fn with_known_secrets(mut self) -> Result<Self> {
        let mut secrets: Vec<String> = {
            let t = self.table.lock().unwrap_or_else(|e| e.into_inner());
            t.ids
                .keys()
                .filter(|(c, k)| *c == Category::Credential && k.len() >= 8 && !k.contains('\n'))
                .map(|(_, k)| regex::escape(k))
                .collect()
        };
        let names = self.names.lock().unwrap_or_else(|e| e.into_inner()).clone();
        secrets.extend(names.keys().map(|n| regex::escape(n)));
        if secrets.is_empty() {
            return Ok(self);
        }
        secrets.sort();
        // Longer literals first: the alternation takes the first that matches.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        let kinds = names
            .into_iter()
            .map(|(literal, kind)| (literal.into_bytes(), kind))
            .collect();
        self.detector.known = Some((
            RegexBuilder::new(&secrets.join("|"))
                .size_limit(64 << 20)
                .build()?,
            kinds,
        ));
        Ok(self)
    }

    /// The numbering so far, to go back to with [`Redactor::restore`].
    pub(crate) fn snapshot(&self) -> Table {
        self.table.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn restore(&self, t: Table) {
        *self.table.lock().unwrap_or_else(|e| e.into_inner()) = t;
    }

    /// Where the numbering stands (each category's last number): cheap
    /// to take whatever the table holds, for [`Redactor::rewind`].
    pub(crate) fn mark(&self) -> BTreeMap<Category, usize> {
        self.table
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .next
            .clone()
    }

    /// Forget every value numbered since `mark` was taken (numbers are
    /// given in order, so they are those numbered past it), as if they
    /// had never been met.
    pub(crate) fn rewind(&self, mark: BTreeMap<Category, usize>) {
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        t.ids
            .retain(|(c, _), n| mark.get(c).is_some_and(|last| *n <= *last));
        t.next = mark;
    }

    /// Values numbered since `t` was taken.
    pub(crate) fn grew_since(&self, t: &Table) -> bool {
        self.table
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .ids
            .len()
            != t.ids.len()
    }

    /// A digest of the numbering so far: two builds with the same digest
    /// give every value the same placeholder.
    pub(crate) fn digest(&self) -> String {
        let t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let mut entries: Vec<(&(Category, String), &usize)> = t.ids.iter().collect();
        entries.sort();
        let mut text = String::new();
        for ((c, key), id) in entries {
            text.push_str(&format!("{}\0{key}\0{id}\n", c.as_str()));
        }
        crate::hash::sha256_bytes(text.as_bytes())
    }

    /// Number the values of `hits` not seen before, in order.
    pub(crate) fn register(&self, hits: &[Hit]) {
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        for h in hits {
            let key = (h.category, h.key.clone());
            if !t.ids.contains_key(&key) {
                let n = t.next.entry(h.category).or_insert(0);
                *n += 1;
                let n = *n;
                t.ids.insert(key, n);
            }
        }
    }

    fn placeholder(&self, h: &Hit) -> String {
        self.register(std::slice::from_ref(h));
        let t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let n = t.ids[&(h.category, h.key.clone())];
        format!("[{}-{n}]", h.category.placeholder())
    }

    /// `text` with every finding replaced, counting what was replaced.
    pub(crate) fn redact_bytes<'t>(&self, text: &'t [u8], counts: &mut Counts) -> Cow<'t, [u8]> {
        self.replace(text, &self.detector.find(text), counts)
    }

    /// `text` with the spans of `hits` (in order, not overlapping)
    /// replaced by their placeholders, counting what was replaced.
    pub(crate) fn replace<'t>(
        &self,
        text: &'t [u8],
        hits: &[Hit],
        counts: &mut Counts,
    ) -> Cow<'t, [u8]> {
        if hits.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = Vec::with_capacity(text.len());
        self.replace_into(text, hits, counts, &mut out);
        Cow::Owned(out)
    }

    /// [`Redactor::replace`] appending to `out` (a buffer the caller
    /// reuses).
    pub(crate) fn replace_into(
        &self,
        text: &[u8],
        hits: &[Hit],
        counts: &mut Counts,
        out: &mut Vec<u8>,
    ) {
        let mut at = 0;
        // A run of one value (a peer list, a repeated log line) looks its
        // placeholder up once, not once per copy under the table's lock.
        let mut last: Option<(&Hit, String)> = None;
        for h in hits {
            out.extend_from_slice(&text[at..h.start]);
            let same = last
                .as_ref()
                .is_some_and(|(l, _)| l.category == h.category && l.key == h.key);
            if !same {
                last = Some((h, self.placeholder(h)));
            }
            out.extend_from_slice(last.as_ref().map_or(&b""[..], |(_, p)| p.as_bytes()));
            // A PEM block keeps its line count, so later lines keep their numbers.
            let newlines = text[h.start..h.end].iter().filter(|&&b| b == b'\n').count();
            out.extend(std::iter::repeat_n(b'\n', newlines));
            *counts.entry(h.category).or_insert(0) += 1;
            at = h.end;
        }
        out.extend_from_slice(&text[at..]);
    }

    pub(crate) fn redact_counted<'t>(&self, text: &'t str, counts: &mut Counts) -> Cow<'t, str> {
        match self.redact_bytes(text.as_bytes(), counts) {
            Cow::Borrowed(_) => Cow::Borrowed(text),
            // Hits start and end on ASCII bytes, so the result is UTF-8.
            Cow::Owned(b) => Cow::Owned(String::from_utf8_lossy(&b).into_owned()),
        }
    }

    pub(crate) fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        self.redact_counted(text, &mut Counts::new())
    }

    /// Every string and object key of a JSON value, redacted in place. A
    /// value none of whose texts (its strings, its keys, and the `"key":
    /// "value"` pairs [`Self::redact_secret`] reads) holds a candidate is
    /// left as it is after one search of them all, joined one per line,
    /// instead of three searches per string (a campaign.json listing a
    /// thousand pages took 5 ms).
    pub(crate) fn redact_value(&self, v: &mut Value, counts: &mut Counts) {
        const JOINED_UP_TO: usize = 16 << 20;
        let mut texts = String::new();
        if self.detector.joinable
            && json_texts(v, &mut texts, JOINED_UP_TO).is_some()
            && !self.detector.any_candidate(texts.as_bytes())
        {
            return;
        }
        drop(texts);
        self.redact_each(v, counts);
    }

    /// [`Self::redact_value`], each string and key searched.
    fn redact_each(&self, v: &mut Value, counts: &mut Counts) {
        match v {
            Value::String(s) => {
                if let Cow::Owned(r) = self.redact_counted(s, counts) {
                    *s = r;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| self.redact_each(i, counts)),
            Value::Object(map) => {
                // A row naming its secret in a sibling field:
                // `{"key": "api_key", "value": "..."}`.
                let label = row_label(map).map(str::to_string);
                let entries = std::mem::take(map);
                for (k, mut val) in entries {
                    let labelled = if k == "value" { label.as_deref() } else { None };
                    self.redact_secret(labelled.unwrap_or(&k), &mut val, counts);
                    self.redact_each(&mut val, counts);
                    map.insert(self.redact_counted(&k, counts).into_owned(), val);
                }
            }
            _ => {}
        }
    }

    /// A string that is the value of a secret-named key (`"api_key":
    /// "..."` once parsed, or a table row's `value` beside its label) is a
    /// credential even without the key beside it on the page.
    fn redact_secret(&self, key: &str, val: &mut Value, counts: &mut Counts) {
        let Value::String(s) = val else {
            return;
        };
        let probe = secret_probe(key, s);
        let at = probe.len() - s.len() - 1;
        let whole =
            self.detector.find(probe.as_bytes()).into_iter().any(|h| {
                h.category == Category::Credential && h.start <= at && h.end >= at + s.len()
            });
        if whole {
            let hit = Hit {
                start: 0,
                end: s.len(),
                category: Category::Credential,
                key: s.clone(),
            };
            *counts.entry(Category::Credential).or_default() += 1;
            *s = self.placeholder(&hit);
        }
    }
}

/// What a row names its secret by in a sibling field:
/// `{"key": "api_key", "value": "..."}`.
fn row_label(map: &serde_json::Map<String, Value>) -> Option<&str> {
    ["key", "name", "label", "setting"]
        .iter()
        .find_map(|f| map.get(*f).and_then(Value::as_str))
}

/// The text [`Redactor::redact_secret`] searches for a value `s` under
/// `key`.
fn secret_probe(key: &str, s: &str) -> String {
    let mut probe = String::with_capacity(key.len() + s.len() + 6);
    push_probe(&mut probe, key, s);
    probe
}

fn push_probe(out: &mut String, key: &str, s: &str) {
    for part in ["\"", key, "\": \"", s, "\""] {
        out.push_str(part);
    }
}

/// Every text [`Redactor::redact_each`] searches in `v` (before anything in
/// it is redacted), one per line, onto `out`; `None` past `max` bytes.
fn json_texts(v: &Value, out: &mut String, max: usize) -> Option<()> {
    // Asked before each string goes in, so the text stays within `max`.
    let room = |out: &String, more: usize| (out.len() + more <= max).then_some(());
    match v {
        Value::String(s) => {
            room(out, s.len() + 1)?;
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(items) => {
            for i in items {
                json_texts(i, out, max)?;
            }
        }
        Value::Object(map) => {
            let label = row_label(map);
            for (k, val) in map {
                let labelled = if k == "value" { label } else { None };
                let key = labelled.unwrap_or(k);
                if let Value::String(s) = val {
                    room(out, key.len() + s.len() + 7)?;
                    push_probe(out, key, s);
                    out.push('\n');
                }
                room(out, k.len() + 1)?;
                out.push_str(k);
                out.push('\n');
                json_texts(val, out, max)?;
            }
        }
        _ => {}
    }
    Some(())
}

#[cfg(test)]
mod tests;
