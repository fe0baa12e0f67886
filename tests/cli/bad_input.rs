//! Bad input exits 2 with one message naming the file and line:col, and
//! leaves the previous site untouched. Each case is an overlay in
//! tests/fixtures/bad-input/<case>/ over the minimal fixture.

use super::*;

/// Build the good fixture into OUT, then the broken one over it.
fn check(case: &str, expect: &[&str]) {
    let dir = fixture("minimal");
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let before = tree(&out);

    copy_tree(&repo().join("tests/fixtures/bad-input").join(case), &dir);
    seal_update(&dir);
    let o = build(&dir, &out);
    let err = stderr(&o);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{case}: exit code; stderr:\n{err}"
    );
    for e in expect {
        let e = e.replace("{dir}", &dir.display().to_string());
        assert!(err.contains(&e), "{case}: stderr lacks {e:?}:\n{err}");
    }
    assert!(!err.contains("panicked"), "{case} panicked");
    assert_eq!(err.matches("error:").count(), 1, "{case}: one message");
    assert_eq!(before, tree(&out), "{case}: previous site changed");
}

fn seal_update(dir: &Path) {
    let o = run(exhibit().arg("seal").arg("--update").arg(dir));
    assert!(o.status.success(), "seal --update: {}", stderr(&o));
}

#[test]
fn malformed_data_json() {
    check(
        "malformed-data-json",
        &["{dir}/data/cells.json:3:41", "expected `,` or `}`"],
    );
}

#[test]
fn missing_data_file() {
    check(
        "missing-data-file",
        &[
            "{dir}/notes.md:3:1",
            "data file `data/nope.jsonl` does not exist",
        ],
    );
}

#[test]
fn pointer_resolving_to_nothing() {
    check(
        "pointer-to-nothing",
        &["{dir}/notes.md:3:1", "pointer `/rows` resolves to nothing"],
    );
}

#[test]
fn field_missing_from_a_record() {
    check(
        "missing-field",
        &[
            "{dir}/index.md:5:1",
            "record data/cells.json#/cells/1: `after` is missing",
        ],
    );
}

#[test]
fn non_numeric_value_in_numeric_column() {
    check(
        "non-numeric",
        &[
            "{dir}/index.md:5:1",
            "`before` is the text \"n/a\", not a number",
        ],
    );
}

#[test]
fn unknown_block_kind() {
    check(
        "unknown-block",
        &["{dir}/notes.md:3:1", "unknown block kind `tabel`"],
    );
}

#[test]
fn bad_block_body() {
    check(
        "bad-block-body",
        &["{dir}/notes.md:5:12", "bad `exhibit ledger` block"],
    );
}

#[test]
fn unknown_field_in_block_body() {
    check(
        "unknown-block-field",
        &["{dir}/notes.md:4:", "unknown field `titel`"],
    );
}

#[test]
fn unresolved_inline_reference() {
    check(
        "unresolved-reference",
        &["{dir}/notes.md:3:25", "`/cells/7/after` is missing"],
    );
}

#[test]
fn campaign_json_without_required_field() {
    check(
        "campaign-missing-field",
        &["{dir}/campaign.json:", "missing field `decision`"],
    );
}

#[test]
fn broken_internal_link() {
    check(
        "broken-link",
        &["{dir}/notes.md:3:5", "broken link `artifacts/missing.log`"],
    );
}

#[test]
fn link_to_a_missing_heading_on_another_page() {
    check(
        "broken-anchor",
        &[
            "{dir}/notes.md:3:46",
            "broken link `index.md#cells-by-hand`: index.html has no heading or element with id `cells-by-hand`",
        ],
    );
}

#[test]
fn ledger_record_without_gate() {
    check(
        "bad-ledger-record",
        &[
            "{dir}/notes.md:3:1",
            "data/failures.jsonl:2",
            "missing field `gate`",
        ],
    );
}

#[test]
fn empty_root() {
    let root = scratch("empty-root");
    let o = build(&root, &root.with_extension("site"));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no campaign found"), "{}", stderr(&o));
}

#[test]
fn missing_root() {
    let root = scratch("missing-root").join("nope");
    let o = build(&root, &root.with_extension("site"));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("does not exist"), "{}", stderr(&o));
}

#[test]
fn output_inside_the_campaign_is_refused() {
    let dir = fixture("minimal");
    seal(&dir);
    let o = build(&dir, &dir.join("site"));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("inside the campaign"), "{}", stderr(&o));
    let o = build(&dir, dir.parent().unwrap());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("would replace the input"),
        "{}",
        stderr(&o)
    );
}
