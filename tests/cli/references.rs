//! Inline references wherever a reader reads a number (campaign.json's
//! header fields, page titles, table and chart captions, ledger fields,
//! keyvalue values), the refusal of literal reference text, consistency
//! checks in campaign.json and the ledger count.

use super::*;

const DATA: &str = r#"{
  "cells": [ { "a": 10, "b": 12 }, { "a": 20, "b": 25 } ],
  "total": 3,
  "rows": [ { "key": "Peak", "value": "peak `=data/d.json#ratio(/cells/0/a, /cells/1/a):.2x`" } ]
}
"#;

const FAILURES: &str = "{\"id\": \"one\", \"gate\": \"Gate one\", \"result\": \"`=data/d.json#/total` of 4\", \"impact\": \"lost `=data/d.json#difference(/cells/0/a, /cells/1/a)`\"}\n{\"id\": \"two\", \"gate\": \"Gate two\", \"result\": \"HTTP 413\"}\n";

const INDEX: &str = r#"## Cells

```exhibit table
{
  "caption": "Cells (`=data/d.json#count(/cells/*/a)` rows)",
  "source": "data/d.json",
  "pointer": "/cells",
  "columns": [ { "header": "A", "field": "a" }, { "header": "B", "field": "b" } ]
}
```

```exhibit chart
{
  "title": "Chart of `=data/d.json#/total` things",
  "caption": "largest A `=data/d.json#max(/cells/*/a):.2`",
  "source": "data/d.json",
  "pointer": "/cells",
  "x": { "field": "a", "label": "A" },
  "y": { "label": "B" },
  "series": [ { "field": "b", "name": "B" } ]
}
```

```exhibit keyvalue
{ "caption": "Setup", "source": "data/d.json", "pointer": "/rows" }
```

```exhibit ledger
{ "source": "data/failures.jsonl" }
```
"#;

/// A campaign with a reference in every place one is accepted; `checks`
/// is the JSON of its `checks` list.
fn campaign(name: &str, checks: &str) -> PathBuf {
    let dir = scratch(name).join("refs");
    std::fs::create_dir_all(dir.join("data")).unwrap();
    let meta = format!(
        r#"{{
  "id": "refs",
  "title": "References",
  "date": "2026-10-01",
  "state": "`=data/d.json#sum(/cells/*/a)` done",
  "scope": "`=data/d.json#max(/cells/*/b)` cells",
  "decision": "keep `=data/d.json#pct_change(/cells/0/a, /cells/0/b):+.1%`",
  "summary": "`=ledger#count` failures, mean `=data/d.json#mean(/cells/*/a)`",
  "pages": [
    {{ "file": "index.md", "title": "Overview" }},
    {{ "file": "details.md", "title": "Details at `=data/d.json#min(/cells/*/b):.1`" }}
  ],
  "checks": {checks}
}}
"#
    );
    std::fs::write(dir.join("campaign.json"), meta).unwrap();
    std::fs::write(dir.join("data/d.json"), DATA).unwrap();
    std::fs::write(dir.join("data/failures.jsonl"), FAILURES).unwrap();
    std::fs::write(dir.join("index.md"), INDEX).unwrap();
    std::fs::write(dir.join("details.md"), "## Notes\n\nNothing more.\n").unwrap();
    dir
}

const PASSING: &str = r#"[
    { "name": "the cells' A sums to 30", "equal": ["=data/d.json#sum(/cells/*/a)", 30.2], "tolerance": 0.5 },
    { "name": "B stays under 26", "at_most": ["=data/d.json#max(/cells/*/b)", 26] },
    { "name": "two retained failures", "equal": ["=ledger#count", 2] }
  ]"#;

/// `text` with the first `from` replaced, the campaign resealed.
fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    let path = dir.join(file);
    let text = read(&path);
    assert!(text.contains(from), "{file} lacks {from}");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    let o = run(exhibit().arg("seal").arg("--update").arg(dir));
    assert!(o.status.success(), "reseal: {}", stderr(&o));
}

/// The message exhibit prints for an input error at `line`:`col` of
/// `path`, quoting the line `source` with a caret under the column.
fn positioned(message: &str, path: &Path, source: &str, line: usize, col: usize) -> String {
    let pad = " ".repeat(line.to_string().len());
    format!(
        "error: {message}\n  --> {}:{line}:{col}\n{pad} |\n{line} | {source}\n{pad} | {}^\n",
        path.display(),
        " ".repeat(col - 1)
    )
}

/// 1-based line and column of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

fn assert_no_literal(html: &str, page: &str) {
    assert!(
        !html.contains("`=") && !html.contains("<code>="),
        "{page} shows a reference as text"
    );
}

