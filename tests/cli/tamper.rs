//! Evidence failures exit 1, name every bad file, and publish nothing.

use super::*;
use sha2::Digest;

fn sealed() -> (PathBuf, PathBuf) {
    let dir = fixture("minimal");
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    (dir, out)
}

fn refused(dir: &Path, out: &Path, expect: &[&str]) {
    let before = tree(out);
    let o = build(dir, out);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "stderr:\n{err}");
    for e in expect {
        assert!(err.contains(e), "stderr lacks {e:?}:\n{err}");
    }
    assert_eq!(before, tree(out), "a refused build changed the site");
}

#[test]
fn modified_file() {
    let (dir, out) = sealed();
    let p = dir.join("data/cells.json");
    let mut bytes = std::fs::read(&p).unwrap();
    bytes[10] ^= 1;
    std::fs::write(&p, bytes).unwrap();
    refused(&dir, &out, &["modified", "data/cells.json"]);
}

#[test]
fn missing_and_unlisted_files() {
    let (dir, out) = sealed();
    std::fs::remove_file(dir.join("artifacts/run.log")).unwrap();
    std::fs::write(dir.join("artifacts/extra.log"), "not sealed").unwrap();
    refused(
        &dir,
        &out,
        &[
            "missing",
            "artifacts/run.log",
            "unlisted",
            "artifacts/extra.log",
        ],
    );
}

#[test]
fn symlink_escaping_the_campaign() {
    let (dir, out) = sealed();
    let secret = dir.parent().unwrap().join("secret.txt");
    std::fs::write(&secret, "private").unwrap();
    std::os::unix::fs::symlink(&secret, dir.join("artifacts/link.txt")).unwrap();
    refused(&dir, &out, &["unsafe-path", "artifacts/link.txt"]);
}

#[test]
fn manifest_path_leaving_the_campaign() {
    let (dir, out) = sealed();
    let m = read(&dir.join("manifest.json"))
        .replace("\"artifacts/run.log\"", "\"../minimal/artifacts/run.log\"");
    std::fs::write(dir.join("manifest.json"), m).unwrap();
    refused(
        &dir,
        &out,
        &[
            "unsafe-path",
            "../minimal/artifacts/run.log",
            "unlisted",
            "artifacts/run.log",
        ],
    );
}

#[test]
fn size_wrong_hash_right() {
    let (dir, out) = sealed();
    let mut m: serde_json::Value = serde_json::from_str(&read(&dir.join("manifest.json"))).unwrap();
    for f in m["files"].as_array_mut().unwrap() {
        if f["path"] == "artifacts/run.log" {
            f["bytes"] = 999.into();
        }
    }
    std::fs::write(dir.join("manifest.json"), m.to_string()).unwrap();
    refused(&dir, &out, &["size-mismatch", "artifacts/run.log"]);
}

// Hostile names, symlinks, pins and the whole-site checksum (issue 16).

/// A sealed copy of the minimal fixture with `extra` files added before
/// sealing is attempted; `seal` is expected to refuse them, so they are
/// added to an already sealed campaign.
fn sealed_with(extra: &[&str]) -> PathBuf {
    let dir = fixture("minimal");
    seal(&dir);
    for name in extra {
        std::fs::write(dir.join(name), name.as_bytes()).unwrap();
    }
    dir
}

