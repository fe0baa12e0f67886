//! Bounded fuzzing on stable: a seeded mutation loop over the real files of
//! the sample campaign, one target per parser (campaign.json, manifest.json,
//! SHA256SUMS, `exhibit` block bodies, data files, Markdown pages). Every case
//! must return within [`TIMEOUT`] without a panic; bad input must be an
//! exit-2 error naming the file and line:col. Parsers are called in-process
//! (fast); a few whole-binary builds check the same through `main`.
//!
//! Same seed, same cases: a failure names its target and case number, and
//! reruns identically.

use super::*;
use exhibit::error::{Error, InputError};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// No case may take longer (a hang is a failure, not a slow test).
const TIMEOUT: Duration = Duration::from_secs(10);

/// xorshift64*: deterministic and dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Tokens that reach the parsers' edge cases faster than random bytes.
const TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"",
    ":",
    ",",
    "\n",
    "\r\n",
    "\\",
    "\\u0000",
    "\\ud800",
    "null",
    "true",
    "-",
    "0",
    "-1e308",
    "1e308",
    "1e999",
    "NaN",
    "18446744073709551616",
    "\"\"",
    "{}",
    "[]",
    "```",
    "```exhibit ",
    "```exhibit chart\n",
    "#",
    "## ",
    "{#x}",
    "[x](y)",
    "|",
    "*",
    "`",
    "/",
    "..",
    "  ",
    " *",
    "SHA256 (",
    ") = ",
    "é",
    "e\u{301}",
    "\u{feff}",
    "\t",
    "<",
    ">",
    "&",
    "\"pointer\": \"/",
    "\"y\": {\"min\": -1e308, \"max\": 1e308}",
];

/// One mutation of `text`, kept valid UTF-8 (invalid bytes are tried
/// apart, in [`invalid_utf8`]).
fn mutate(rng: &mut Rng, text: &str) -> String {
    let mut s = text.to_string();
    for _ in 0..=rng.below(3) {
        let at = floor(&s, rng.below(s.len() + 1));
        match rng.below(6) {
            0 => s.insert_str(at, TOKENS[rng.below(TOKENS.len())]),
            1 => {
                let end = floor(&s, (at + 1 + rng.below(16)).min(s.len()));
                s.replace_range(at..end, "");
            }
            2 => {
                let end = floor(&s, (at + 1 + rng.below(64)).min(s.len()));
                let copy = s[at..end].to_string();
                let to = floor(&s, rng.below(s.len() + 1));
                s.insert_str(to, &copy);
            }
            3 => s.truncate(at),
            4 => {
                // Change a digit: numbers are what charts and tables lay out.
                if let Some(i) = s[at..].find(|c: char| c.is_ascii_digit()) {
                    let d = char::from(b'0' + rng.below(10) as u8);
                    s.replace_range(at + i..at + i + 1, &d.to_string());
                }
            }
            _ => {
                let end = floor(&s, (at + 1).min(s.len()));
                let c = char::from(32 + rng.below(95) as u8);
                s.replace_range(at..end, &c.to_string());
            }
        }
    }
    s
}

fn floor(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The sample campaign's files, by relative path.
fn sample() -> (PathBuf, Vec<(String, String)>) {
    let root = repo().join("sample-artifacts");
    let dir = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("campaign.json").is_file())
        .expect("a sample campaign");
    let mut files = Vec::new();
    for e in walkdir::WalkDir::new(&dir).sort_by_file_name() {
        let e = e.unwrap();
        if e.file_type().is_file() {
            let rel = e.path().strip_prefix(&dir).unwrap();
            if let Ok(text) = std::fs::read_to_string(e.path()) {
                files.push((rel.to_string_lossy().into_owned(), text));
            }
        }
    }
    (dir, files)
}

/// What one case came to.
#[derive(Debug, PartialEq)]
enum Outcome {
    Ok,
    /// Exit 2, with a positioned message in the fuzzed file.
    Positioned,
    /// Exit 2 without file:line:col: a failure unless the target allows it.
    Unpositioned(String),
    /// Exit 1 (evidence failed; the mutation made something look private).
    Evidence,
}