#[test]
fn references_resolve_everywhere_a_reader_reads_a_number() {
    let dir = campaign("refs-everywhere", PASSING);
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "build failed: {}", stderr(&o));
    let index = read(&out.join("refs/index.html"));
    let details = read(&out.join("refs/details.html"));
    let ledger = read(&out.join("refs/ledger.html"));
    let site = read(&out.join("index.html"));
    for (html, page) in [
        (&index, "index"),
        (&details, "details"),
        (&ledger, "ledger"),
        (&site, "site index"),
    ] {
        assert_no_literal(html, page);
    }
    // Header fields: sum 10+20, max of 12 and 25, (12-10)/10, 2 entries
    // and mean 15.
    for shown in [
        "<dd>30 done</dd>",
        "<dd>25 cells</dd>",
        "<dd>keep +20.0%</dd>",
        "2 failures, mean 15",
    ] {
        assert!(index.contains(shown), "header lacks {shown}");
    }
    assert!(site.contains("<dd>30 done</dd>"), "site index state");
    assert!(site.contains("2 failures, mean 15"), "site index summary");
    // The page title (min of 12 and 25 at one decimal): heading, tab, <title>.
    assert!(details.contains("<h1>Details at 12.0</h1>"), "page heading");
    assert!(details.contains("<title>Details at 12.0 ·"), "page <title>");
    assert!(index.contains(">Details at 12.0</a>"), "tab of the page");
    // Captions, the chart's title, the keyvalue value (20/10) and the
    // ledger's result and impact (20-10) on the page and the ledger page.
    assert!(index.contains("<figcaption>Cells (2 rows)</figcaption>"));
    assert!(index.contains("Chart of 3 things</span>"), "chart title");
    assert!(index.contains("largest A 20.00</span>"), "chart caption");
    assert!(index.contains("<td>peak 2.00x</td>"), "keyvalue value");
    for html in [&index, &ledger] {
        assert!(
            html.contains("<td class=\"result\">3 of 4</td>"),
            "ledger result"
        );
        assert!(html.contains("<td>lost 10</td>"), "ledger impact");
    }
}

#[test]
fn an_unresolved_reference_in_campaign_json_is_positioned_there() {
    let dir = campaign("refs-bad-meta", "[]");
    let out = dir.parent().unwrap().join("site");
    seal(&dir);
    assert!(build(&dir, &out).status.success());
    let before = tree(&out);
    edit(
        &dir,
        "campaign.json",
        "mean `=data/d.json#mean(/cells/*/a)`",
        "mean `=data/d.json#mean(/cells/*/c)`",
    );
    let o = build(&dir, &out);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let text = read(&dir.join("campaign.json"));
    let at = text.find("`=data/d.json#mean(/cells/*/c)`").unwrap();
    let (line, col) = line_col(&text, at);
    let source = text.lines().nth(line - 1).unwrap();
    let expected = positioned(
        "`summary`: reference `=data/d.json#mean(/cells/*/c)`: `/cells/0/c` is missing in `data/d.json`",
        &dir.join("campaign.json"),
        source,
        line,
        col,
    );
    assert_eq!(stderr(&o), expected);
    assert_eq!(tree(&out), before, "the previous site changed");
}

#[test]
fn an_unresolved_reference_in_a_ledger_field_is_positioned_at_its_block() {
    let dir = campaign("refs-bad-ledger", "[]");
    std::fs::write(
        dir.join("data/failures.jsonl"),
        FAILURES.replace("#/total` of 4", "#/totals` of 4"),
    )
    .unwrap();
    seal(&dir);
    let o = build(&dir, &dir.parent().unwrap().join("site"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let text = read(&dir.join("index.md"));
    let at = text.find("```exhibit ledger").unwrap();
    let (line, col) = line_col(&text, at);
    let expected = positioned(
        "`exhibit ledger` block: record data/failures.jsonl:1, `result`: reference `=data/d.json#/totals`: `totals` is missing in `data/d.json`",
        &dir.join("index.md"),
        "```exhibit ledger",
        line,
        col,
    );
    assert_eq!(stderr(&o), expected);
}

#[test]
fn a_reference_left_as_text_is_refused() {
    // A ledger gate is not read for references: one there would reach the
    // page as literal text.
    let dir = campaign("refs-literal", "[]");
    edit(
        &dir,
        "data/failures.jsonl",
        "\"gate\": \"Gate one\"",
        "\"gate\": \"Gate `=data/d.json#/total`\"",
    );
    let o = build(&dir, &dir.parent().unwrap().join("site"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "`{}` would publish the reference `=data/d.json#/total` as text",
            dir.join("index.md").display()
        )),
        "{err}"
    );
}

#[test]
fn checks_that_hold_are_listed_in_audit_json() {
    let dir = campaign("refs-checks-pass", PASSING);
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "build failed: {}", stderr(&o));
    let audit: serde_json::Value =
        serde_json::from_str(&read(&out.join("refs/audit.json"))).unwrap();
    let checks = audit["checks"].as_array().expect("audit lists checks");
    assert_eq!(checks.len(), 3);
    assert_eq!(checks[0]["name"], "the cells' A sums to 30");
    assert_eq!(checks[0]["left"]["value"], 30.0);
    assert_eq!(checks[0]["right"]["value"], 30.2);
    assert_eq!(checks[0]["tolerance"], 0.5);
    assert_eq!(checks[1]["relation"], "at_most");
    assert_eq!(checks[2]["left"]["written"], "=ledger#count");
    assert_eq!(checks[2]["left"]["value"], 2.0);
    assert!(checks.iter().all(|c| c["holds"] == true));
}

