//! Keyed commitments: how a redacted copy stays tied to its sealed original
//! without publishing anything an outsider could test a guess against.
//!
//! The SHA-256 and size of a redacted file's original are functions of the
//! private bytes alone: with the copy beside them, hashing every candidate
//! (every 10.x.x.x address, a list of likely host names) recovers the value.
//! So a site publishes only the copy's own hash and size, and, when the
//! publisher gives a key, an HMAC-SHA256 over the original's path, hash and
//! size and the copy's hash. An auditor holding the key and the sealed
//! campaign recomputes it (`exhibit verify SITE --sealed CAMPAIGN`); nobody
//! without the key can check a guess against it.

use crate::error::{bail, Result};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::path::Path;

/// The environment variable holding the key itself (for CI secrets).
pub(crate) const KEY_ENV: &str = "EXHIBIT_KEY";
/// The environment variable naming a key file.
pub(crate) const KEY_FILE_ENV: &str = "EXHIBIT_KEY_FILE";
/// Shorter keys can be guessed, and a guessed key opens every commitment.
const MIN_KEY_BYTES: usize = 16;

/// The publisher's commitment key.
pub struct Key(Vec<u8>);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(..)")
    }
}

/// A sealed original and the copy published for it.
pub(crate) struct Sealed<'a> {
    /// The original's path in the campaign (before names are redacted).
    pub(crate) path: &'a str,
    pub(crate) sha256: &'a str,
    pub(crate) bytes: u64,
    pub(crate) published_sha256: &'a str,
}

impl Key {
    /// The key from `--key-file`, else `EXHIBIT_KEY_FILE`, else
    /// `EXHIBIT_KEY`; `None` when none is given. A key file must lie outside
    /// every folder in `outside` (it would be published with the campaign).
    pub(crate) fn load(flag: Option<&Path>, outside: &[&Path]) -> Result<Option<Key>> {
        let file = flag
            .map(Path::to_path_buf)
            .or_else(|| std::env::var_os(KEY_FILE_ENV).map(Into::into));
        let (bytes, from) = match file {
            Some(path) => {
                if let Ok(abs) = crate::fsx::canonicalize(&path) {
                    for dir in outside {
                        if crate::fsx::canonicalize(dir).is_ok_and(|d| abs.starts_with(d)) {
                            bail!(
                                "the key file `{}` lies inside `{}`: keep it outside the campaign, or it is published with it",
                                path.display(),
                                dir.display()
                            );
                        }
                    }
                }
                (crate::fsx::read(&path)?, format!("`{}`", path.display()))
            }
            None => match std::env::var(KEY_ENV) {
                Ok(k) => (k.into_bytes(), format!("${KEY_ENV}")),
                Err(_) => return Ok(None),
            },
        };
        let key = bytes.trim_ascii().to_vec();
        if key.len() < MIN_KEY_BYTES {
            bail!(
                "the commitment key in {from} has {} bytes; use at least {MIN_KEY_BYTES} random bytes (for example `head -c 32 /dev/urandom | base64 > exhibit.key`)",
                key.len()
            );
        }
        Ok(Some(Key(key)))
    }

    fn mac(&self, parts: &[&str]) -> String {
        // new_from_slice takes a key of any length for HMAC.
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.0)
            .unwrap_or_else(|_| unreachable!("HMAC accepts any key length"));
        for p in parts {
            mac.update(p.as_bytes());
            mac.update(b"\n");
        }
        crate::hash::hex(&mac.finalize().into_bytes())
    }

    /// The commitment published for a redacted copy.
    pub(crate) fn commit(&self, s: &Sealed) -> String {
        self.mac(&[
            "exhibit commitment v1",
            s.path,
            s.sha256,
            &s.bytes.to_string(),
            s.published_sha256,
        ])
    }

    /// A keyed tag of an original path, so an auditor can pair a copy
    /// whose name was redacted with its original.
    pub(crate) fn path_tag(&self, path: &str) -> String {
        self.mac(&["exhibit path v1", path])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commitments_depend_on_every_field_and_the_key() {
        let k = Key(b"0123456789abcdef0123".to_vec());
        let s = Sealed {
            path: "artifacts/env.log",
            sha256: "aa",
            bytes: 10,
            published_sha256: "bb",
        };
        let c = k.commit(&s);
        assert_eq!(c.len(), 64);
        assert_ne!(c, k.commit(&Sealed { bytes: 11, ..s }));
        let other = Key(b"0123456789abcdef0124".to_vec());
        assert_ne!(c, other.commit(&s));
        assert_ne!(k.path_tag("a"), k.path_tag("b"));
    }
}