/// `within`: the fuzzed file, or the campaign folder when the message may
/// rightly point elsewhere in it (a missing data field is reported at the
/// block that reads it).
fn judge(err: Error, within: &Path) -> Outcome {
    if err.exit_code() == 1 {
        return Outcome::Evidence;
    }
    // The positioned errors in the chain: the error and the causes under
    // its context wrappers.
    let mut inputs: Vec<&InputError> = Vec::new();
    let mut next = Some(&err);
    while let Some(e) = next {
        next = match e {
            Error::Input(i) => {
                inputs.push(i);
                None
            }
            Error::Context { source, .. } => Some(source),
            _ => None,
        };
    }
    let positioned = inputs.iter().any(|e| {
        (e.path.ends_with(within) || e.path.starts_with(within)) && e.line > 0 && e.col > 0
    });
    if positioned {
        Outcome::Positioned
    } else {
        Outcome::Unpositioned(err.describe())
    }
}

/// Run `cases` through `target` on a worker thread, each within
/// [`TIMEOUT`]; a panic or a hang fails the test with the case. Returns
/// how many cases ended in each outcome.
fn fuzz<T: Send + 'static>(
    name: &str,
    cases: Vec<T>,
    target: impl Fn(&T) -> Outcome + Send + 'static,
) -> BTreeMap<&'static str, usize> {
    let (to_worker, jobs) = mpsc::channel::<(usize, T)>();
    let (to_main, results) = mpsc::channel();
    std::thread::spawn(move || {
        for (i, case) in jobs {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| target(&case)));
            if to_main.send((i, r.map_err(|_| ()))).is_err() {
                return;
            }
        }
    });
    let started = Instant::now();
    let mut counts = BTreeMap::new();
    let mut unpositioned = Vec::new();
    let n = cases.len();
    for (i, case) in cases.into_iter().enumerate() {
        to_worker.send((i, case)).unwrap();
        let (j, r) = results
            .recv_timeout(TIMEOUT)
            .unwrap_or_else(|_| panic!("{name}: case {i} did not return within {TIMEOUT:?}"));
        assert_eq!(i, j);
        let outcome = r.unwrap_or_else(|_| panic!("{name}: case {i} panicked"));
        let key = match outcome {
            Outcome::Ok => "ok",
            Outcome::Positioned => "exit 2 at line:col",
            Outcome::Evidence => "exit 1",
            Outcome::Unpositioned(msg) => {
                unpositioned.push((i, msg));
                "exit 2 unpositioned"
            }
        };
        *counts.entry(key).or_insert(0) += 1;
    }
    eprintln!(
        "fuzz {name}: {n} cases in {:.2} s: {counts:?}",
        started.elapsed().as_secs_f64()
    );
    assert!(
        unpositioned.is_empty(),
        "{name}: bad input without file:line:col, e.g. case {}:\n{}",
        unpositioned[0].0,
        unpositioned[0].1
    );
    counts
}

use std::collections::BTreeMap;

/// `n` mutants of each seed, deterministic for `seed`.
fn mutants(seeds: &[String], n: usize, seed: u64) -> Vec<String> {
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    for s in seeds {
        for _ in 0..n {
            out.push(mutate(&mut rng, s));
        }
    }
    out
}

fn seeds_named(files: &[(String, String)], pick: impl Fn(&str) -> bool) -> Vec<String> {
    let seeds: Vec<String> = files
        .iter()
        .filter(|(p, _)| pick(p))
        .map(|(_, t)| t.clone())
        .collect();
    assert!(!seeds.is_empty());
    seeds
}

#[test]
fn campaign_json() {
    let (_, files) = sample();
    let mut seeds = seeds_named(&files, |p| p == "campaign.json");
    seeds.push(read(&repo().join("tests/fixtures/minimal/campaign.json")));
    let dir = scratch("fuzz-campaign");
    let cases = mutants(&seeds, 400, 1);
    fuzz("campaign.json", cases, move |text| {
        std::fs::write(dir.join("campaign.json"), text).unwrap();
        match exhibit::campaign::load(&dir) {
            Ok(_) => Outcome::Ok,
            Err(e) => judge(e, Path::new("campaign.json")),
        }
    });
}

