//! Every error message, pinned whole. Bad input exits 2 with one message
//! naming the file and line:col and leaves the previous site untouched;
//! evidence failures exit 1. Each test compares the whole stderr (the
//! scratch folder shown as `[DIR]`) with a committed snapshot in
//! tests/cli/snapshots/ (insta: a mismatch fails; under `CI=true` nothing
//! is written, so a missing snapshot fails too). The bad-input cases are
//! overlays in tests/fixtures/bad-input/<case>/ over the minimal fixture.

use super::*;
use sha2::Digest;

/// `o` failed with exit `code`, and its whole stderr, with the scratch
/// folder `scratch` as `[DIR]`, is the snapshot `name`.
fn pinned(name: &str, o: &Output, code: i32, scratch: &Path) {
    let err = stderr(o).replace(&scratch.display().to_string(), "[DIR]");
    assert_eq!(
        o.status.code(),
        Some(code),
        "{name}: exit code; stderr:\n{err}"
    );
    assert!(!err.contains("panicked"), "{name} panicked:\n{err}");
    insta::assert_snapshot!(name, err);
}

/// Build the good fixture into OUT, then the broken one over it.
fn check(case: &str) {
    let dir = fixture("minimal");
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let before = tree(&out);

    copy_tree(&repo().join("tests/fixtures/bad-input").join(case), &dir);
    seal_update(&dir);
    let o = build(&dir, &out);
    assert_eq!(
        stderr(&o).matches("error:").count(),
        1,
        "{case}: one message"
    );
    pinned(case, &o, 2, dir.parent().unwrap());
    assert_eq!(before, tree(&out), "{case}: previous site changed");
}

fn seal_update(dir: &Path) {
    let o = run(exhibit().arg("seal").arg("--update").arg(dir));
    assert!(o.status.success(), "seal --update: {}", stderr(&o));
}

/// A sealed copy of the minimal fixture and the scratch folder holding it.
fn sealed() -> (PathBuf, PathBuf) {
    let dir = fixture("minimal");
    seal(&dir);
    let scratch = dir.parent().unwrap().to_path_buf();
    (dir, scratch)
}

/// `exhibit CMD DIR` on a copy of fixture `name` that `prepare` changed
/// (sealed first when `sealed`), pinned as snapshot `snapshot`.
fn pinned_on(
    name: &str,
    sealed: bool,
    prepare: impl FnOnce(&Path),
    cmd: &str,
    snapshot: &str,
    code: i32,
) {
    let dir = fixture(name);
    if sealed {
        seal(&dir);
    }
    prepare(&dir);
    let o = run(exhibit().arg(cmd).arg(&dir));
    pinned(snapshot, &o, code, dir.parent().unwrap());
}

#[test]
fn malformed_data_json() {
    check("malformed-data-json");
}

#[test]
fn missing_data_file() {
    check("missing-data-file");
}

#[test]
fn pointer_resolving_to_nothing() {
    check("pointer-to-nothing");
}

#[test]
fn field_missing_from_a_record() {
    check("missing-field");
}

#[test]
fn non_numeric_value_in_numeric_column() {
    check("non-numeric");
}

#[test]
fn unknown_block_kind() {
    check("unknown-block");
}

#[test]
fn bad_block_body() {
    check("bad-block-body");
}

#[test]
fn unknown_field_in_block_body() {
    check("unknown-block-field");
}

#[test]
fn unresolved_inline_reference() {
    check("unresolved-reference");
}

#[test]
fn campaign_json_without_required_field() {
    check("campaign-missing-field");
}

#[test]
fn broken_internal_link() {
    check("broken-link");
}

#[test]
fn link_to_a_missing_heading_on_another_page() {
    check("broken-anchor");
}

#[test]
fn ledger_record_without_gate() {
    check("bad-ledger-record");
}

/// Every case folder has its test above: a new case needs its snapshot.
#[test]
fn every_case_is_pinned() {
    let this = read(&repo().join("tests/cli/bad_input.rs"));
    for entry in std::fs::read_dir(repo().join("tests/fixtures/bad-input")).unwrap() {
        let case = entry.unwrap().file_name().into_string().unwrap();
        assert!(
            this.contains(&format!("check(\"{case}\")")),
            "tests/fixtures/bad-input/{case} has no test here"
        );
    }
}

