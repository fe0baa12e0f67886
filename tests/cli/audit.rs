//! `exhibit verify` and `exhibit seal`: one test per tamper and bad-manifest
//! case, each checking the verdict the report gives the file, and the
//! coreutils manifest formats.

use super::*;
use serde_json::Value;

/// A sealed copy of the minimal fixture.
fn sealed() -> PathBuf {
    let dir = fixture("minimal");
    seal(&dir);
    dir
}

fn verify_json(dir: &Path) -> (Option<i32>, Value, String) {
    let o = run(exhibit().arg("verify").arg("--json").arg(dir));
    let v = serde_json::from_str(&stdout(&o)).unwrap_or(Value::Null);
    (o.status.code(), v, stderr(&o))
}

/// The verdict (and detail) of `path` in a verify report.
fn verdict(report: &Value, path: &str) -> (String, String) {
    let files = report["folders"][0]["files"].as_array().expect("files");
    let f = files
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("{path} not in report: {report:#}"));
    (
        f["verdict"].as_str().unwrap().to_string(),
        f["detail"].as_str().unwrap_or("").to_string(),
    )
}

fn expect(dir: &Path, cases: &[(&str, &str)]) -> Value {
    let (code, report, err) = verify_json(dir);
    assert_eq!(code, Some(1), "exit code; stderr: {err}");
    for (path, want) in cases {
        assert_eq!(verdict(&report, path).0, *want, "{path}");
    }
    // The human table names them too.
    let o = run(exhibit().arg("verify").arg(dir));
    let text = stdout(&o);
    for (path, want) in cases {
        assert!(
            text.lines().any(|l| l.contains(want) && l.contains(path)),
            "{path} {want} not in:\n{text}"
        );
    }
    report
}

fn edit_manifest(dir: &Path, f: impl FnOnce(&mut Vec<Value>)) {
    let p = dir.join("manifest.json");
    let mut m: Value = serde_json::from_str(&read(&p)).unwrap();
    f(m["files"].as_array_mut().unwrap());
    std::fs::write(p, serde_json::to_string_pretty(&m).unwrap()).unwrap();
}

