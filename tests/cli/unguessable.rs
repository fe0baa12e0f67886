//! Redaction that cannot be undone: nothing published is a function of a
//! redacted file's original bytes alone (no original hash or size in any
//! channel), the keyed commitment an auditor checks instead, file names
//! read as paths, and messages that never print a value.

use super::*;
use sha2::{Digest, Sha256};

const KEY: &str = "a publisher key of more than sixteen bytes\n";

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A campaign whose environment log holds one private address: the
/// brute-force case (hash every 10.x.x.x with the redacted copy beside it).
fn one_address() -> PathBuf {
    let dir = scratch("guess").join("guess");
    std::fs::create_dir_all(dir.join("artifacts")).unwrap();
    std::fs::write(
        dir.join("campaign.json"),
        r#"{"id": "guess", "title": "One address", "date": "2026-12-01", "state": "done",
            "scope": "one log", "decision": "none",
            "pages": [{"file": "index.md", "title": "Main"}]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("index.md"),
        "# One address\n\nThe run's [environment](artifacts/env.log).\n\n```exhibit manifest\n{}\n```\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("artifacts/env.log"),
        "compressor: zstd -19\nserver: 10.20.30.40:9000\nthreads: 16\n",
    )
    .unwrap();
    seal(&dir);
    dir
}

/// The row of `path` in a document's `files` (audit.json, manifest.json).
fn entry<'d>(doc: &'d serde_json::Value, path: &str) -> &'d serde_json::Value {
    doc["files"]
        .as_array()
        .and_then(|files| files.iter().find(|f| f["path"] == path))
        .unwrap_or_else(|| panic!("no row for {path}"))
}

/// `exhibit build DIR -o OUT --key-file KEY`.
fn build_keyed(dir: &Path, out: &Path, key: &Path) -> Output {
    run(exhibit()
        .arg("build")
        .arg(dir)
        .arg("-o")
        .arg(out)
        .arg("--key-file")
        .arg(key))
}

/// Every published file's bytes and name, as one haystack per file.
fn published(out: &Path) -> Vec<(String, String)> {
    tree(out)
        .into_iter()
        .map(|(rel, bytes)| (rel.clone(), String::from_utf8_lossy(&bytes).into_owned()))
        .collect()
}

#[test]
fn no_channel_publishes_a_redacted_files_original_hash_or_size() {
    let dir = one_address();
    let original = std::fs::read(dir.join("artifacts/env.log")).unwrap();
    let (sha, size) = (sha256_hex(&original), original.len().to_string());
    let manifest_sha = sha256_hex(&std::fs::read(dir.join("manifest.json")).unwrap());
    let out = dir.parent().unwrap().join("site");
    let o = run(exhibit()
        .args(["build", "--single-file"])
        .arg(&dir)
        .arg("-o")
        .arg(&out));
    assert!(o.status.success(), "{}", stderr(&o));
    for (rel, text) in published(&out) {
        assert!(!text.contains("10.20.30.40"), "{rel} holds the address");
        assert!(
            !text.contains(&sha[..12]),
            "{rel} holds the original's hash"
        );
        // The manifest lists the original's hash: it is rewritten.
        assert!(
            !text.contains(&manifest_sha[..12]),
            "{rel} holds the sealed manifest's hash"
        );
    }
    let site = out.join("guess");
    let copy = std::fs::read(site.join("artifacts/env.log")).unwrap();
    let audit: serde_json::Value = serde_json::from_str(&read(&site.join("audit.json"))).unwrap();
    let row = entry(&audit, "artifacts/env.log");
    assert_eq!(row["sha256"], sha256_hex(&copy), "{row}");
    assert_eq!(row["bytes"], copy.len(), "{row}");
    assert_eq!(row["redacted"], true);
    assert!(row.get("sealed").is_none(), "no key, no commitment: {row}");
    assert_ne!(
        copy.len().to_string(),
        size,
        "the sizes differ, so the test can fail"
    );
    // Beside the name, only the copy's size (the manifest page, the block).
    for page in ["manifest.html", "index.html", "guess.html"] {
        let html = read(&site.join(page));
        // The file list's row (the single file also embeds the pages'
        // sources, which name the file).
        let at = html.rfind(">artifacts/env.log<").expect(page);
        let row = &html[at..at + html[at..].find("</tr>").unwrap_or(400)];
        assert!(!row.contains(&format!(">{size}<")), "{page}: {row}");
        assert!(row.contains(&format!(">{}<", copy.len())), "{page}: {row}");
    }
    // The published manifest lists the copy, so the published folder is
    // its own evidence.
    let m: serde_json::Value = serde_json::from_str(&read(&site.join("manifest.json"))).unwrap();
    let entry = entry(&m, "artifacts/env.log");
    assert_eq!(entry["sha256"], sha256_hex(&copy));
    assert_eq!(audit["verification"]["rewritten"], true);
    let o = run(exhibit().arg("verify").arg(&site));
    assert!(o.status.success(), "{}", stdout(&o));
}