// Usage errors: clap's own messages and exhibit's checks of the arguments.

#[test]
fn verify_without_a_path() {
    let o = run(exhibit().arg("verify"));
    pinned("usage-verify-without-path", &o, 2, &repo());
}

#[test]
fn build_with_a_pin_that_is_not_a_hash() {
    let o = run(exhibit().arg("build").arg("--expect").arg("abc"));
    pinned("usage-build-bad-pin", &o, 2, &repo());
}

#[test]
fn empty_root() {
    let root = scratch("empty-root");
    let o = build(&root, &root.join("site"));
    pinned("build-empty-root", &o, 2, &root);
}

#[test]
fn missing_root() {
    let root = scratch("missing-root");
    let o = build(&root.join("nope"), &root.join("site"));
    pinned("build-missing-root", &o, 2, &root);
}

#[test]
fn output_inside_the_campaign_is_refused() {
    let (dir, scratch) = sealed();
    let o = build(&dir, &dir.join("site"));
    pinned("build-output-inside-campaign", &o, 2, &scratch);
    let o = build(&dir, &scratch);
    pinned("build-output-replacing-input", &o, 2, &scratch);
}

#[test]
fn build_pin_naming_no_campaign_here() {
    let (dir, scratch) = sealed();
    let o = build_expecting(
        &dir,
        &scratch.join("site"),
        format!("other={}", "a".repeat(64)),
    );
    pinned("build-expect-unknown-campaign", &o, 2, &scratch);
}

#[test]
fn verify_sealed_without_a_key() {
    let (dir, scratch) = sealed();
    let o = run(exhibit()
        .arg("verify")
        .arg(scratch.join("site"))
        .arg("--sealed")
        .arg(&dir)
        .env_remove("EXHIBIT_KEY_FILE")
        .env_remove("EXHIBIT_KEY"));
    pinned("verify-sealed-without-key", &o, 2, &scratch);
}

// Bad input found by verify, seal and scan.

#[test]
fn verify_with_no_manifest() {
    pinned_on("minimal", false, |_| {}, "verify", "verify-no-manifest", 2);
}

#[test]
fn verify_malformed_sums_line() {
    let sums = |dir: &Path| {
        let text = format!("{}  campaign.json\nnot a line\n", "a".repeat(64));
        std::fs::write(dir.join("SHA256SUMS"), text).unwrap();
    };
    pinned_on(
        "minimal",
        false,
        sums,
        "verify",
        "verify-malformed-sums-line",
        2,
    );
}

#[test]
fn verify_manifest_hash_not_hex() {
    let not_hex = |dir: &Path| {
        let p = dir.join("manifest.json");
        let text = read(&p);
        let first = text.find("\"sha256\": \"").expect("a sha256 field") + 11;
        let text = format!(
            "{}{}{}",
            &text[..first],
            "g".repeat(64),
            &text[first + 64..]
        );
        std::fs::write(&p, text).unwrap();
    };
    pinned_on(
        "minimal",
        true,
        not_hex,
        "verify",
        "verify-manifest-hash-not-hex",
        2,
    );
}

#[test]
fn seal_refuses_a_built_site_inside() {
    let (dir, scratch) = sealed();
    assert!(build(&dir, &scratch.join("site")).status.success());
    std::fs::rename(scratch.join("site"), dir.join("site")).unwrap();
    let o = run(exhibit().arg("seal").arg("--update").arg(&dir));
    pinned("seal-built-site-inside", &o, 2, &scratch);
}

#[test]
fn scan_of_a_missing_path() {
    let root = scratch("scan-missing");
    let o = run(exhibit().arg("scan").arg(root.join("no-such-thing")));
    pinned("scan-missing-path", &o, 2, &root);
}