/// `build`, `verify` and `seal --update` all refuse, exit 1, with `lines`
/// (one `unsafe-path` line per refused name) as the whole report.
fn refused_everywhere(dir: &Path, lines: &[String]) {
    let out = dir.parent().unwrap().join("site");
    let o = build(dir, &out);
    let mut expect = format!(
        "error: refusing to publish: the evidence does not match the manifest\n{}: 6 ok, {} unsafe-path\n",
        dir.display(),
        lines.len()
    );
    for l in lines {
        expect.push_str(&format!("  unsafe-path     {}/{l}\n", dir.display()));
    }
    assert_eq!(stderr(&o), expect);
    assert_eq!(o.status.code(), Some(1));
    assert!(!out.exists(), "a refused build wrote the site");

    let o = run(exhibit().arg("verify").arg(dir));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    for l in lines {
        let (name, detail) = l.split_once(" (").unwrap();
        let row = stdout(&o)
            .lines()
            .find(|r| r.starts_with("  unsafe-path") && r.contains(&format!(" {name} ")))
            .unwrap_or_else(|| panic!("no row for {name}:\n{}", stdout(&o)))
            .to_string();
        assert!(row.ends_with(&format!("({detail}")), "{row}");
    }

    let o = run(exhibit().arg("seal").arg("--update").arg(dir));
    let mut expect = String::from("error: cannot seal: some files cannot be sealed\n");
    for l in lines {
        expect.push_str(&format!("  unsafe-path     {}/{l}\n", dir.display()));
    }
    assert_eq!(stderr(&o), expect);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn names_differing_only_in_case() {
    let dir = sealed_with(&["artifacts/Report.html", "artifacts/report.html"]);
    refused_everywhere(
        &dir,
        &[
            "artifacts/Report.html (`artifacts/report.html` differs only in case)".into(),
            "artifacts/report.html (`artifacts/Report.html` differs only in case)".into(),
        ],
    );
}

#[test]
fn names_differing_only_in_unicode_normalisation() {
    let (nfc, nfd) = (
        "artifacts/r\u{e9}sum\u{e9}.log",
        "artifacts/re\u{301}sume\u{301}.log",
    );
    let dir = sealed_with(&[nfc, nfd]);
    let (c, d) = (
        "`artifacts/r\\u{e9}sum\\u{e9}.log`",
        "`artifacts/re\\u{301}sume\\u{301}.log`",
    );
    // Sorted by bytes: the NFD form (`e` + U+0301) comes first.
    refused_everywhere(
        &dir,
        &[
            format!("{nfd} ({d} and {c} differ only in Unicode normalisation)"),
            format!("{nfc} ({c} and {d} differ only in Unicode normalisation)"),
        ],
    );
}

#[test]
fn windows_reserved_names_and_characters() {
    let device = "is a reserved device name on Windows (whatever its extension)";
    let cases: &[(&str, String)] = &[
        ("CON", format!("`CON` {device}")),
        ("artifacts/nul.txt", format!("`nul.txt` {device}")),
        ("COM1", format!("`COM1` {device}")),
        (
            "a:b",
            "`a:b` holds `:`, which Windows does not allow in a file name".into(),
        ),
        (
            "artifacts/x.",
            "`x.` ends with a dot, which Windows drops from a file name".into(),
        ),
        (
            "artifacts/x ",
            "`x ` ends with a space, which Windows drops from a file name".into(),
        ),
        (
            "q?",
            "`q?` holds `?`, which Windows does not allow in a file name".into(),
        ),
        (
            "<a>",
            "`<a>` holds `<`, which Windows does not allow in a file name".into(),
        ),
        (
            "p|q",
            "`p|q` holds `|`, which Windows does not allow in a file name".into(),
        ),
        (
            "s*",
            "`s*` holds `*`, which Windows does not allow in a file name".into(),
        ),
        (
            "\"q\"",
            "`\"q\"` holds `\"`, which Windows does not allow in a file name".into(),
        ),
    ];
    for (name, why) in cases {
        let dir = sealed_with(&[name]);
        refused_everywhere(&dir, &[format!("{name} ({why})")]);
    }
    // A control character is shown escaped, never raw.
    let dir = sealed_with(&["a\u{1b}[2Jb"]);
    refused_everywhere(
        &dir,
        &["a\\u{1b}[2Jb (`a\\u{1b}[2Jb` holds the control character U+001B)".into()],
    );
}

#[test]
fn in_root_symlink_refused_unless_campaign_json_lists_it() {
    let dir = sealed_with(&[]);
    std::os::unix::fs::symlink("run.log", dir.join("artifacts/link.log")).unwrap();
    refused_everywhere(
        &dir,
        &["artifacts/link.log (symlink inside the folder; list it in campaign.json's `symlinks` to publish a copy)".into()],
    );
    // Allowed by path: sealed and published as a regular copy.
    let meta = read(&dir.join("campaign.json")).replacen(
        "\"pages\"",
        "\"symlinks\": [\"artifacts/link.log\"],\n  \"pages\"",
        1,
    );
    std::fs::write(dir.join("campaign.json"), meta).unwrap();
    let o = run(exhibit().arg("seal").arg("--update").arg(&dir));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let published = out.join("minimal/artifacts/link.log");
    assert!(std::fs::symlink_metadata(&published)
        .unwrap()
        .file_type()
        .is_file());
    assert_eq!(read(&published), read(&dir.join("artifacts/run.log")));
}

fn sha256_of(path: &Path) -> String {
    hex::encode(sha2::Sha256::digest(std::fs::read(path).unwrap()))
}

#[test]
fn rewritten_manifest_caught_by_expect() {
    let dir = sealed_with(&[]);
    let pin = sha256_of(&dir.join("manifest.json"));
    let o = run(exhibit().arg("verify").arg(&dir).arg("--expect").arg(&pin));
    assert!(o.status.success(), "{}", stderr(&o));
    // The artifact and its manifest entry rewritten together.
    std::fs::write(dir.join("artifacts/run.log"), "a different run\n").unwrap();
    let o = run(exhibit().arg("seal").arg("--update").arg(&dir));
    assert!(o.status.success(), "{}", stderr(&o));
    let now = sha256_of(&dir.join("manifest.json"));
    let why = format!("manifest hash {now} is not the pinned {pin}");

    let o = run(exhibit().arg("verify").arg(&dir).arg("--expect").arg(&pin));
    assert_eq!(stderr(&o), "error: verification failed: 6 ok, 1 modified\n");
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("  modified        manifest.json"));
    assert!(stdout(&o).contains(&format!("({why})\n")), "{}", stdout(&o));

    let out = dir.parent().unwrap().join("site");
    for pin_arg in [pin.clone(), format!("minimal={pin}")] {
        let o = build_expecting(&dir, &out, &pin_arg);
        assert_eq!(
            stderr(&o),
            format!(
                "error: refusing to publish: the evidence does not match the manifest\n  modified        {}/manifest.json ({why})\n",
                dir.display()
            )
        );
        assert_eq!(o.status.code(), Some(1));
        assert!(!out.exists());
    }
    // A pin naming no campaign here checks nothing: bad usage.
    let o = build_expecting(&dir, &out, format!("other={now}"));
    assert_eq!(
        stderr(&o),
        "error: --expect names the campaign `other`, which is not here (campaigns: minimal)\n"
    );
    assert_eq!(o.status.code(), Some(2));
    // The honest pin builds, and verifies the site.
    let o = build_expecting(&dir, &out, &now);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(exhibit().arg("verify").arg(&out).arg("--expect").arg(&now));
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(exhibit().arg("verify").arg(&out).arg("--expect").arg(&pin));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

/// A built site, and `verify` of it must fail with `summary` (one part
/// per folder checked) and show `row` after `tamper`.
fn site_tampered(tamper: impl Fn(&Path), summary: &str, row: &str) {
    let (_, out) = sealed();
    let o = run(exhibit().arg("verify").arg(&out));
    assert!(o.status.success(), "{}", stderr(&o));
    tamper(&out);
    let o = run(exhibit().arg("verify").arg(&out));
    assert_eq!(
        stderr(&o),
        format!("error: verification failed: {summary}\n")
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains(row), "{}", stdout(&o));
}

fn stylesheet(out: &Path) -> PathBuf {
    std::fs::read_dir(out.join("assets"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "css"))
        .unwrap()
}

#[test]
fn site_stylesheet_modified() {
    site_tampered(
        |out| {
            let css = stylesheet(out);
            let text = read(&css) + "body{background:url(//evil.example/x)}\n";
            std::fs::write(css, text).unwrap();
        },
        "4 ok, 1 modified; 16 ok",
        "  modified        assets/style.",
    );
}

#[test]
fn site_index_modified_or_missing() {
    site_tampered(
        |out| std::fs::write(out.join("index.html"), "<h1>moved</h1>").unwrap(),
        "4 ok, 1 modified; 16 ok",
        "  modified        index.html",
    );
    site_tampered(
        |out| std::fs::remove_file(out.join("index.html")).unwrap(),
        "4 ok, 1 missing; 16 ok",
        "  missing         index.html",
    );
}

#[test]
fn site_extra_root_file() {
    site_tampered(
        |out| std::fs::write(out.join("login.html"), "<form>").unwrap(),
        "5 ok, 1 unlisted; 16 ok",
        "  unlisted        login.html",
    );
    // A whole extra campaign folder, consistent in itself, is still extra.
    site_tampered(
        |out| copy_tree(&out.join("minimal"), &out.join("other")),
        "5 ok, 17 unlisted; 16 ok; 16 ok",
        "  unlisted        other/audit.json",
    );
}

#[test]
fn site_checksum_works_with_sha256sum() {
    let (_, out) = sealed();
    let listed: Vec<String> = read(&out.join("SHA256SUMS"))
        .lines()
        .map(|l| l.split_once("  ").unwrap().1.to_string())
        .collect();
    assert_eq!(listed[0], ".exhibit-site");
    assert!(listed.contains(&"index.html".to_string()));
    assert!(listed.contains(&"minimal/SHA256SUMS".to_string()));
    if let Ok(o) = std::process::Command::new("sha256sum")
        .arg("-c")
        .arg("--quiet")
        .arg("SHA256SUMS")
        .current_dir(&out)
        .output()
    {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    }
}

#[test]
fn failed_build_leaves_no_staging_folder() {
    let (dir, out) = sealed();
    let staging = out.parent().unwrap().join(".site.exhibit-staging");
    // A file where the build moves the old site aside: the swap fails
    // after everything was staged.
    let old = out.parent().unwrap().join(".site.exhibit-old");
    std::fs::write(&old, "in the way").unwrap();
    let before = tree(&out);
    let o = build(&dir, &out);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        !staging.exists(),
        "the failed build left {}",
        staging.display()
    );
    assert_eq!(before, tree(&out));
    // A staging folder an interrupted build left is removed by the next.
    std::fs::remove_file(&old).unwrap();
    std::fs::create_dir_all(staging.join("minimal")).unwrap();
    std::fs::write(staging.join("minimal/stale.html"), "stale").unwrap();
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!staging.exists());
    assert!(!out.join("minimal/stale.html").exists());
}

