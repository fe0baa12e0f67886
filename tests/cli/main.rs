//! Integration suite: runs the real `exhibit` binary on real folders (the
//! sample campaign, fixture campaigns under tests/fixtures/) copied into
//! CARGO_TARGET_TMPDIR.

mod audit;
mod bad_input;
mod browser;
mod build;
mod charts;
mod claims;
mod digest;
mod encodings;
mod figures;
mod format_doc;
mod formats;
mod fuzz;
mod gate_css;
mod leaks;
mod new_user;
mod pipe;
mod reader;
mod redact;
mod references;
mod scale;
mod script;
mod serve;
mod stream;
mod tamper;
mod trial;
mod uncertainty;
mod unguessable;
mod waits;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
pub use std::sync::atomic::{AtomicUsize, Ordering};

pub fn exhibit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_exhibit"))
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh, empty folder for one test.
pub fn scratch(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "{name}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn copy_tree(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(from).unwrap();
        let dest = to.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

/// Copy fixture `name` into a scratch folder; returns the campaign folder.
pub fn fixture(name: &str) -> PathBuf {
    let dir = scratch(name).join(name);
    copy_tree(&repo().join("tests/fixtures").join(name), &dir);
    dir
}

pub fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("exhibit runs")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn seal(dir: &Path) {
    let o = run(exhibit().arg("seal").arg(dir));
    assert!(o.status.success(), "seal failed: {}", stderr(&o));
}

/// The sample built with `--single-file` into `scratch(name)/site`.
pub fn sample_with_single_file(name: &str) -> PathBuf {
    let out = scratch(name).join("site");
    let o = run(exhibit()
        .arg("build")
        .arg(repo().join("sample-artifacts"))
        .arg("-o")
        .arg(&out)
        .arg("--single-file"));
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

pub fn build(root: &Path, out: &Path) -> Output {
    run(exhibit().arg("build").arg(root).arg("-o").arg(out))
}

/// `exhibit build ROOT -o OUT --theme THEME`.
pub fn build_themed(root: &Path, out: &Path, theme: &Path) -> Output {
    run(exhibit()
        .arg("build")
        .arg(root)
        .arg("-o")
        .arg(out)
        .arg("--theme")
        .arg(theme))
}

/// Every file under `dir` with its contents, for comparing whole trees.
pub fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (rel, std::fs::read(e.path()).unwrap())
        })
        .collect();
    files.sort();
    files
}

pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// The inline SVG charts of a page.
/// `exhibit build DIR -o OUT --expect PIN`.
pub fn build_expecting(dir: &Path, out: &Path, pin: impl AsRef<std::ffi::OsStr>) -> Output {
    run(exhibit()
        .arg("build")
        .arg(dir)
        .arg("-o")
        .arg(out)
        .arg("--expect")
        .arg(pin))
}

/// Each chart's wide drawing (a chart draws a wide and a narrow SVG).
pub fn wide_charts(html: &str) -> Vec<&str> {
    svgs(html)
        .into_iter()
        .filter(|s| s.contains("chart-wide"))
        .collect()
}

pub fn svgs(html: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<svg") {
        let end = rest[start..].find("</svg>").expect("svg closes") + start + 6;
        out.push(&rest[start..end]);
        rest = &rest[end..];
    }
    out
}
