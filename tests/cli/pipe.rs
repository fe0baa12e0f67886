//! A reader that stops early (`exhibit verify SITE | head -1`) ends the run
//! quietly, as ripgrep does: exit 0 and nothing on stderr, not a panic
//! about a broken pipe.

use super::*;
use std::io::{BufRead, BufReader};
use std::process::Stdio;

/// More output than a pipe holds (64 KiB on Linux) plus what the reader
/// buffers: the command is still writing when the reader goes away.
const LONG: usize = 128 * 1024;

/// Run `cmd` with stdout a pipe, read one line, close the pipe, and wait.
fn head_1(cmd: &mut Command) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("exhibit runs");
    let mut first = String::new();
    // The reader is dropped at the end of the statement: the pipe closes.
    BufReader::new(child.stdout.take().expect("piped"))
        .read_line(&mut first)
        .unwrap();
    assert!(first.ends_with('\n'), "one whole line first: {first:?}");
    child.wait_with_output().unwrap()
}

fn quiet(what: &str, o: &Output) {
    assert_eq!(o.status.code(), Some(0), "{what}: {}", stderr(o));
    assert_eq!(stderr(o), "", "{what}: stderr");
}

#[test]
fn verify_of_a_site_into_a_closed_pipe() {
    let dir = fixture("minimal");
    for i in 0..3000 {
        let p = dir.join(format!("artifacts/many/run-{i:04}.log"));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("run {i}\n")).unwrap();
    }
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let whole = run(exhibit().arg("verify").arg(&out));
    assert!(whole.status.success(), "{}", stderr(&whole));
    assert!(whole.stdout.len() > LONG, "{} bytes", whole.stdout.len());

    quiet("verify", &head_1(exhibit().arg("verify").arg(&out)));
    quiet(
        "verify --json",
        &head_1(exhibit().arg("verify").arg("--json").arg(&out)),
    );

    // The verdict outranks the pipe: a failed verification read through
    // `| head -1` still exits 1 (a `set -o pipefail` script must see it).
    let log = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path().join("artifacts/many/run-0007.log"))
        .find(|p| p.is_file())
        .expect("the published log");
    std::fs::write(&log, "tampered\n").unwrap();
    let o = head_1(exhibit().arg("verify").arg(&out));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("verification failed"), "{}", stderr(&o));
}

#[test]
fn scan_json_into_a_closed_pipe_keeps_its_verdict() {
    let dir = scratch("pipe-scan");
    let text: String = (0..3000)
        .map(|i| format!("node {i} at 10.0.{}.{}\n", i / 250, i % 250 + 1))
        .collect();
    std::fs::write(dir.join("hosts.txt"), text).unwrap();
    let whole = run(exhibit().arg("scan").arg("--json").arg(&dir));
    assert_eq!(whole.status.code(), Some(1), "{}", stderr(&whole));
    assert!(whole.stdout.len() > LONG, "{} bytes", whole.stdout.len());

    // Findings outrank the pipe: exit 1 with the one-line verdict, and no
    // word of the broken pipe.
    let o = head_1(exhibit().arg("scan").arg("--json").arg(&dir));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).replace(&dir.display().to_string(), "[DIR]"),
        "error: 3000 private values found in `[DIR]`\n"
    );
}