/// Bytes that are not UTF-8 in campaign.json and both manifest forms: a
/// positioned error too (the first bad byte).
#[test]
fn invalid_utf8() {
    let (_, files) = sample();
    let seeds: Vec<(String, Vec<u8>)> = files
        .iter()
        .filter(|(p, _)| p == "campaign.json" || p == "manifest.json")
        .map(|(p, t)| (p.clone(), t.clone().into_bytes()))
        .collect();
    let mut rng = Rng(8);
    let mut cases = Vec::new();
    for (name, bytes) in &seeds {
        for _ in 0..100 {
            let mut b = bytes.clone();
            let at = rng.below(b.len());
            b[at] = [0xff, 0xc3, 0x80, 0xed][rng.below(4)];
            cases.push((name.clone(), b));
        }
    }
    let dir = scratch("fuzz-utf8");
    fuzz("invalid UTF-8", cases, move |(name, bytes)| {
        std::fs::write(dir.join(name), bytes).unwrap();
        let r = if name == "campaign.json" {
            exhibit::campaign::load(&dir).map(|_| ())
        } else {
            let path = dir.join(name);
            exhibit::manifest::load_file(&path, exhibit::manifest::Format::Json).map(|_| ())
        };
        match r {
            Ok(()) => Outcome::Ok,
            Err(e) => judge(e, Path::new(name)),
        }
    });
}

#[test]
fn manifest_json_and_sha256sums() {
    let (dir, files) = sample();
    let seeds = seeds_named(&files, |p| p == "manifest.json");
    let cases = mutants(&seeds, 2000, 2);
    let path = PathBuf::from("manifest.json");
    fuzz(
        "manifest.json",
        cases,
        move |text| match exhibit::manifest::parse_json(&path, text) {
            Ok(_) => Outcome::Ok,
            Err(e) => judge(e, &path),
        },
    );
    // SHA256SUMS written from the same entries, the way `seal` would.
    let m = exhibit::manifest::load(&dir).unwrap();
    let mut sums: String = m
        .entries
        .iter()
        .map(|e| exhibit::manifest::sums_line(&e.sha256, &e.path))
        .collect();
    sums.push_str(&format!(
        "\\{}  we\\\\ird\\nname\nSHA256 (bsd name) = {}\n",
        m.entries[0].sha256, m.entries[0].sha256
    ));
    let cases = mutants(&[sums], 2000, 3);
    let path = PathBuf::from("SHA256SUMS");
    fuzz(
        "SHA256SUMS",
        cases,
        move |text| match exhibit::manifest::parse_sums(&path, text) {
            Ok(_) => Outcome::Ok,
            Err(e) => judge(e, &path),
        },
    );
}

/// Every `exhibit` block of the sample's pages: (kind, body).
fn blocks(files: &[(String, String)]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (_, text) in files.iter().filter(|(p, _)| p.ends_with(".md")) {
        let mut rest = text.as_str();
        while let Some(start) = rest.find("```exhibit ") {
            let after = &rest[start + 11..];
            let (kind, body) = after.split_once('\n').unwrap();
            let end = body.find("\n```").unwrap();
            out.push((kind.trim().to_string(), body[..end].to_string()));
            rest = &body[end..];
        }
    }
    out
}

#[test]
fn block_bodies() {
    let (_, files) = sample();
    let found = blocks(&files);
    let kinds: std::collections::BTreeSet<&str> = found.iter().map(|(k, _)| k.as_str()).collect();
    assert!(kinds.len() >= 4, "{kinds:?}");
    let mut rng = Rng(4);
    let mut cases = Vec::new();
    for (kind, body) in &found {
        for _ in 0..200 {
            cases.push((kind.clone(), mutate(&mut rng, body)));
        }
    }
    // A parse error is positioned by the page around the block; here, in
    // the body, serde's line must be there (its column is 0 at the very
    // start of a line, which the page shows as column 1).
    fuzz(
        "block bodies",
        cases,
        |(kind, body)| match exhibit::blocks::parse(kind, body) {
            Ok(_) | Err(exhibit::blocks::ParseError::Invalid(_)) => Outcome::Ok,
            Err(exhibit::blocks::ParseError::Json(e)) if e.line() > 0 => Outcome::Positioned,
            Err(exhibit::blocks::ParseError::Json(e)) => Outcome::Unpositioned(e.to_string()),
        },
    );
}