#[test]
fn a_campaign_with_nothing_redacted_publishes_its_manifest_as_sealed() {
    let dir = fixture("minimal");
    seal(&dir);
    let sealed = sha256_hex(&std::fs::read(dir.join("manifest.json")).unwrap());
    let out = dir.parent().unwrap().join("site");
    assert!(build(&dir, &out).status.success());
    let audit: serde_json::Value =
        serde_json::from_str(&read(&out.join("minimal/audit.json"))).unwrap();
    assert_eq!(audit["verification"]["sha256"], sealed.as_str());
    assert_eq!(audit["verification"]["rewritten"], false);
    assert!(read(&out.join("minimal/manifest.html")).contains(&sealed));
}

#[test]
fn with_the_key_an_auditor_ties_each_copy_to_its_sealed_original() {
    let dir = one_address();
    let work = dir.parent().unwrap();
    let key = work.join("publisher.key");
    std::fs::write(&key, KEY).unwrap();
    let out = work.join("site");
    let o = build_keyed(&dir, &out, &key);
    assert!(o.status.success(), "{}", stderr(&o));
    let site = out.join("guess");
    let audit: serde_json::Value = serde_json::from_str(&read(&site.join("audit.json"))).unwrap();
    let row = entry(&audit, "artifacts/env.log");
    assert_eq!(
        row["sealed"]["hmac_sha256"].as_str().unwrap().len(),
        64,
        "{row}"
    );
    assert!(audit["verification"]["sealed"].is_object());

    let verify = |key: &Path, sealed: &Path| {
        run(exhibit()
            .arg("verify")
            .arg(&site)
            .arg("--sealed")
            .arg(sealed)
            .arg("--key-file")
            .arg(key))
    };
    let o = verify(&key, &dir);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));

    // Another key opens nothing.
    let other = work.join("other.key");
    std::fs::write(&other, "another key, also long enough").unwrap();
    let o = verify(&other, &dir);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("path tag"), "{}", stdout(&o));

    // A sealed campaign with another address is not the one published.
    let forged = work.join("forged");
    copy_tree(&dir, &forged);
    std::fs::write(
        forged.join("artifacts/env.log"),
        "compressor: zstd -19\nserver: 10.20.30.41:9000\nthreads: 16\n",
    )
    .unwrap();
    // ...and a file the site never published, named masked.
    std::fs::create_dir_all(forged.join("artifacts/home/alice")).unwrap();
    std::fs::write(forged.join("artifacts/home/alice/extra.log"), "x\n").unwrap();
    let o = run(exhibit().args(["seal", "--update"]).arg(&forged));
    assert!(o.status.success(), "{}", stderr(&o));
    let o = verify(&key, &forged);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let text = stdout(&o);
    assert!(
        text.contains("does not match the sealed original"),
        "{text}"
    );
    assert!(
        text.contains("artifacts/[host-path]/extra.log")
            && text.contains("not among the published copies"),
        "{text}"
    );
    assert!(!text.contains("alice"), "{text}");
    assert!(!text.contains("10.20.30"), "{text}");
}