#[test]
fn a_failing_check_stops_the_build_with_both_values() {
    let dir = campaign("refs-checks-fail", PASSING);
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    assert!(build(&dir, &out).status.success());
    let before = tree(&out);
    // B rises to 27 in the second cell: above the limit of 26.
    edit(&dir, "data/d.json", "\"b\": 25", "\"b\": 27");
    let o = build(&dir, &out);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("check `B stays under 26` failed: =data/d.json#max(/cells/*/b) is 27, which is not at most 26 = 26"),
        "{err}"
    );
    assert!(
        !err.contains("sums to 30"),
        "a check that held is reported: {err}"
    );
    assert_eq!(tree(&out), before, "the previous site changed");
}

#[test]
fn a_malformed_check_is_positioned_in_campaign_json() {
    let checks = r#"[
    { "name": "both ways", "equal": [1, 1], "at_least": [2, 1] }
  ]"#;
    let dir = campaign("refs-checks-bad", checks);
    seal(&dir);
    let o = build(&dir, &dir.parent().unwrap().join("site"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let text = read(&dir.join("campaign.json"));
    let (line, col) = line_col(&text, text.find("\"both ways\"").unwrap());
    let err = stderr(&o);
    assert!(
        err.starts_with(&format!(
            "error: check `both ways` needs exactly one of `equal`, `at_most` or `at_least`\n  --> {}:{line}:{col}\n",
            dir.join("campaign.json").display()
        )),
        "{err}"
    );
}

#[test]
fn templates_read_the_ledger_count() {
    let dir = campaign("refs-template", "[]");
    seal(&dir);
    let theme = dir.parent().unwrap().join("theme");
    std::fs::create_dir_all(theme.join("templates")).unwrap();
    let page = read(&repo().join("templates/page.html")).replace(
        "{{ content | safe }}",
        "<p id=\"count\">{{ ledger_count }} retained</p>{{ content | safe }}",
    );
    std::fs::write(theme.join("templates/page.html"), page).unwrap();
    let out = dir.parent().unwrap().join("site");
    let o = build_themed(&dir, &out, &theme);
    assert!(o.status.success(), "build failed: {}", stderr(&o));
    let lines = FAILURES.lines().count();
    for page in ["index.html", "details.html"] {
        let html = read(&out.join("refs").join(page));
        assert!(
            html.contains(&format!("<p id=\"count\">{lines} retained</p>")),
            "{page}"
        );
    }
}

#[test]
fn the_samples_checks_hold_and_catch_a_changed_depth() {
    let dir = scratch("refs-sample").join("sample");
    copy_tree(
        &repo().join("sample-artifacts/glm53-flash-linux-vs-wsl"),
        &dir,
    );
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "sample: {}", stderr(&o));
    let audit: serde_json::Value =
        serde_json::from_str(&read(&out.join("glm53-flash-linux-vs-wsl/audit.json"))).unwrap();
    let checks = audit["checks"].as_array().expect("the sample has checks");
    assert!(checks.len() >= 2 && checks.iter().all(|c| c["holds"] == true));
    let sweep: serde_json::Value =
        serde_json::from_str(&read(&dir.join("data/context-sweep.json"))).unwrap();
    let passed: i64 = sweep["depths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["passed"].as_i64().unwrap())
        .sum();
    assert_eq!(passed, sweep["totals"]["passed"].as_i64().unwrap());
    let first = sweep["depths"][0]["passed"].as_i64().unwrap();
    edit(
        &dir,
        "data/context-sweep.json",
        &format!("\"passed\": {first}, \"cases\""),
        &format!("\"passed\": {}, \"cases\"", first - 7),
    );
    let o = build(&dir, &out);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "check `the sweep's per-depth passes sum to its total` failed: =data/context-sweep.json#sum(/depths/*/passed) is {}, which is not equal to =data/context-sweep.json#/totals/passed = {passed}",
            passed - 7
        )),
        "{err}"
    );
}