#[test]
fn campaign_file_differing_from_a_generated_one_only_in_case() {
    let dir = fixture("minimal");
    std::fs::write(dir.join("Audit.json"), "{}").unwrap();
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert_eq!(
        stderr(&o),
        format!(
            "error: `Audit.json` would collide with another file of the published campaign; rename this file\n  --> {}\n",
            dir.join("Audit.json").display()
        )
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(!out.exists());
}

/// Bytes that differ from file to file and from chunk to chunk, so a file
/// hashed with another's leftovers in the buffer gets the wrong digest.
fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(6364136223846793005) | 1;
    (0..len)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 56) as u8
        })
        .collect()
}

/// `exhibit verify` on a folder of many files, some several read buffers
/// long: with one buffer reused from file to file on each thread, every
/// file is still hashed in full and alone. A change in the last byte of a
/// large file, and one in a small file hashed after large ones, are each
/// caught, and the report does not depend on the thread count.
#[test]
fn large_verify_reports_a_modified_file_among_many() {
    let dir = scratch("large-verify");
    let mut sums = String::new();
    let mut names = Vec::new();
    for i in 0..400u64 {
        // Every 50th file is a little over four 256 KiB reads.
        let len = if i % 50 == 7 {
            (1 << 20) + 3
        } else {
            1 + (i as usize * 97) % 9000
        };
        let name = format!("d{}/f{i:03}.bin", i % 4);
        let bytes = pattern(i, len);
        std::fs::create_dir_all(dir.join(&name).parent().unwrap()).unwrap();
        std::fs::write(dir.join(&name), &bytes).unwrap();
        sums.push_str(&format!(
            "{}  {name}\n",
            hex::encode(sha2::Sha256::digest(&bytes))
        ));
        names.push(name);
    }
    std::fs::write(dir.join("SHA256SUMS"), sums).unwrap();
    let verify = |threads: &str| {
        run(exhibit()
            .arg("verify")
            .arg(&dir)
            .env("RAYON_NUM_THREADS", threads))
    };
    let o = verify("2");
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("400 ok\n"), "{}", stdout(&o));

    let (big, small) = (dir.join(&names[357]), dir.join(&names[399]));
    for (path, at) in [(&big, None), (&small, Some(0))] {
        let mut bytes = std::fs::read(path).unwrap();
        let i = at.unwrap_or(bytes.len() - 1);
        bytes[i] ^= 0x80;
        std::fs::write(path, bytes).unwrap();
    }
    let (one, two) = (verify("1"), verify("2"));
    assert_eq!(stdout(&one), stdout(&two), "the report depends on threads");
    assert_eq!(two.status.code(), Some(1), "{}", stderr(&two));
    let text = stdout(&two);
    assert!(text.contains("398 ok, 2 modified\n"), "{text}");
    let modified: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("modified"))
        .collect();
    assert_eq!(modified.len(), 2, "{text}");
    assert!(modified[0].contains(&names[357]), "{text}");
    assert!(modified[1].contains(&names[399]), "{text}");
}