/// A copy of the sample campaign with `rel` replaced by `text`, sealed,
/// then built in-process; the outcome of the build.
fn build_mutant(work: &Path, src: &Path, rel: &str, text: &str) -> Outcome {
    let dir = work.join("c");
    let out = work.join("site");
    let _ = std::fs::remove_dir_all(&dir);
    copy_tree(src, &dir);
    std::fs::write(dir.join(rel), text).unwrap();
    if let Err(e) = exhibit::seal::seal(&dir, true) {
        panic!("seal of a mutant failed: {}", e.describe());
    }
    let opts = exhibit::site::BuildOptions {
        root: dir.clone(),
        out,
        theme: None,
        preview: false,
        single_file: false,
        expect: Vec::new(),
        strict: false,
        key: None,
    };
    match exhibit::site::build(&opts) {
        Ok(_) => Outcome::Ok,
        Err(e) => judge(e, &dir),
    }
}

fn build_target(name: &str, pick: impl Fn(&str) -> bool, per_file: usize, seed: u64) {
    let (src, files) = sample();
    let work = scratch(&format!("fuzz-{name}"));
    let mut rng = Rng(seed);
    let mut cases = Vec::new();
    for (rel, text) in files.iter().filter(|(p, _)| pick(p)) {
        for _ in 0..per_file {
            cases.push((rel.clone(), mutate(&mut rng, text)));
        }
    }
    assert!(!cases.is_empty());
    fuzz(name, cases, move |(rel, text)| {
        build_mutant(&work, &src, rel, text)
    });
}

#[test]
fn data_files() {
    build_target(
        "data files",
        |p| p.starts_with("data/") && (p.ends_with(".json") || p.ends_with(".jsonl")),
        12,
        5,
    );
}

#[test]
fn markdown_pages() {
    build_target(
        "Markdown pages",
        |p| p.ends_with(".md") && !p.contains('/'),
        20,
        6,
    );
}

/// The binary itself, under a timeout, on a few mutants of every input
/// kind: no panic message, exit 0, 1 or 2, and exit 2 names file:line:col.
#[test]
fn whole_binary() {
    let (src, files) = sample();
    let mut rng = Rng(7);
    let picks: Vec<&(String, String)> = files
        .iter()
        .filter(|(p, _)| {
            p == "campaign.json"
                || p.starts_with("data/")
                || (p.ends_with(".md") && !p.contains('/'))
        })
        .collect();
    let started = Instant::now();
    let n = 16;
    for i in 0..n {
        let (rel, text) = picks[i % picks.len()];
        let work = scratch("fuzz-binary");
        let dir = work.join("c");
        copy_tree(&src, &dir);
        std::fs::write(dir.join(rel), mutate(&mut rng, text)).unwrap();
        let o = run(exhibit().arg("seal").arg("--update").arg(&dir));
        assert!(o.status.success(), "case {i}: {}", stderr(&o));
        let mut child = exhibit()
            .arg("build")
            .arg(&dir)
            .arg("-o")
            .arg(work.join("site"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let begun = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if begun.elapsed() > TIMEOUT {
                let _ = child.kill();
                panic!("whole binary: case {i} ({rel}) did not return within {TIMEOUT:?}");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        assert!(!err.contains("panicked"), "case {i} ({rel}): {err}");
        match status.code() {
            Some(0) | Some(1) => {}
            Some(2) => {
                let at = format!("{}/", dir.display());
                assert!(
                    err.lines()
                        .any(|l| l.trim_start().starts_with(&format!("--> {at}"))
                            && l.rsplit(':')
                                .take(2)
                                .all(|n| n.parse::<usize>().is_ok_and(|n| n > 0))),
                    "case {i} ({rel}): exit 2 without file:line:col:\n{err}"
                );
            }
            other => panic!("case {i} ({rel}): exit {other:?}\n{err}"),
        }
    }
    eprintln!(
        "fuzz whole binary: {n} builds in {:.2} s",
        started.elapsed().as_secs_f64()
    );
}
