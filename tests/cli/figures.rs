//! Typed figures: numbers typed by hand in a page are checked against the
//! campaign's data and the values its pages compute, at the precision
//! they are written with; unmatched ones warn, or fail `--strict` and
//! `"strict": true` with exit 1 and the previous site intact.

use super::*;
use serde_json::Value;

const DATA: &str = r#"{
  "cells": [
    { "name": "small", "before": 112.07, "after": 149.0247, "passed": 128, "total": 150 }
  ],
  "bytes": 1324
}
"#;

const TABLE: &str = r#"
```exhibit table
{
  "caption": "Decode",
  "source": "data/r.json",
  "pointer": "/cells",
  "columns": [
    { "header": "Before", "field": "before", "format": ".2" },
    { "header": "Change", "derive": "pct_change", "from": "before", "to": "after", "format": "+.1%" }
  ]
}
```
"#;

/// A sealed campaign `figs` whose index.md is `page`; `extra` is added to
/// campaign.json.
fn campaign(page: &str, extra: &str) -> PathBuf {
    let dir = scratch("figures").join("figs");
    std::fs::create_dir_all(dir.join("data")).unwrap();
    let meta = format!(
        r#"{{ "id": "figs", "title": "Figures", "date": "2026-10-01", "state": "Done",
  "scope": "One cell", "decision": "None"{extra} }}"#
    );
    std::fs::write(dir.join("campaign.json"), meta).unwrap();
    std::fs::write(dir.join("data/r.json"), DATA).unwrap();
    std::fs::write(dir.join("index.md"), page).unwrap();
    seal(&dir);
    dir
}

fn site(dir: &Path) -> PathBuf {
    dir.parent().unwrap().join("site")
}

fn build_strict(dir: &Path) -> Output {
    run(exhibit()
        .arg("build")
        .arg(dir)
        .arg("-o")
        .arg(site(dir))
        .arg("--strict"))
}

fn audit_figures(dir: &Path, id: &str) -> Vec<Value> {
    let audit: Value = serde_json::from_str(&read(&site(dir).join(id).join("audit.json"))).unwrap();
    audit["figures"].as_array().unwrap().clone()
}

fn warnings(o: &Output) -> Vec<String> {
    stderr(o)
        .lines()
        .filter(|l| l.starts_with("warning:"))
        .map(str::to_string)
        .collect()
}

#[test]
fn figures_match_at_their_precision_and_audit_lists_them() {
    let page = format!(
        "## Results\n\nDecode went from 112.07 to 149.02 tok/s, a rise of 33.0%, over 1,324 bytes.\n{TABLE}"
    );
    let dir = campaign(&page, "");
    let o = build_strict(&dir);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(warnings(&o), Vec::<String>::new());
    let figures = audit_figures(&dir, "figs");
    let listed: Vec<(String, String, String)> = figures
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap().to_string();
            (s("at"), s("text"), s("source"))
        })
        .collect();
    let table = "table at index.md:5, `Change` row 1";
    assert_eq!(
        listed,
        [
            (
                "3:18".into(),
                "112.07".into(),
                "data/r.json#/cells/0/before".into()
            ),
            (
                "3:28".into(),
                "149.02".into(),
                "data/r.json#/cells/0/after".into()
            ),
            ("3:52".into(), "33.0%".into(), table.into()),
            ("3:64".into(), "1,324".into(), "data/r.json#/bytes".into()),
        ]
    );
    // The matched value is the data's, at full precision.
    assert_eq!(figures[1]["matched"], 149.0247);
    let change = (149.0247 - 112.07) / 112.07 * 100.0;
    assert!((figures[2]["matched"].as_f64().unwrap() - change).abs() < 1e-9);
}

#[test]
fn a_figure_matches_a_derived_value_only_where_the_page_computes_it() {
    let typed = "## Results\n\nDecode rose by 33.0%.\n";
    let with_table = campaign(&format!("{typed}{TABLE}"), "");
    assert!(build_strict(&with_table).status.success());
    // Without the table the change is computed nowhere: it is not a data value.
    let without = campaign(typed, "");
    let o = build_strict(&without);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("index.md:3:16: typed figure `33.0%`"));
}

