//! Expressions over data: `*` fan-out, broadcast, list statistics, the
//! bootstrap interval, scaled formats, table baselines, filters and missing
//! cells, and real hyperfine output. Every expected figure is computed here
//! from the fixture's JSON, independently of exhibit's own arithmetic.

use super::*;
use serde_json::Value;

/// Seal and build `dir`; the built page `ID/index.html`.
fn built_page(dir: &Path, id: &str) -> String {
    seal(dir);
    let out = dir.parent().unwrap().join("site");
    let o = build(dir, &out);
    assert!(o.status.success(), "build failed: {}", stderr(&o));
    read(&out.join(id).join("index.html"))
}

fn json(dir: &Path, file: &str) -> Value {
    serde_json::from_str(&read(&dir.join(file))).unwrap()
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// The value of the inline reference in the list item `- LABEL: ...`.
fn quoted(html: &str, label: &str) -> String {
    let at = html
        .find(&format!("<li>{label}: <span class=\"ref\""))
        .unwrap_or_else(|| panic!("no item {label}"));
    let rest = &html[at..];
    let start = rest.find('>').unwrap() + 1;
    let start = start + rest[start..].find('>').unwrap() + 1;
    let end = start + rest[start..].find("</span>").unwrap();
    rest[start..end].to_string()
}

/// The cells of every body row: (text, title attribute).
fn body_rows(html: &str) -> Vec<Vec<(String, Option<String>)>> {
    let body = &html[html.find("<tbody>").unwrap()..html.find("</tbody>").unwrap()];
    body.split("<tr>")
        .skip(1)
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|cell| {
                    let open = cell.find('>').unwrap();
                    let title = cell[..open]
                        .split_once("title=\"")
                        .map(|(_, t)| t[..t.find('"').unwrap()].to_string());
                    let text = cell[open + 1..cell.find("</td>").unwrap()].to_string();
                    (text, title)
                })
                .collect()
        })
        .collect()
}

// Independent arithmetic: the definitions FORMAT.md states.
fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v
}