#[test]
fn sample_verifies_clean() {
    let o = run(exhibit()
        .arg("verify")
        .arg(repo().join("sample-artifacts/glm53-flash-linux-vs-wsl")));
    assert!(o.status.success(), "{}", stdout(&o));
    assert!(
        stdout(&o).lines().last().unwrap().ends_with(" ok"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn summary_line_counts_verdicts() {
    let dir = sealed();
    std::fs::write(dir.join("artifacts/extra.log"), "x").unwrap();
    let o = run(exhibit().arg("verify").arg(&dir));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("\n6 ok, 1 unlisted\n"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn one_flipped_byte() {
    let dir = sealed();
    let p = dir.join("data/cells.json");
    let mut b = std::fs::read(&p).unwrap();
    b[3] ^= 0x20;
    std::fs::write(&p, b).unwrap();
    expect(&dir, &[("data/cells.json", "modified")]);
}

#[test]
fn truncated_and_appended() {
    let dir = sealed();
    let p = dir.join("data/cells.json");
    let b = std::fs::read(&p).unwrap();
    std::fs::write(&p, &b[..b.len() - 1]).unwrap();
    let q = dir.join("artifacts/run.log");
    let mut c = std::fs::read(&q).unwrap();
    c.push(b'\n');
    std::fs::write(&q, c).unwrap();
    expect(
        &dir,
        &[
            ("data/cells.json", "modified"),
            ("artifacts/run.log", "modified"),
        ],
    );
}

#[test]
fn missing_file() {
    let dir = sealed();
    std::fs::remove_file(dir.join("notes.md")).unwrap();
    expect(&dir, &[("notes.md", "missing")]);
}

#[test]
fn unlisted_extra_file() {
    let dir = sealed();
    std::fs::write(dir.join("data/extra.json"), "{}").unwrap();
    expect(&dir, &[("data/extra.json", "unlisted")]);
}

#[test]
fn renamed_file() {
    let dir = sealed();
    std::fs::rename(
        dir.join("artifacts/run.log"),
        dir.join("artifacts/run2.log"),
    )
    .unwrap();
    let r = expect(
        &dir,
        &[
            ("artifacts/run.log", "missing"),
            ("artifacts/run2.log", "unlisted"),
        ],
    );
    assert!(verdict(&r, "artifacts/run2.log")
        .1
        .contains("same content as missing `artifacts/run.log`"));
}

#[test]
fn path_case_changed() {
    let dir = sealed();
    std::fs::rename(dir.join("notes.md"), dir.join("Notes.md")).unwrap();
    let r = expect(&dir, &[("notes.md", "missing"), ("Notes.md", "unlisted")]);
    assert!(verdict(&r, "notes.md").1.contains("differs only in case"));
}

#[test]
fn duplicate_entries_that_disagree() {
    let dir = sealed();
    edit_manifest(&dir, |files| {
        let mut dup = files
            .iter()
            .find(|f| f["path"] == "notes.md")
            .unwrap()
            .clone();
        dup["sha256"] = Value::String("0".repeat(64));
        files.push(dup);
    });
    let r = expect(&dir, &[("notes.md", "duplicate-entry")]);
    assert!(verdict(&r, "notes.md").1.contains("different hashes"));
}

#[test]
fn absolute_path_and_traversal() {
    let dir = sealed();
    edit_manifest(&dir, |files| {
        for f in files.iter_mut() {
            if f["path"] == "notes.md" {
                f["path"] = Value::String("/etc/passwd".into());
            }
            if f["path"] == "artifacts/run.log" {
                f["path"] = Value::String("artifacts/../../minimal/artifacts/run.log".into());
            }
        }
    });
    expect(
        &dir,
        &[
            ("/etc/passwd", "unsafe-path"),
            ("artifacts/../../minimal/artifacts/run.log", "unsafe-path"),
            ("notes.md", "unlisted"),
        ],
    );
}

#[test]
fn symlink_pointing_outside() {
    let dir = sealed();
    let outside = dir.parent().unwrap().join("outside.txt");
    std::fs::write(&outside, "elsewhere").unwrap();
    std::fs::remove_file(dir.join("artifacts/run.log")).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("artifacts/run.log")).unwrap();
    expect(&dir, &[("artifacts/run.log", "unsafe-path")]);
}

#[test]
fn symlink_inside_is_followed() {
    let dir = fixture("minimal");
    std::os::unix::fs::symlink("run.log", dir.join("artifacts/alias.log")).unwrap();
    // Only a symlink campaign.json lets through (see tamper.rs for the rest).
    let meta = read(&dir.join("campaign.json")).replacen(
        "\"pages\"",
        "\"symlinks\": [\"artifacts/alias.log\"],\n  \"pages\"",
        1,
    );
    std::fs::write(dir.join("campaign.json"), meta).unwrap();
    seal(&dir);
    let (code, report, _) = verify_json(&dir);
    assert_eq!(code, Some(0));
    assert_eq!(verdict(&report, "artifacts/alias.log").0, "ok");
}

#[test]
fn directory_where_a_file_is_listed() {
    let dir = sealed();
    std::fs::remove_file(dir.join("artifacts/run.log")).unwrap();
    std::fs::create_dir(dir.join("artifacts/run.log")).unwrap();
    let r = expect(&dir, &[("artifacts/run.log", "missing")]);
    assert!(verdict(&r, "artifacts/run.log").1.contains("folder"));
}

#[test]
fn hash_of_wrong_length_or_not_hex() {
    for bad in ["abc123", &"g".repeat(64)] {
        let dir = sealed();
        edit_manifest(&dir, |files| {
            files[0]["sha256"] = Value::String(bad.to_string())
        });
        let (code, _, err) = verify_json(&dir);
        assert_eq!(code, Some(2), "{bad}: {err}");
        assert!(
            err.contains("manifest.json:") && err.contains("sha256"),
            "{err}"
        );
    }
}

#[test]
fn empty_manifest_accepts_nothing() {
    let dir = sealed();
    std::fs::write(dir.join("manifest.json"), r#"{"files": []}"#).unwrap();
    let (code, report, _) = verify_json(&dir);
    assert_eq!(code, Some(1));
    assert_eq!(report["folders"][0]["counts"]["unlisted"], 6);
    assert_eq!(report["folders"][0]["counts"]["ok"], 0);
}

#[test]
fn manifest_listing_itself() {
    let dir = sealed();
    edit_manifest(&dir, |files| {
        files.push(
            serde_json::json!({"path": "manifest.json", "sha256": "0".repeat(64), "bytes": 1}),
        )
    });
    let r = expect(&dir, &[("manifest.json", "unsafe-path")]);
    assert!(verdict(&r, "manifest.json").1.contains("itself"));
}

#[test]
fn size_field_wrong_hash_right() {
    let dir = sealed();
    edit_manifest(&dir, |files| files[0]["bytes"] = 1.into());
    let (code, report, _) = verify_json(&dir);
    assert_eq!(code, Some(1));
    let first = report["folders"][0]["files"][0]["verdict"].clone();
    assert_eq!(first, "size-mismatch");
}

#[test]
fn non_utf8_file_name() {
    use std::os::unix::ffi::OsStrExt;
    let dir = sealed();
    let name = std::ffi::OsStr::from_bytes(b"artifacts/caf\xe9.log");
    std::fs::write(dir.join(name), "latin-1 name").unwrap();
    let (code, report, _) = verify_json(&dir);
    assert_eq!(code, Some(1));
    let files = report["folders"][0]["files"].as_array().unwrap();
    let f = files
        .iter()
        .find(|f| f["path"].as_str().unwrap().starts_with("artifacts/caf"))
        .unwrap();
    assert_eq!(f["verdict"], "unlisted");
    assert!(f["detail"].as_str().unwrap().contains("UTF-8"));
}

#[test]
fn unreadable_file() {
    // Root reads anything, so the check runs as `nobody` via setpriv.
    let dir = sealed();
    let mut p = dir.clone();
    while let Some(parent) = p.parent() {
        let _ = std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755));
        if parent == Path::new(env!("CARGO_TARGET_TMPDIR")) {
            break;
        }
        p = parent.to_path_buf();
    }
    for e in walkdir::WalkDir::new(&dir) {
        let e = e.unwrap();
        let mode = if e.file_type().is_dir() { 0o755 } else { 0o644 };
        std::fs::set_permissions(e.path(), std::os::unix::fs::PermissionsExt::from_mode(mode))
            .unwrap();
    }
    std::fs::set_permissions(
        dir.join("notes.md"),
        std::os::unix::fs::PermissionsExt::from_mode(0o000),
    )
    .unwrap();
    let o = run(Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_exhibit"))
        .args(["verify", "--json"])
        .arg(&dir));
    if stderr(&o).contains("setpriv:") {
        panic!("setpriv failed: {}", stderr(&o));
    }
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let (v, d) = verdict(&report, "notes.md");
    assert_eq!(v, "unreadable");
    assert!(d.contains("permission denied"), "{d}");
}

#[test]
fn file_changed_while_being_hashed() {
    let dir = sealed();
    let big = dir.join("artifacts/growing.bin");
    std::fs::write(&big, vec![7u8; 64 << 20]).unwrap();
    seal_update(&dir);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (stop, big) = (stop.clone(), big.clone());
        std::thread::spawn(move || {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new().append(true).open(&big).unwrap();
            while !stop.load(Ordering::SeqCst) {
                f.write_all(b"x").unwrap();
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
        })
    };
    let (code, report, _) = verify_json(&dir);
    stop.store(true, Ordering::SeqCst);
    writer.join().unwrap();
    assert_eq!(code, Some(1));
    let (v, _) = verdict(&report, "artifacts/growing.bin");
    assert!(v == "unreadable" || v == "modified", "{v}");
    assert_ne!(v, "ok");
}

fn seal_update(dir: &Path) {
    let o = run(exhibit().arg("seal").arg("--update").arg(dir));
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn coreutils_formats_are_accepted() {
    let dir = fixture("minimal");
    std::fs::write(dir.join("artifacts/we\\ird.log"), "backslash name").unwrap();
    std::fs::write(dir.join("artifacts/new\nline.log"), "newline name").unwrap();
    std::fs::write(dir.join("artifacts/sp ace.log"), "space name").unwrap();
    // Text mode, escaped names, from the real sha256sum.
    let files: Vec<String> = tree(&dir).into_iter().map(|(p, _)| p).collect();
    let o = run(Command::new("sha256sum").args(&files).current_dir(&dir));
    assert!(o.status.success());
    let text = stdout(&o);
    assert!(text.contains("\\"), "coreutils escaped the odd names");
    let variants = [
        text.clone(),
        text.replace("  ", " *"),   // binary markers
        text.replace('\n', "\r\n"), // CRLF
        format!("\u{feff}{text}"),  // BOM
        text.lines().map(|l| upper_hash(l) + "\n").collect(), // upper-case hex
    ];
    // Every variant parses; the two names coreutils had to escape are
    // then refused as names (a `\\` and a newline mean something else on
    // Windows), and only they.
    let refused = |report: &Value| {
        for (name, why) in [
            ("artifacts/we\\ird.log", "Windows does not allow"),
            ("artifacts/new\nline.log", "control character"),
        ] {
            let (verdict, detail) = verdict(report, name);
            assert_eq!(verdict, "unsafe-path", "{name}");
            assert!(detail.contains(why), "{name}: {detail}");
        }
        assert_eq!(
            report["folders"][0]["counts"]["unsafe-path"], 2,
            "{report:#}"
        );
        assert_eq!(report["folders"][0]["counts"]["ok"], 7, "{report:#}");
    };
    for (i, v) in variants.iter().enumerate() {
        std::fs::write(dir.join("SHA256SUMS"), v).unwrap();
        let (code, report, err) = verify_json(&dir);
        assert_eq!(code, Some(1), "variant {i}: {err} {report:#}");
        refused(&report);
    }
    // BSD tags from the real sha256sum --tag.
    let o = run(Command::new("sha256sum")
        .arg("--tag")
        .args(&files)
        .current_dir(&dir));
    std::fs::write(dir.join("SHA256SUMS"), stdout(&o)).unwrap();
    let (code, report, err) = verify_json(&dir);
    assert_eq!(code, Some(1), "BSD tags: {err}");
    refused(&report);
    // And coreutils agrees with what exhibit accepted.
    let o = run(Command::new("sha256sum")
        .args(["-c", "--quiet", "SHA256SUMS"])
        .current_dir(&dir));
    assert!(o.status.success(), "{}", stderr(&o));
}

fn upper_hash(line: &str) -> String {
    let (pre, rest) = if let Some(r) = line.strip_prefix('\\') {
        ("\\", r)
    } else {
        ("", line)
    };
    format!("{pre}{}{}", rest[..64].to_ascii_uppercase(), &rest[64..])
}

#[test]
fn malformed_sums_line_is_named() {
    let dir = fixture("minimal");
    std::fs::write(
        dir.join("SHA256SUMS"),
        format!("{}  campaign.json\nnot a line\n", "a".repeat(64)),
    )
    .unwrap();
    let (code, _, err) = verify_json(&dir);
    assert_eq!(code, Some(2));
    assert!(err.contains("SHA256SUMS:2:1"), "{err}");
}

#[test]
fn no_manifest_is_bad_input() {
    let dir = fixture("minimal");
    let (code, _, err) = verify_json(&dir);
    assert_eq!(code, Some(2));
    assert!(err.contains("nothing to verify against"), "{err}");
}

#[test]
fn seal_is_sorted_deterministic_and_diffs() {
    let dir = fixture("minimal");
    seal(&dir);
    let first = read(&dir.join("manifest.json"));
    let m: Value = serde_json::from_str(&first).unwrap();
    let paths: Vec<&str> = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(paths, sorted);
    assert!(!paths.contains(&"manifest.json"));
    // Unchanged: up to date, same bytes.
    let o = run(exhibit().arg("seal").arg(&dir));
    assert!(o.status.success() && stdout(&o).contains("up to date"));
    assert_eq!(read(&dir.join("manifest.json")), first);
    // Changed: shown, not written, exit 1.
    std::fs::write(dir.join("artifacts/new.log"), "new").unwrap();
    std::fs::remove_file(dir.join("notes.md")).unwrap();
    std::fs::write(dir.join("data/cells.json"), "{\"cells\": []}").unwrap();
    let o = run(exhibit().arg("seal").arg(&dir));
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    for want in [
        "added        artifacts/new.log",
        "removed      notes.md",
        "modified     data/cells.json",
        "--update",
    ] {
        assert!(err.contains(want), "{want} not in {err}");
    }
    assert_eq!(read(&dir.join("manifest.json")), first);
    // --update rewrites.
    seal_update(&dir);
    let (code, _, _) = verify_json(&dir);
    assert_eq!(code, Some(0));
}

#[test]
fn seal_refuses_a_symlink_out_of_the_campaign() {
    let dir = fixture("minimal");
    let outside = dir.parent().unwrap().join("outside.txt");
    std::fs::write(&outside, "elsewhere").unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("artifacts/out.txt")).unwrap();
    let o = run(exhibit().arg("seal").arg(&dir));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("unsafe-path") && stderr(&o).contains("artifacts/out.txt"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.join("manifest.json").exists(), "nothing sealed");
}

#[test]
fn seal_refuses_a_built_site_inside() {
    let dir = fixture("minimal");
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    assert!(build(&dir, &out).status.success());
    std::fs::rename(&out, dir.join("site")).unwrap();
    let o = run(exhibit().arg("seal").arg("--update").arg(&dir));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("is a site built by exhibit"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn published_site_is_audited_through_its_sha256sums() {
    let dir = sealed();
    let out = dir.parent().unwrap().join("site");
    assert!(build(&dir, &out).status.success());
    let (code, report, _) = verify_json(&out.join("minimal"));
    assert_eq!(code, Some(0));
    assert_eq!(report["folders"][0]["manifest"], "SHA256SUMS");
    // The whole site folder works too.
    let (code, _, _) = verify_json(&out);
    assert_eq!(code, Some(0));
    // A published file dropped together with its SHA256SUMS line is caught
    // through audit.json.
    let sums = read(&out.join("minimal/SHA256SUMS"));
    let kept: String = sums
        .lines()
        .filter(|l| !l.ends_with("  notes.md"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(out.join("minimal/SHA256SUMS"), kept).unwrap();
    std::fs::remove_file(out.join("minimal/notes.md")).unwrap();
    let (code, report, _) = verify_json(&out.join("minimal"));
    assert_eq!(code, Some(1));
    assert_eq!(verdict(&report, "notes.md").0, "missing");
    std::fs::write(out.join("minimal/SHA256SUMS"), &sums).unwrap();
    std::fs::copy(dir.join("notes.md"), out.join("minimal/notes.md")).unwrap();
    // Tampering with a published copy is caught.
    std::fs::write(out.join("minimal/data/cells.json"), "{}").unwrap();
    let (code, report, _) = verify_json(&out.join("minimal"));
    assert_eq!(code, Some(1));
    assert_eq!(verdict(&report, "data/cells.json").0, "modified");
}

#[test]
fn progress_bar_only_on_a_terminal_for_large_work() {
    let dir = sealed();
    let big = std::fs::File::create(dir.join("artifacts/big.bin")).unwrap();
    big.set_len(300 << 20).unwrap(); // sparse: large, cheap to make
    seal_update(&dir);
    // Piped stderr: quiet.
    let o = run(exhibit().arg("verify").arg(&dir));
    assert!(o.status.success());
    assert_eq!(
        stderr(&o),
        "",
        "no progress output when stderr is not a terminal"
    );
    // On a terminal (util-linux `script` gives one): a progress bar.
    let cmd = format!("{} verify {}", env!("CARGO_BIN_EXE_exhibit"), dir.display());
    let o = run(Command::new("script").args(["-qec", &cmd, "/dev/null"]));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("hashing"),
        "no progress bar on a terminal:\n{}",
        stdout(&o)
    );
}

/// audit.json keeps each record of a list on a line of its own, and the
/// document reads as the same JSON a pretty printer would have written.
#[test]
fn audit_json_lists_one_record_a_line() {
    let out = scratch("audit-record-lines").join("site");
    let o = build(&repo().join("sample-artifacts"), &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = read(&out.join("glm53-flash-linux-vs-wsl/audit.json"));
    let doc: Value = serde_json::from_str(&text).expect("audit.json parses");
    let again: Value = serde_json::from_str(&serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    assert_eq!(doc, again);
    for list in ["files", "blocks", "ledger", "checks", "figures"] {
        let records = doc[list].as_array().expect(list);
        assert!(!records.is_empty(), "{list} is empty in the sample");
        // Each record is one line, indented under its list, that parses
        // on its own as the record.
        let start = text.find(&format!("\n  \"{list}\": [\n")).expect(list);
        let lines: Vec<&str> = text[start..].lines().skip(2).take(records.len()).collect();
        for (line, record) in lines.iter().zip(records) {
            let one = line.strip_prefix("    ").expect("indented record");
            let one: Value = serde_json::from_str(one.trim_end_matches(',')).expect(line);
            assert_eq!(&one, record);
        }
    }
    assert!(
        text.ends_with("\n}\n"),
        "ends with the closing brace and a newline"
    );
}