#[test]
fn an_unmatched_figure_warns_with_its_position_and_the_nearest_value() {
    let dir = campaign("## Results\n\nDecode reached 149.1 tok/s.\n", "");
    let o = build(&dir, &site(&dir));
    assert!(o.status.success(), "{}", stderr(&o));
    let expected = format!(
        "warning: {}:3:16: typed figure `149.1` matches no value of the data (nearest: 149.0247, data/r.json#/cells/0/after)",
        dir.join("index.md").display()
    );
    assert_eq!(warnings(&o), [expected]);
    let figures = audit_figures(&dir, "figs");
    assert_eq!(figures.len(), 1);
    assert_eq!(figures[0]["matched"], Value::Null);
    assert_eq!(figures[0]["at"], "3:16");
}

/// Build a good site, then break a figure and build again with `how`: exit
/// 1 naming the figure, the previous site unchanged.
fn refused_keeps_previous_site(extra: &str, how: impl Fn(&Path) -> Output) {
    let dir = campaign("## Results\n\nDecode reached 149.02 tok/s.\n", extra);
    let o = how(&dir);
    assert!(o.status.success(), "{}", stderr(&o));
    let before = tree(&site(&dir));
    std::fs::write(
        dir.join("index.md"),
        "## Results\n\nDecode reached 149.1 tok/s.\n",
    )
    .unwrap();
    run(exhibit().arg("seal").arg("--update").arg(&dir));
    let o = how(&dir);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "{}:3:16: typed figure `149.1` matches no value of the data (nearest: 149.0247, data/r.json#/cells/0/after)",
            dir.join("index.md").display()
        )),
        "{err}"
    );
    assert!(
        err.contains("1 typed figure matches no value of the data (strict)"),
        "{err}"
    );
    assert_eq!(tree(&site(&dir)), before, "the previous site changed");
}

#[test]
fn strict_flag_fails_the_build_and_keeps_the_previous_site() {
    refused_keeps_previous_site("", build_strict);
}

#[test]
fn strict_in_campaign_json_fails_the_build_too() {
    refused_keeps_previous_site(r#", "strict": true"#, |dir| build(dir, &site(dir)));
}

#[test]
fn what_is_not_a_claim_is_not_checked() {
    // 149.9 matches nothing: as plain prose it fails --strict.
    let control = campaign("Plain 149.9 here.\n", "");
    assert_eq!(build_strict(&control).status.code(), Some(1));
    let cases = [
        ("date", "Measured on 2026-05-14 at 14:30 UTC, 3 May 2026."),
        (
            "version",
            "Built with v1.2.3, exhibit 0.22.1 and CUDA 12.4.",
        ),
        (
            "identifier",
            "Model GLM-5.3 on an H100 (x86_64), issue #4417.",
        ),
        ("code span", "The flag `--max 149.9` is set."),
        ("fenced code", "```\nthroughput 149.9\n```"),
        ("marker", "A vendor quotes [~149.9] tok/s."),
    ];
    for (what, text) in cases {
        let dir = campaign(&format!("## Notes\n\n{text}\n"), "");
        let o = build_strict(&dir);
        assert!(o.status.success(), "{what}: {}", stderr(&o));
        assert_eq!(audit_figures(&dir, "figs"), Vec::<Value>::new(), "{what}");
        if what == "marker" {
            let html = read(&site(&dir).join("figs/index.html"));
            assert!(
                html.contains("A vendor quotes 149.9 tok/s."),
                "marker shown"
            );
        }
    }
}

#[test]
fn a_fraction_is_two_figures() {
    let dir = campaign("## Results\n\nIt passed 129/150 cases, not 128/150.\n", "");
    let o = build(&dir, &site(&dir));
    assert!(o.status.success(), "{}", stderr(&o));
    let w = warnings(&o);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("index.md:3:11: typed figure `129` matches no value of the data (nearest: 128, data/r.json#/cells/0/passed)"), "{w:?}");
    let texts: Vec<_> = audit_figures(&dir, "figs")
        .iter()
        .map(|f| {
            (
                f["text"].as_str().unwrap().to_string(),
                f["matched"].as_f64(),
            )
        })
        .collect();
    assert_eq!(
        texts,
        [
            ("129".to_string(), None),
            ("150".to_string(), Some(150.0)),
            ("128".to_string(), Some(128.0)),
            ("150".to_string(), Some(150.0)),
        ]
    );
}

fn sample_copy() -> PathBuf {
    let dir = scratch("figures-sample").join("glm53-flash-linux-vs-wsl");
    copy_tree(
        &repo().join("sample-artifacts/glm53-flash-linux-vs-wsl"),
        &dir,
    );
    dir
}

#[test]
fn the_sample_builds_strict_with_no_warning() {
    let dir = sample_copy();
    let o = build_strict(&dir);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(warnings(&o), Vec::<String>::new());
    assert!(!audit_figures(&dir, "glm53-flash-linux-vs-wsl").is_empty());
}