fn median(xs: &[f64]) -> f64 {
    let v = sorted(xs);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// numpy's default percentile: rank (n-1)q/100, linear between neighbours.
fn percentile(xs: &[f64], q: f64) -> f64 {
    let v = sorted(xs);
    let rank = (v.len() - 1) as f64 * q / 100.0;
    let (lo, frac) = (rank.floor() as usize, rank - rank.floor());
    if lo + 1 < v.len() {
        v[lo] * (1.0 - frac) + v[lo + 1] * frac
    } else {
        v[lo]
    }
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

fn stddev(xs: &[f64]) -> f64 {
    let m = mean(xs);
    (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() as f64 - 1.0)).sqrt()
}

fn signed(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    if s.starts_with('-') && s.trim_start_matches(['-', '0', '.']).is_empty() {
        format!("+{}", &s[1..])
    } else if s.starts_with('-') {
        s
    } else {
        format!("+{s}")
    }
}

#[test]
fn every_list_function_matches_an_independent_computation() {
    let dir = fixture("claims-stats");
    let data = json(&dir, "data/values.json");
    let html = built_page(&dir, "stats");
    let even = numbers(&data["even"]);
    let odd = numbers(&data["odd"]);
    let times = numbers(&data["times"]);
    let six = |v: f64| format!("{v:.6}");
    let want = [
        ("count", even.len().to_string()),
        ("sum", format!("{}", even.iter().sum::<f64>())),
        ("min", format!("{}", sorted(&even)[0])),
        ("max", format!("{}", sorted(&even)[even.len() - 1])),
        ("mean", six(mean(&even))),
        ("median-even", six(median(&even))),
        ("median-odd", six(median(&odd))),
        ("stddev", six(stddev(&even))),
        ("p90", six(percentile(&even, 90.0))),
        ("p25-odd", six(percentile(&odd, 25.0))),
        ("median-times", six(median(&times))),
    ];
    // An even count's median is the mean of the middle two; p90 of eight
    // values interpolates between the 7th and 8th.
    assert_eq!(even.len() % 2, 0);
    for (label, value) in want {
        assert_eq!(quoted(&html, label), value, "{label}");
    }
}

#[test]
fn fan_out_joins_nests_and_broadcasts() {
    let dir = fixture("claims-stats");
    let data = json(&dir, "data/values.json");
    let html = built_page(&dir, "stats");
    let cells = data["cells"].as_array().unwrap();
    let f = |c: &Value, k: &str| c[k].as_f64().unwrap();
    let after: f64 = cells.iter().map(|c| f(c, "after")).sum();
    assert_eq!(quoted(&html, "fan-sum"), format!("{after}"));
    let nested: f64 = data["grid"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| numbers(&g["row"]))
        .sum();
    assert_eq!(quoted(&html, "fan-nested"), format!("{nested}"));
    // element-wise: each cell's own before against its own after
    let changes: Vec<f64> = cells
        .iter()
        .map(|c| (f(c, "after") - f(c, "before")) / f(c, "before") * 100.0)
        .collect();
    let max = changes.iter().cloned().fold(f64::MIN, f64::max);
    let min = changes.iter().cloned().fold(f64::MAX, f64::min);
    assert_eq!(quoted(&html, "max-change"), format!("{}%", signed(max, 1)));
    assert_eq!(quoted(&html, "min-change"), format!("{}%", signed(min, 1)));
    // a single value broadcast against the list, on either side
    let first = f(&cells[0], "after");
    let diffs = cells.iter().map(|c| f(c, "after") - first);
    assert_eq!(
        quoted(&html, "broadcast"),
        format!("{}", diffs.fold(f64::MIN, f64::max))
    );
    let base = f(&cells[0], "before");
    let ratios = cells.iter().map(|c| base / f(c, "before"));
    assert_eq!(
        quoted(&html, "broadcast-list-first"),
        format!("{:.3}", ratios.fold(f64::MAX, f64::min))
    );
    let joined = [
        f(&cells[0], "before"),
        f(&cells[1], "after"),
        f(&cells[2], "after"),
    ];
    assert_eq!(
        quoted(&html, "joined"),
        format!("{}", joined.iter().cloned().fold(f64::MIN, f64::max))
    );
}

#[test]
fn scaled_formats_and_a_signed_zero() {
    let dir = fixture("claims-stats");
    let data = json(&dir, "data/values.json");
    let html = built_page(&dir, "stats");
    let times = numbers(&data["times"]);
    assert_eq!(
        quoted(&html, "ms"),
        format!("{:.1} ms", median(&times) * 1000.0)
    );
    let c = &data["cells"][0];
    let pct = c["after"].as_f64().unwrap() / c["before"].as_f64().unwrap() * 100.0;
    assert_eq!(quoted(&html, "percent"), format!("{pct:.1}%"));
    assert_eq!(quoted(&html, "zero-signed"), "+0.0%");
}

fn bootstrap_build(dir: &Path, out: &Path, threads: &str) -> Vec<(String, Vec<u8>)> {
    let o = run(exhibit()
        .arg("build")
        .arg(dir)
        .arg("-o")
        .arg(out)
        .env("RAYON_NUM_THREADS", threads));
    assert!(o.status.success(), "{}", stderr(&o));
    tree(out)
}

#[test]
fn bootstrap_interval_is_repeatable_and_holds_the_median() {
    let dir = fixture("claims-stats");
    seal(&dir);
    let root = dir.parent().unwrap();
    let one = bootstrap_build(&dir, &root.join("a"), "1");
    let again = bootstrap_build(&dir, &root.join("b"), "1");
    let two = bootstrap_build(&dir, &root.join("c"), "2");
    assert!(one == again, "two builds differ");
    assert!(one == two, "one thread and two threads differ");
    let html = read(&root.join("a/stats/index.html"));
    let num = |l: &str| quoted(&html, l).parse::<f64>().unwrap();
    let (lo, med, hi) = (num("ci-low"), num("median-times"), num("ci-high"));
    let times = numbers(&json(&dir, "data/values.json")["times"]);
    let (min, max) = (sorted(&times)[0], sorted(&times)[times.len() - 1]);
    assert!(
        min <= lo && lo < med && med < hi && hi <= max,
        "{lo} {med} {hi}"
    );
}

/// Replace the stats page with one reference; the build's stderr.
fn failing_ref(expr: &str) -> String {
    let dir = fixture("claims-stats");
    std::fs::write(
        dir.join("index.md"),
        format!("## E\n\nText `=data/values.json#{expr}` here.\n"),
    )
    .unwrap();
    seal(&dir);
    let o = build(&dir, &dir.parent().unwrap().join("site"));
    assert_eq!(o.status.code(), Some(2), "{expr}: {}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.matches("error:").count(), 1, "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("index.md:3:6"), "{expr}: {err}");
    err
}

#[test]
fn bad_expressions_fail_at_their_position() {
    for (expr, want) in [
        (
            "sum(/object/*/a)",
            "`/object` is an object, not an array, so `*` cannot fan out over it",
        ),
        (
            "sum(/labels)",
            "`sum` needs numbers: `/labels/0` is the text \"x\", not a number",
        ),
        ("median(/empty)", "`median` over an empty list"),
        (
            "avg(/even)",
            "`avg(/even)` at column 1: unknown function `avg`",
        ),
        (
            "ratio(/even)",
            "`ratio(/even)` at column 1: `ratio` takes 2 values",
        ),
        ("ci_low(/even, /odd)", "`ci_low` takes 1 value, found 2"),
        (
            "max(/even",
            "`max(/even` at column 10: `max(` lacks its closing `)`",
        ),
        ("/even", "`even` is a list of 8 values, not one value"),
        (
            "ratio(/even, /odd)",
            "`ratio` pairs its lists element by element, but they hold 8 and 5 values",
        ),
    ] {
        let err = failing_ref(expr);
        assert!(err.contains(want), "{expr}: {err}");
    }
}

#[test]
fn a_bad_column_expression_is_reported_at_its_block_before_data_is_read() {
    let dir = fixture("claims-table");
    let page = read(&dir.join("index.md")).replace(
        "pct_change(baseline(/seconds), /seconds)",
        "pct_change(baseline(/seconds), /seconds",
    );
    std::fs::write(dir.join("index.md"), page).unwrap();
    // the data file is gone: the expression must fail first
    std::fs::write(dir.join("data/codecs.json"), "not json").unwrap();
    seal(&dir);
    let o = build(&dir, &dir.parent().unwrap().join("site"));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("index.md:3:1"), "{err}");
    assert!(
        err.contains("column `Time vs gzip-6`: `pct_change(baseline(/seconds), /seconds` at column 40: `pct_change(` lacks its closing `)`"),
        "{err}"
    );
}