#[test]
fn a_plain_path_binary_entry_is_explained() {
    let dir = fixture("leaky");
    let meta = dir.join("campaign.json");
    let text = read(&meta).replace(r#""binary": []"#, r#""binary": ["artifacts/logo.png"]"#);
    std::fs::write(&meta, text).unwrap();
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    pinned(
        "build-binary-entry-plain-path",
        &o,
        2,
        dir.parent().unwrap(),
    );
    assert!(!out.exists(), "nothing is published");
}

// Evidence failures: exit 1, every bad file named.

#[test]
fn build_of_a_modified_file() {
    let (dir, scratch) = sealed();
    let p = dir.join("data/cells.json");
    let mut bytes = std::fs::read(&p).unwrap();
    bytes[10] ^= 1;
    std::fs::write(&p, bytes).unwrap();
    let o = build(&dir, &scratch.join("site"));
    pinned("build-hash-mismatch", &o, 1, &scratch);
}

#[test]
fn build_with_missing_and_unlisted_files() {
    let (dir, scratch) = sealed();
    std::fs::remove_file(dir.join("artifacts/run.log")).unwrap();
    std::fs::write(dir.join("artifacts/extra.log"), "not sealed").unwrap();
    let o = build(&dir, &scratch.join("site"));
    pinned("build-missing-and-unlisted", &o, 1, &scratch);
    let o = run(exhibit().arg("verify").arg(&dir));
    pinned("verify-missing-and-unlisted", &o, 1, &scratch);
}

#[test]
fn pin_of_a_rewritten_manifest() {
    let (dir, scratch) = sealed();
    let pin = hex::encode(sha2::Sha256::digest(
        std::fs::read(dir.join("manifest.json")).unwrap(),
    ));
    std::fs::write(dir.join("artifacts/run.log"), "a different run\n").unwrap();
    seal_update(&dir);
    let o = run(exhibit().arg("verify").arg(&dir).arg("--expect").arg(&pin));
    pinned("verify-expect-mismatch", &o, 1, &scratch);
    let o = build_expecting(&dir, &scratch.join("site"), &pin);
    // The message names both hashes; they differ with the fixture's bytes.
    let now = hex::encode(sha2::Sha256::digest(
        std::fs::read(dir.join("manifest.json")).unwrap(),
    ));
    let err = stderr(&o).replace(&pin, "[PIN]").replace(&now, "[NOW]");
    assert!(err.contains("[PIN]") && err.contains("[NOW]"), "{err}");
    assert_eq!(o.status.code(), Some(1), "{err}");
    insta::assert_snapshot!(
        "build-expect-mismatch",
        err.replace(&scratch.display().to_string(), "[DIR]")
    );
}

#[test]
fn seal_of_a_changed_campaign() {
    let change = |dir: &Path| {
        std::fs::write(dir.join("artifacts/new.log"), "new").unwrap();
        std::fs::remove_file(dir.join("notes.md")).unwrap();
        std::fs::write(dir.join("data/cells.json"), "{\"cells\": []}").unwrap();
    };
    pinned_on("minimal", true, change, "seal", "seal-manifest-differs", 1);
}

#[test]
fn seal_refuses_a_symlink_out_of_the_campaign() {
    let link_out = |dir: &Path| {
        let outside = dir.parent().unwrap().join("outside.txt");
        std::fs::write(&outside, "elsewhere").unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("artifacts/out.txt")).unwrap();
    };
    pinned_on("minimal", false, link_out, "seal", "seal-symlink-out", 1);
}

#[test]
fn scan_finding_private_values() {
    pinned_on("leaky", false, |_| {}, "scan", "scan-private-values", 1);
}

#[test]
fn leak_in_the_output_refuses_the_build() {
    let dir = fixture("leaky");
    seal(&dir);
    let scratch = dir.parent().unwrap();
    // A theme whose base template carries a private address: only the scan
    // of the written output sees it.
    let theme = scratch.join("theme");
    std::fs::create_dir_all(theme.join("templates")).unwrap();
    let base = read(&repo().join("templates/base.html")).replacen(
        "<head>",
        "<head>\n<!-- staged on 10.11.12.13 -->",
        1,
    );
    std::fs::write(theme.join("templates/base.html"), base).unwrap();
    let o = build_themed(&dir, &scratch.join("site"), &theme);
    pinned("build-leak-in-output", &o, 1, scratch);
}