#[test]
fn a_changed_data_value_changes_its_figures_and_strict_names_every_quote() {
    let dir = sample_copy();
    let id = "glm53-flash-linux-vs-wsl";
    assert!(build_strict(&dir).status.success());
    let page = read(&site(&dir).join(id).join("index.html"));
    let quoted: Vec<Value> = audit_figures(&dir, id);
    // Two values change: one the pages compute from, one prose quotes.
    let changed = [
        ("/cells/0/linux_decode", 149.02, 139.02),
        ("/controls/completion_ceiling_tokens", 256.0, 320.0),
    ];
    let path = dir.join("data/measurements.json");
    let mut data: Value = serde_json::from_str(&read(&path)).unwrap();
    for (pointer, old, new) in changed {
        let v = data.pointer_mut(pointer).unwrap();
        assert_eq!(v.as_f64(), Some(old));
        *v = serde_json::json!(new);
    }
    std::fs::write(&path, serde_json::to_string_pretty(&data).unwrap()).unwrap();
    let o = run(exhibit().arg("seal").arg("--update").arg(&dir));
    assert!(o.status.success(), "{}", stderr(&o));
    // Without --strict the build passes: every derived figure changed.
    let o = build(&dir, &site(&dir));
    assert!(o.status.success(), "{}", stderr(&o));
    let after = read(&site(&dir).join(id).join("index.html"));
    let wsl = data
        .pointer("/cells/0/wsl_decode")
        .unwrap()
        .as_f64()
        .unwrap();
    for (old, new) in [(149.02, 139.02)] {
        let (was, now) = ((old - wsl) / wsl * 100.0, (new - wsl) / wsl * 100.0);
        for (html, change, value) in [(&page, was, old), (&after, now, new)] {
            assert!(
                html.contains(&format!("+{change:.1}%")),
                "change {change:.1}"
            );
            assert!(
                html.contains(&format!("Linux {value:.2} versus WSL")),
                "card"
            );
        }
        assert!(
            !after.contains(&format!("+{was:.1}%")),
            "old change still shown"
        );
    }
    // Every typed figure that quoted a changed value is reported.
    let quoting: Vec<&Value> = quoted
        .iter()
        .filter(|f| {
            let source = f["source"].as_str().unwrap_or("");
            changed
                .iter()
                .any(|(p, ..)| source.ends_with(&format!("#{p}")))
        })
        .collect();
    assert!(!quoting.is_empty(), "some prose quotes a changed value");
    let o = build_strict(&dir);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    for f in quoting {
        let at = format!(
            "{}:{}: typed figure `{}`",
            dir.join(f["page"].as_str().unwrap()).display(),
            f["at"].as_str().unwrap(),
            f["text"].as_str().unwrap()
        );
        assert!(err.contains(&at), "{at} not reported in {err}");
    }
}