#[test]
fn table_baseline_filter_and_missing_cell() {
    let dir = fixture("claims-table");
    let data = json(&dir, "data/codecs.json");
    let html = built_page(&dir, "codecs");
    let rows = body_rows(&html);
    let runs: Vec<&Value> = data["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] != "skipped")
        .collect();
    assert_eq!(rows.len(), runs.len(), "the skipped row is filtered out");
    let base = runs.iter().find(|r| r["codec"] == "gzip-6").unwrap()["seconds"]
        .as_f64()
        .unwrap();
    for (row, run) in rows.iter().zip(&runs) {
        assert_eq!(row[0].0, run["codec"].as_str().unwrap());
        match run["seconds"].as_f64() {
            Some(s) => {
                let ms = format!("{:.0}", s * 1000.0);
                let ms = if ms.len() > 3 {
                    format!("{},{}", &ms[..ms.len() - 3], &ms[ms.len() - 3..])
                } else {
                    ms
                };
                assert_eq!(row[1].0, format!("{ms} ms"));
                let pct = (s - base) / base * 100.0;
                assert_eq!(row[3].0, format!("{}%", signed(pct, 1)));
                assert_eq!(row[4].0, format!("{:.2}x", s / base));
                let size = run["ratio"].as_f64().unwrap() * 100.0;
                assert_eq!(row[2].0, format!("{size:.0}%"));
            }
            None => {
                for (text, title) in &row[1..] {
                    assert_eq!(text, "—");
                    let title = title.as_deref().unwrap_or_default();
                    assert!(
                        title.starts_with("no value: ") && title.contains("null"),
                        "{title}"
                    );
                }
            }
        }
    }
    assert!(
        rows.iter().any(|r| r[3].0 == "+0.0%"),
        "the baseline row is +0.0%"
    );
}

#[test]
fn table_baseline_errors() {
    for (from, to, want) in [
        (
            "\"equals\": \"gzip-6\"",
            "\"equals\": \"brotli\"",
            "baseline: no record has `codec` equal to \"brotli\"",
        ),
        (
            "\"baseline\": { \"field\": \"codec\", \"equals\": \"gzip-6\" },",
            "",
            "column `Time vs gzip-6` reads `baseline(…)`, but the table names no `baseline` row",
        ),
        (
            "\"field\": \"seconds\", \"format\"",
            "\"field\": \"secs\", \"format\"",
            "record data/codecs.json#/runs/0: `secs` is missing",
        ),
    ] {
        let dir = fixture("claims-table");
        let page = read(&dir.join("index.md"));
        assert!(page.contains(from));
        std::fs::write(dir.join("index.md"), page.replace(from, to)).unwrap();
        seal(&dir);
        let o = build(&dir, &dir.parent().unwrap().join("site"));
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(want) && err.contains("index.md:3:1"), "{err}");
    }
}