#[test]
fn keys_that_would_weaken_the_commitment_are_refused() {
    let dir = one_address();
    let out = dir.parent().unwrap().join("site");
    let short = dir.parent().unwrap().join("short.key");
    std::fs::write(&short, "tiny").unwrap();
    let o = build_keyed(&dir, &out, &short);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        format!(
            "error: the commitment key in `{}` has 4 bytes; use at least 16 random bytes (for example `head -c 32 /dev/urandom | base64 > exhibit.key`)\n",
            short.display()
        )
    );
    let inside = dir.join("exhibit.key");
    std::fs::write(&inside, KEY).unwrap();
    let o = build_keyed(&dir, &out, &inside);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        format!(
            "error: the key file `{}` lies inside `{}`: keep it outside the campaign, or it is published with it\n",
            inside.display(),
            dir.display()
        )
    );
    assert!(!out.exists(), "nothing was built");
    let o = run(exhibit().arg("verify").arg(&dir).arg("--sealed").arg(&dir));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("give the key with `--key-file FILE`"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn private_names_are_redacted_in_every_channel() {
    let dir = fixture("minimal");
    for name in [
        "artifacts/db01.internal.log",
        "artifacts/ip-10-0-0-27.ec2.internal.log",
        "artifacts/home/alice/run.log",
    ] {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "ok\n").unwrap();
    }
    let notes = dir.join("index.md");
    let mut text = read(&notes);
    text.push_str(
        "\nLogs: [db](artifacts/db01.internal.log) and `artifacts/home/alice/run.log`.\n",
    );
    std::fs::write(&notes, text).unwrap();
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    for (rel, text) in published(&out) {
        for raw in ["db01", "10-0-0-27", "alice"] {
            assert!(!rel.contains(raw), "published name {rel}");
            assert!(!text.contains(raw), "{rel} holds {raw}");
        }
    }
    let sums = read(&out.join("minimal/SHA256SUMS"));
    assert!(sums.contains("artifacts/[host-path-1]/run.log"), "{sums}");
    assert!(sums.contains("artifacts/[private-endpoint-"), "{sums}");
    let o = Command::new("sha256sum")
        .args(["-c", "--quiet", "SHA256SUMS"])
        .current_dir(out.join("minimal"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stdout(&o));
}

#[test]
fn an_error_quoting_a_line_masks_the_value() {
    let dir = fixture("minimal");
    seal(&dir);
    let page = dir.join("index.md");
    let mut text = read(&page);
    text.push_str("\n```exhibit tabel\n{\"host\": \"10.20.30.40\"}\n```\n");
    std::fs::write(&page, &text).unwrap();
    let o = run(exhibit().args(["seal", "--update"]).arg(&dir));
    assert!(o.status.success());
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(!err.contains("10.20.30.40"), "{err}");
    // A data file whose bad line holds an address: the line is quoted masked.
    let data = dir.join("data/bad.jsonl");
    std::fs::write(&data, "{\"peer\": \"10.20.30.40\", oops}\n").unwrap();
    std::fs::write(&page, text.replace("exhibit tabel\n{\"host\": \"10.20.30.40\"}", "exhibit table\n{\"source\": \"data/bad.jsonl\", \"columns\": [{\"header\": \"Peer\", \"field\": \"peer\"}]}")).unwrap();
    let o = run(exhibit().args(["seal", "--update"]).arg(&dir));
    assert!(o.status.success());
    let o = build(&dir, &out);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(
        err,
        format!(
            "error: in the `exhibit table` block at {}:32:1\n  caused by: key must be a string\n  --> {}:1:25\n  |\n1 | {{\"peer\": \"[private-endpoint]\", oops}}\n  |                                ^\n",
            page.display(),
            data.display()
        )
    );
}