#[test]
fn the_format_doc_figures_example_passes_strict() {
    // FORMAT.md's typed-figures page with the data it reads, built alone
    // under --strict: every figure matches, the quoted one is marked.
    let doc = super::format_doc::doc_campaign();
    let page = read(&doc.join("figures.md"));
    let dir = scratch("figures-doc").join("figs");
    std::fs::create_dir_all(dir.join("data")).unwrap();
    std::fs::copy(doc.join("data/cells.json"), dir.join("data/cells.json")).unwrap();
    std::fs::write(dir.join("index.md"), &page).unwrap();
    std::fs::write(
        dir.join("campaign.json"),
        r#"{ "id": "figs", "title": "Figures", "date": "2026-10-01", "state": "Done",
  "scope": "Doc", "decision": "None", "strict": true }"#,
    )
    .unwrap();
    seal(&dir);
    let o = build(&dir, &site(&dir));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(warnings(&o), Vec::<String>::new());
    let figures = audit_figures(&dir, "figs");
    let texts: Vec<&str> = figures
        .iter()
        .map(|f| f["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["112.07", "149.02", "37", "3", "+33.0%"]);
    assert!(figures.iter().all(|f| f["matched"].is_number()));
    let html = read(&site(&dir).join("figs/index.html"));
    assert!(html.contains("quotes 165 tok/s"));
}

/// Build `dir` (exit 0): stderr warns once, at index.md:`rest`.
fn only_warning(dir: &Path, rest: &str) {
    let o = build(dir, &site(dir));
    assert!(o.status.success(), "{}", stderr(&o));
    let expected = format!("warning: {}:{rest}", dir.join("index.md").display());
    assert_eq!(warnings(&o), [expected]);
}

#[test]
fn a_caption_figure_is_checked_at_its_place_in_the_block() {
    let table = TABLE.replace(
        r#""caption": "Decode""#,
        r#""caption": "Decode of 129 cases""#,
    );
    let dir = campaign(&format!("## Results\n{table}"), "");
    only_warning(&dir, "5:25: typed figure `129` matches no value of the data (nearest: 128, data/r.json#/cells/0/passed)");
}

#[test]
fn card_text_is_checked_around_its_placeholders() {
    let card = r#"
```exhibit card
{
  "source": "data/r.json",
  "items": [
    { "label": "Passed", "value": "{/cells/0/passed} of 151 cases", "conditions": "of {/cells/0/total}, 150 planned" }
  ]
}
```
"#;
    let dir = campaign(&format!("## Results\n{card}"), "");
    only_warning(&dir, "7:57: typed figure `151` matches no value of the data (nearest: 150, data/r.json#/cells/0/total)");
    let texts: Vec<_> = audit_figures(&dir, "figs")
        .iter()
        .map(|f| f["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(texts, ["151", "150"]);
}

#[test]
fn past_twenty_unmatched_figures_the_rest_are_counted_and_audit_lists_all() {
    let prose: String = (0..25)
        .map(|i| format!("Decode reached {}.5 tok/s.\n\n", 700 + i))
        .collect();
    let dir = campaign(&format!("## Results\n\n{prose}"), "");
    let o = build(&dir, &site(&dir));
    assert!(o.status.success(), "{}", stderr(&o));
    let w = warnings(&o);
    assert_eq!(w.len(), 21, "{w:?}");
    assert!(
        w[19].contains("typed figure `719.5` matches no value"),
        "{w:?}"
    );
    assert_eq!(
        w[20],
        "warning: 5 more typed figures match no value of the data: audit.json lists every figure; `--strict` prints them all"
    );
    assert_eq!(audit_figures(&dir, "figs").len(), 25);
    // Under --strict every one is named.
    let o = build_strict(&dir);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("typed figure `724.5`"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("25 typed figures match no value of the data (strict)"));
}

/// The dense worst case: one line of 100,000 figures and no white space.
/// Each is found and placed at its own column (positions are looked up
/// in one pass over the page, not counted from its start each time).
#[test]
fn a_line_of_a_hundred_thousand_figures_is_read_in_one_pass() {
    let n = 100_000;
    let line: Vec<String> = (0..n).map(|i| format!("{}", 7000 + i % 1000)).collect();
    let line = line.join(";");
    let dir = campaign(&format!("## Results\n\n{line}\n"), "");
    let o = build(&dir, &site(&dir));
    assert!(o.status.success(), "{}", stderr(&o));
    let figures = audit_figures(&dir, "figs");
    assert_eq!(figures.len(), n);
    let last_col = line.len() - 3;
    assert_eq!(figures[n - 1]["at"], format!("3:{last_col}"));
    assert_eq!(figures[n - 1]["text"], "7999");
}

/// A paragraph of 60,000 lines is one run of text, joined once (it was
/// joined line by line, copying all before each line: quadratic), with
/// each line's figure placed on its own line.
#[test]
fn a_paragraph_of_sixty_thousand_lines_is_one_run_of_text() {
    let n = 60_000;
    let lines: Vec<String> = (0..n)
        .map(|i| format!("line {} of the run", 7000 + i % 1000))
        .collect();
    let dir = campaign(&format!("## Results\n\n{}\n", lines.join("\n")), "");
    let out = site(&dir);
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let figures = audit_figures(&dir, "figs");
    assert_eq!(figures.len(), n);
    assert_eq!(figures[n - 1]["at"], format!("{}:6", 3 + n - 1));
    let html = std::fs::read_to_string(out.join("figs/index.html")).unwrap();
    let paragraph = format!("<p>{}</p>", lines.join("\n"));
    assert!(html.contains(&paragraph), "the paragraph is not one <p>");
}

/// Campaign `figs` with the pages `pages` (file, Markdown; the first is
/// index.md), data/r.json, the data files `data` and campaign.json's
/// `extra` fields.
fn campaign_of(pages: &[(&str, &str)], data: &[(&str, &str)], extra: &str) -> PathBuf {
    let dir = scratch("figures").join("figs");
    std::fs::create_dir_all(dir.join("data")).unwrap();
    let listed: Vec<String> = pages
        .iter()
        .map(|(file, _)| {
            format!(
                r#"{{ "file": "{file}", "title": "{}" }}"#,
                &file[..file.len() - 3]
            )
        })
        .collect();
    let meta = format!(
        r#"{{ "id": "figs", "title": "Figures", "date": "2026-10-01", "state": "Done",
  "scope": "One cell", "decision": "None"{extra},
  "pages": [{}] }}"#,
        listed.join(", ")
    );
    std::fs::write(dir.join("campaign.json"), meta).unwrap();
    std::fs::write(dir.join("data/r.json"), DATA).unwrap();
    for (file, text) in pages.iter().chain(data) {
        std::fs::write(dir.join(file), text).unwrap();
    }
    seal(&dir);
    dir
}

/// `o` failed the strict check with exit 1; its whole stderr, the
/// scratch folder shown as `[DIR]`, is the snapshot `name`.
fn pinned_strict(name: &str, dir: &Path, o: &Output) {
    let err = stderr(o).replace(&dir.parent().unwrap().display().to_string(), "[DIR]");
    assert_eq!(o.status.code(), Some(1), "{err}");
    insta::assert_snapshot!(name, err);
}

#[test]
fn header_figures_are_checked_at_their_campaign_json_position() {
    let extra = r#",
  "summary": "Decode rose by 33.0% over 149.1 tok/s on 2x RTX PRO 6000 cards, [~12] of them quoted"#;
    let dir = campaign_of(
        &[("index.md", &format!("## Results\n{TABLE}"))],
        &[],
        &format!("{extra}\""),
    );
    let o = build(&dir, &site(&dir));
    assert!(o.status.success(), "{}", stderr(&o));
    // The change is computed by a page: the header, shown on every page,
    // may quote it; 149.1 matches nothing; the product model, the marked
    // figure and `2x` (two cards: not in the data) are handled as such.
    let figures = audit_figures(&dir, "figs");
    let header: Vec<_> = figures
        .iter()
        .filter(|f| f["page"] == "campaign.json")
        .collect();
    let texts: Vec<&str> = header.iter().map(|f| f["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["33.0%", "149.1", "2"]);
    assert_eq!(header[0]["at"], "3:30");
    assert_eq!(header[0]["source"], "table at index.md:3, `Change` row 1");
    // The reader sees the quoted figure without its marker.
    let index = read(&site(&dir).join("figs/index.html"));
    assert!(index.contains("cards, 12 of them quoted"), "{index}");
    assert!(!index.contains("[~12]"));
    pinned_strict("figures-header", &dir, &build_strict(&dir));
}

const FAILURES: &str = r#"{"id": "F1", "gate": "decode", "result": "passed 128/150 cells", "impact": "a 20.5% gap"}
{"id": "F2", "gate": "prefill", "result": "stalled after 1,324 bytes"}
"#;

const LEDGER: &str = r#"
```exhibit ledger
{ "source": "data/failures.jsonl", "title": "Kept failures" }
```
"#;

#[test]
fn ledger_strings_are_checked_where_the_data_file_types_them() {
    let dir = campaign_of(
        &[("index.md", &format!("## Failures\n{LEDGER}"))],
        &[("data/failures.jsonl", FAILURES)],
        "",
    );
    let o = build(&dir, &site(&dir));
    assert!(o.status.success(), "{}", stderr(&o));
    let figures = audit_figures(&dir, "figs");
    let listed: Vec<(&str, &str, &str, bool)> = figures
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or("");
            (s("file"), s("at"), s("text"), f["matched"].is_number())
        })
        .collect();
    let file = "data/failures.jsonl";
    assert_eq!(
        listed,
        [
            (file, "1:50", "128", true),
            (file, "1:54", "150", true),
            (file, "1:79", "20.5%", false),
            (file, "2:58", "1,324", true),
        ]
    );
    assert!(figures.iter().all(|f| f["page"] == "index.md"));
    pinned_strict("figures-ledger-strings", &dir, &build_strict(&dir));
}

#[test]
fn keyvalue_values_and_chart_labels_are_checked() {
    let setup = r#"{ "rows": [
  { "key": "Cells", "value": "128 of 150, at 149.02 tok/s" },
  { "key": "Batch", "value": "batch of 96" }
] }
"#;
    let page = r#"## Setup