#[test]
fn hyperfine_output_builds_with_no_conversion() {
    let dir = fixture("claims-hyperfine");
    let data = json(&dir, "data/gzip.json");
    let html = built_page(&dir, "gzip-levels");
    let results = data["results"].as_array().unwrap();
    let med = |r: &Value| median(&numbers(&r["times"]));
    let base = med(results.iter().find(|r| r["command"] == "gzip-6").unwrap());
    let rows = body_rows(&html);
    assert_eq!(rows.len(), 3);
    for (row, r) in rows.iter().zip(results) {
        let m = med(r);
        let bytes: f64 = r["parameters"]["bytes"].as_str().unwrap().parse().unwrap();
        assert_eq!(row[0].0, r["command"].as_str().unwrap());
        assert_eq!(row[1].0, format!("{:.1} ms", m * 1000.0));
        assert_eq!(row[2].0, format!("{:.2} MB/s", bytes / m / 1e6));
        assert_eq!(
            row[3].0,
            format!("{}%", signed((m - base) / base * 100.0, 1))
        );
    }
    // hyperfine's own median field agrees with ours over `times`
    for r in results {
        assert!((r["median"].as_f64().unwrap() - med(r)).abs() < 1e-9);
    }
    let six = numbers(&results[1]["times"]);
    assert!(html.contains(&format!(
        "Median of five runs {:.1} ms, 95% interval",
        median(&six) * 1000.0
    )));
}

#[test]
fn format_doc_function_table_shows_what_the_build_shows() {
    // Each row of FORMAT.md's function table names an example and what it
    // shows; the doc's example page quotes the same expression under the
    // function's name, and the built page must show the documented figure.
    let doc = read(&repo().join("docs/FORMAT.md"));
    let dir = super::format_doc::doc_campaign();
    let html = built_page(&dir, "demo-decode");
    let mut checked = 0;
    for row in doc.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = row.split(" | ").collect();
        let [_, _, example, shows] = cells[..] else {
            continue;
        };
        let (Some(example), Some(shows)) = (
            example.strip_prefix('`').and_then(|e| e.strip_suffix('`')),
            shows
                .strip_suffix(" |")
                .and_then(|s| s.strip_prefix('`')?.strip_suffix('`')),
        ) else {
            continue;
        };
        let Some((name, _)) = example.split_once('(') else {
            continue; // a row of the format table
        };
        let item = format!("- {name}: `=data/runs.json#{example}`");
        assert!(doc.contains(&item), "FORMAT.md's example page lacks {item}");
        assert_eq!(quoted(&html, name), shows, "{name}");
        checked += 1;
    }
    assert!(checked >= 9, "only {checked} documented functions checked");
}

/// The text after `at` up to the next `<` with every tag removed.
fn text_from(html: &str, at: &str, len: usize) -> String {
    let start = html.find(at).unwrap_or_else(|| panic!("no {at}"));
    let mut out = String::new();
    let mut in_tag = false;
    for c in html[start..].chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
        if out.chars().count() >= len {
            break;
        }
    }
    out
}

