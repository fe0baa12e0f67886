//! SHA-256 helpers: streaming hashing (constant memory) and hex output.
//!
//! One streaming helper, [`HashingReader`], hashes and counts whatever is
//! read through it: hashing a file, and copying or scanning one while it is
//! hashed, go through it. The `sha2` crate picks the CPU's SHA
//! extensions at run time when present.

use sha2::{Digest, Sha256};
use std::io::Read;

/// Bytes read at a time: large reads keep syscalls rare on multi-gigabyte
/// artifacts.
pub(crate) const BUF: usize = 256 * 1024;

/// Lowercase hex, as manifests and SHA256SUMS write digests.
pub(crate) fn hex(bytes: &[u8]) -> String {
    // Into one buffer of the final size: `hex::encode` collects char by
    // char (about 1 ms per 10,000 digests, on verify's way).
    let mut out = vec![0; bytes.len() * 2];
    ::hex::encode_to_slice(bytes, &mut out).expect("twice the length");
    String::from_utf8(out).expect("hex digits are ASCII")
}

pub(crate) fn sha256_bytes(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Feed `text` to `h` after its length, so that in a digest of several
/// strings each is told from the next (the preview's cache keys).
pub(crate) fn update_text(h: &mut Sha256, text: &str) {
    h.update((text.len() as u64).to_le_bytes());
    h.update(text.as_bytes());
}

/// A reader that hashes and counts every byte read through it.
pub(crate) struct HashingReader<R> {
    inner: R,
    hash: Sha256,
    bytes: u64,
}

impl<R: Read> HashingReader<R> {
    pub(crate) fn new(inner: R) -> Self {
        HashingReader {
            inner,
            hash: Sha256::new(),
            bytes: 0,
        }
    }

    /// Read whatever is left, so the digest covers the whole input.
    /// Mostly nothing is left: the buffer is small, as a large one was
    /// zeroed on every call (a `BufReader` over a plain `read`), which
    /// cost more than copying a small file.
    pub(crate) fn drain(&mut self) -> std::io::Result<()> {
        let mut buf = [0u8; 16 << 10];
        loop {
            match self.read(&mut buf) {
                Ok(0) => return Ok(()),
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The hex digest and the count of what was read.
    pub(crate) fn finish(self) -> (String, u64) {
        (hex(&self.hash.finalize()), self.bytes)
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
}

/// Hash a stream in constant memory through `buf`, a buffer the caller
/// reuses from one file to the next (nothing is allocated or zeroed per file), telling `seen`
/// the size of each chunk; returns (hex digest, bytes read). Everything up
/// to the end of the stream is hashed.
pub(crate) fn sha256_reader_in(
    reader: impl Read,
    buf: &mut [u8],
    mut seen: impl FnMut(u64),
) -> std::io::Result<(String, u64)> {
    let mut hashing = HashingReader::new(reader);
    loop {
        match hashing.read(buf) {
            Ok(0) => return Ok(hashing.finish()),
            Ok(n) => seen(n as u64),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
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

    #[test]
    fn hashing_reader_counts_and_hashes_what_passes() {
        let data = vec![7u8; BUF * 2 + 3];
        let mut r = HashingReader::new(&data[..]);
        let mut head = [0u8; 10];
        r.read_exact(&mut head).unwrap();
        r.drain().unwrap();
        assert_eq!(r.finish(), (sha256_bytes(&data), data.len() as u64));
    }

    #[test]
    fn a_reused_buffer_hashes_each_stream_alone() {
        // A long stream, then a short one: what the first left in the
        // buffer must not reach the second's digest.
        let mut buf = vec![0u8; 1000];
        let long: Vec<u8> = (0..2500u32).map(|i| (i % 251) as u8).collect();
        let mut chunks = 0;
        let got = sha256_reader_in(&long[..], &mut buf, |_| chunks += 1).unwrap();
        assert_eq!(got, (sha256_bytes(&long), long.len() as u64));
        assert_eq!(chunks, 3);
        let got = sha256_reader_in(&b"abc"[..], &mut buf, |_| {}).unwrap();
        assert_eq!(got, (sha256_bytes(b"abc"), 3));
        let got = sha256_reader_in(&b""[..], &mut buf, |_| {}).unwrap();
        assert_eq!(got, (sha256_bytes(b""), 0));
    }
}