```exhibit keyvalue
{ "source": "data/setup.json", "pointer": "/rows", "headers": ["Setting", "Value at 7 GPUs"] }
```

```exhibit chart
{ "title": "Decode", "type": "bar", "source": "data/r.json", "pointer": "/cells",
  "x": { "field": "name", "label": "Cell" },
  "y": { "label": "tok/s at 64 users" },
  "series": [ { "field": "after", "name": "After 112.07" } ] }
```
"#;
    let dir = campaign_of(&[("index.md", page)], &[("data/setup.json", setup)], "");
    let o = build(&dir, &site(&dir));
    assert!(o.status.success(), "{}", stderr(&o));
    let unmatched: Vec<String> = audit_figures(&dir, "figs")
        .iter()
        .filter(|f| f["matched"].is_null())
        .map(|f| {
            format!(
                "{} {} {}",
                f["file"].as_str().unwrap_or("-"),
                f["at"],
                f["text"]
            )
        })
        .collect();
    assert_eq!(
        unmatched,
        [
            r#"- "4:85" "7""#,
            r#"data/setup.json "3:40" "96""#,
            r#"- "10:29" "64""#,
        ]
    );
    pinned_strict("figures-keyvalue-chart", &dir, &build_strict(&dir));
}

#[test]
fn a_page_matches_only_the_values_it_computes() {
    // The change is computed on the first page: the second, which shows
    // no table, may not quote it as if it were data.
    let dir = campaign_of(
        &[
            (
                "index.md",
                &format!("## Results\n\nRose by 33.0%.\n{TABLE}"),
            ),
            ("other.md", "## Elsewhere\n\nRose by 33.0%.\n"),
        ],
        &[],
        "",
    );
    let o = build_strict(&dir);
    pinned_strict("figures-scoped-to-page", &dir, &o);
}

