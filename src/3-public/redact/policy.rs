//! A campaign's redaction policy (campaign.json's `redaction`): what to
//! deny and allow beyond the built-in detectors, and the binary files
//! accepted as they are. Parsed and checked here, with the redaction that
//! applies it; [`crate::campaign`] only holds one.

use crate::error::InputError;
use crate::error::Result;
use regex::bytes::Regex;
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Policy {
    #[serde(default)]
    pub(crate) deny: Vec<String>,
    #[serde(default)]
    pub(crate) patterns: Vec<String>,
    #[serde(default)]
    pub(crate) allow: Vec<String>,
    /// Binary files and archives published as they are although the scan
    /// found something in them: each accepted by path and exact hash, so
    /// a changed file is scanned and judged again.
    #[serde(default)]
    pub(crate) binary: Vec<Accepted>,
}

/// One `redaction.binary` entry: `{"path": "...", "sha256": "..."}`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Accepted {
    pub(crate) path: String,
    pub(crate) sha256: String,
}

impl<'de> Deserialize<'de> for Accepted {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Entry {
            path: String,
            sha256: String,
        }
        let v = serde_json::Value::deserialize(d)?;
        if let serde_json::Value::String(s) = &v {
            // Plain paths once meant "published unscanned"; every file is
            // scanned now, and only an exact file can be accepted.
            return Err(D::Error::custom(format!(
                "`redaction.binary` entry `{s}` is a plain path; binary files are scanned now, and one with a finding is published only if accepted by its exact hash: write {{\"path\": \"{s}\", \"sha256\": \"<64 hex digits>\"}} (a binary with no finding needs no entry)"
            )));
        }
        let e = Entry::deserialize(v).map_err(D::Error::custom)?;
        if e.sha256.len() != 64 || !e.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(D::Error::custom(format!(
                "`redaction.binary` entry `{}`: `sha256` must be 64 hex digits",
                e.path
            )));
        }
        Ok(Accepted {
            path: e.path,
            sha256: e.sha256.to_ascii_lowercase(),
        })
    }
}

impl Policy {
    /// Does the policy accept this exact file (path and hash) as it is,
    /// whatever its scan found?
    pub(crate) fn accepts(&self, path: &str, sha256: Option<&str>) -> bool {
        sha256.is_some_and(|h| self.binary.iter().any(|b| b.path == path && b.sha256 == h))
    }
}

/// Check a policy pattern the way the build will compile it.
pub(crate) fn check_pattern(p: &str) -> Result<(), String> {
    Regex::new(p).map(|_| ()).map_err(|e| e.to_string())
}

impl Policy {
    /// Every pattern compiles; the first that does not is reported at its
    /// place in `text`, the campaign.json at `path`.
    pub(crate) fn check_patterns(&self, path: &Path, text: &str) -> Result<()> {
        for p in &self.patterns {
            if let Err(e) = check_pattern(p) {
                let offset = text
                    .find(&serde_json::to_string(p).unwrap_or_default())
                    .unwrap_or(0);
                return Err(InputError::at_offset(
                    path,
                    text,
                    offset,
                    format!(
                        "redaction pattern is not a valid regex: {}",
                        e.lines().last().unwrap_or("")
                    ),
                )
                .into());
            }
        }
        Ok(())
    }
}