#[test]
fn sample_card_range_and_sweep_total_follow_the_data() {
    // Change two values of the sample so another cell holds the smallest
    // decode change and the depths sum to a new total; reseal and rebuild.
    let root = scratch("claims-sample");
    copy_tree(&repo().join("sample-artifacts"), &root.join("s"));
    let campaign = root.join("s/glm53-flash-linux-vs-wsl");
    let edit = |file: &str, f: &dyn Fn(&mut Value)| {
        let mut v = json(&campaign, file);
        f(&mut v);
        std::fs::write(
            campaign.join(file),
            serde_json::to_string_pretty(&v).unwrap(),
        )
        .unwrap();
    };
    edit("data/measurements.json", &|v| {
        v["cells"][1]["linux_decode"] = 100.0.into()
    });
    edit("data/context-sweep.json", &|v| {
        // The campaign checks that the depths sum to the totals, and that
        // every case passed or failed: the failed passes become incorrect.
        let lost = v["depths"][0]["passed"].as_i64().unwrap() - 20;
        v["depths"][0]["passed"] = 20.into();
        let totals = &mut v["totals"];
        totals["passed"] = (totals["passed"].as_i64().unwrap() - lost).into();
        totals["incorrect"] = (totals["incorrect"].as_i64().unwrap() + lost).into();
    });
    let o = run(exhibit().arg("seal").arg("--update").arg(&campaign));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = root.join("site");
    let o = build(&root.join("s"), &out);
    assert!(o.status.success(), "{}", stderr(&o));

    let m = json(&campaign, "data/measurements.json");
    let changes: Vec<f64> = m["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let (w, l) = (
                c["wsl_decode"].as_f64().unwrap(),
                c["linux_decode"].as_f64().unwrap(),
            );
            (l - w) / w * 100.0
        })
        .collect();
    let lo = changes.iter().cloned().fold(f64::MAX, f64::min);
    let hi = changes.iter().cloned().fold(f64::MIN, f64::max);
    let page = read(&out.join("glm53-flash-linux-vs-wsl/index.html"));
    assert!(
        page.contains(&format!("decode medians rose by {lo:.1}–{hi:.1}%")),
        "{}",
        text_from(&page, "card-summary", 120)
    );

    let s = json(&campaign, "data/context-sweep.json");
    let depths = s["depths"].as_array().unwrap();
    let sum = |k: &str| depths.iter().map(|d| d[k].as_i64().unwrap()).sum::<i64>();
    let quality = read(&out.join("glm53-flash-linux-vs-wsl/quality.html"));
    let want = format!(
        "The native extended-context sweep ran\n{} cases and passed\n{}. Of the\n{} that did",
        sum("cases"),
        sum("passed"),
        sum("cases") - sum("passed")
    );
    let got = text_from(
        &quality,
        "The native extended-context sweep",
        want.chars().count(),
    );
    assert_eq!(got, want);
}

fn fails_with(dir: &Path, want: &str) {
    seal(dir);
    let o = build(dir, &dir.parent().unwrap().join("site"));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.matches("error:").count(), 1, "{err}");
    assert!(err.contains(want), "{err}");
}

#[test]
fn a_card_has_no_baseline_and_a_column_needs_one_value() {
    let dir = fixture("claims-hyperfine");
    let page = read(&dir.join("index.md"));
    let page = page.replace("{min(/results/*/median)", "{baseline(/results/0/median)");
    std::fs::write(dir.join("index.md"), page).unwrap();
    fails_with(&dir, "index.md:22:1");
    fails_with(
        &dir,
        "card item `Fastest level`: `baseline(…)` reads a table's baseline row; a card has none",
    );

    let dir = fixture("claims-table");
    let mut data = json(&dir, "data/codecs.json");
    for run in data["runs"].as_array_mut().unwrap() {
        run["ratio"] = Value::Null;
    }
    std::fs::write(dir.join("data/codecs.json"), data.to_string()).unwrap();
    fails_with(
        &dir,
        "column `Size` has no value in any row: `ratio` is null, not a number",
    );
}