/// Strings spelled with escapes, as Python's `json.dump` writes them
/// (`\u00e9`, `\"`, `\n`): each figure is placed where the file spells it.
#[test]
fn figures_in_escaped_strings_are_placed_where_the_file_spells_them() {
    let failures = "{\"id\": \"F1\", \"gate\": \"d\\u00e9code\", \"result\": \"r\\u00e9sultat \\\"net\\\" 128 of 150\"}\n";
    let extra = ",\n  \"summary\": \"caf\\u00e9\\nat 149.1 tok/s\"";
    let dir = campaign_of(
        &[("index.md", &format!("## Failures\n{LEDGER}"))],
        &[("data/failures.jsonl", failures)],
        extra,
    );
    let o = build(&dir, &site(&dir));
    assert!(o.status.success(), "{}", stderr(&o));
    let campaign_json = read(&dir.join("campaign.json"));
    let placed = |file: &str, at: &str| {
        let text = read(&dir.join(file));
        let (line, col) = at.split_once(':').unwrap();
        let line = text
            .lines()
            .nth(line.parse::<usize>().unwrap() - 1)
            .unwrap()
            .to_string();
        line.chars()
            .skip(col.parse::<usize>().unwrap() - 1)
            .collect::<String>()
    };
    let figures = audit_figures(&dir, "figs");
    for f in &figures {
        let file = f["file"].as_str().unwrap_or("campaign.json");
        let text = f["text"].as_str().unwrap();
        let at = f["at"].as_str().unwrap();
        assert!(
            placed(file, at).starts_with(text),
            "{file}:{at} is not `{text}`: {campaign_json}"
        );
    }
    let texts: Vec<&str> = figures
        .iter()
        .map(|f| f["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["149.1", "128", "150"]);
}

/// The dense worst case for data strings: 20,000 ledger records whose
/// `result` holds a private address, so the record holds it redacted and
/// the file never spells it so. The build stays linear, and no figure of
/// a redacted string (nor the address) reaches audit.json.
#[test]
fn many_redacted_data_strings_stay_linear_and_private() {
    let failures: String = (0..20_000)
        .map(|i| {
            format!("{{\"id\": \"F{i}\", \"gate\": \"g\", \"result\": \"host 10.0.0.5 at {i}.5 tok/s\"}}\n")
        })
        .collect();
    let dir = campaign_of(
        &[("index.md", &format!("## Failures\n{LEDGER}"))],
        &[("data/failures.jsonl", &failures)],
        "",
    );
    let o = build(&dir, &site(&dir));
    assert!(o.status.success(), "{}", stderr(&o));
    let audit = read(&site(&dir).join("figs/audit.json"));
    assert!(!audit.contains("10.0.0.5"));
    assert!(audit_figures(&dir, "figs")
        .iter()
        .all(|f| f["file"].as_str() != Some("data/failures.jsonl")));
}
