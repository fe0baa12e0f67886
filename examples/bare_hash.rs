//! The floor `benches/verify.sh` sets beside `exhibit verify`: every
//! regular file under a folder read and hashed on every core, with the
//! same SHA-256 crate, thread pool and read buffer size as exhibit, and
//! none of verify's checks (no manifest, no names judged, no file type or
//! stamp checked, no report). What verify costs over this is the cost of
//! its checks.
//!
//! Prints how many files it read and one hash of all their hashes, in
//! path order (so the hashing cannot be left out).
//!
//!   cargo run --release --example bare_hash -- DIR

use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::io::Read;

fn main() {
    let Some(dir) = std::env::args_os().nth(1) else {
        eprintln!("usage: bare_hash DIR");
        std::process::exit(2);
    };
    if let Err(e) = run(std::path::Path::new(&dir)) {
        eprintln!("bare_hash: {e}");
        std::process::exit(1);
    }
}

fn run(dir: &std::path::Path) -> std::io::Result<()> {
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry?;
        if entry.file_type().is_file() {
            files.push(entry.into_path());
        }
    }
    let hashes = files
        .par_iter()
        .map_init(
            || vec![0u8; 256 * 1024],
            |buf, path| -> std::io::Result<[u8; 32]> {
                let named = |e: std::io::Error| {
                    std::io::Error::new(e.kind(), format!("{}: {e}", path.display()))
                };
                let mut file = std::fs::File::open(path).map_err(named)?;
                let mut hash = Sha256::new();
                loop {
                    match file.read(buf) {
                        Ok(0) => return Ok(hash.finalize().into()),
                        Ok(n) => hash.update(&buf[..n]),
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(named(e)),
                    }
                }
            },
        )
        .collect::<std::io::Result<Vec<_>>>()?;
    let mut all = Sha256::new();
    for h in &hashes {
        all.update(h);
    }
    println!("{} files, {}", files.len(), hex::encode(all.finalize()));
    Ok(())
}
