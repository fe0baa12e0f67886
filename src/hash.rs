//! SHA-256 helpers: streaming file hashing (constant memory) and hex output.
//!
//! The `sha2` crate picks the CPU's SHA extensions at run time when present.

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::Path;

const BUF: usize = 256 * 1024;

pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

pub fn sha256_bytes(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Hash a file by streaming it; returns (hex digest, bytes read).
pub fn sha256_file(path: &Path) -> Result<(String, u64)> {
    let mut file = crate::fsx::open(path)?;
    sha256_reader(&mut file).with_context(|| format!("failed to read `{}`", path.display()))
}

pub fn sha256_reader(reader: &mut impl Read) -> std::io::Result<(String, u64)> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; BUF];
    let mut total = 0u64;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buf[..n]);
        total += n as u64;
    }
    Ok((hex(&hasher.finalize()), total))
}

/// Copy `from` to `to`, hashing what was copied; returns (hex digest, bytes).
pub fn copy_hashed(from: &Path, to: &Path) -> Result<(String, u64)> {
    let mut src = crate::fsx::open(from)?;
    let mut dst = std::io::BufWriter::with_capacity(BUF, crate::fsx::create(to)?);
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; BUF];
    let mut total = 0u64;
    loop {
        let n = match src.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(e).with_context(|| format!("failed to read `{}`", from.display()))
            }
        };
        hasher.update(&buf[..n]);
        dst.write_all(&buf[..n])
            .with_context(|| format!("failed to write `{}`", to.display()))?;
        total += n as u64;
    }
    dst.flush()
        .with_context(|| format!("failed to write `{}`", to.display()))?;
    Ok((hex(&hasher.finalize()), total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digest() {
        assert_eq!(
            sha256_bytes(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
