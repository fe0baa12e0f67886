//! Data files as benchmark tools write them (tests/fixtures/formats/, real
//! captured output: see its README.md): every figure the built pages show
//! is checked against a value this test computes from the fixture itself,
//! and each kind of bad input exits 2 with one positioned message.

use super::*;
use serde_json::Value;

const FIXTURE: &str = "formats";

/// The fixture, sealed and built: (campaign folder, output folder).
fn built() -> (PathBuf, PathBuf) {
    let dir = fixture(FIXTURE);
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "build failed: {}", stderr(&o));
    (dir, out)
}

fn page(out: &Path, name: &str) -> String {
    read(&out.join(FIXTURE).join(name))
}

fn json(name: &str) -> Value {
    let path = repo().join("tests/fixtures").join(FIXTURE).join(name);
    serde_json::from_str(&read(&path)).unwrap()
}

/// The body rows of the figure whose caption is `caption`, as cell texts
/// (as escaped in the page: the fixture's texts hold no markup characters).
pub(super) fn rows(html: &str, caption: &str) -> Vec<Vec<String>> {
    let start = html
        .find(&format!("<figcaption>{caption}</figcaption>"))
        .unwrap_or_else(|| panic!("no figure captioned {caption}"));
    let rest = &html[start..];
    let body = &rest[rest.find("<tbody>").unwrap()..rest.find("</tbody>").unwrap()];
    let row = regex::Regex::new(r"(?s)<tr[^>]*>(.*?)</tr>").unwrap();
    let cell = regex::Regex::new(r"(?s)<t[dh][^>]*>(.*?)</t[dh]>").unwrap();
    let tag = regex::Regex::new(r"<[^>]+>").unwrap();
    row.captures_iter(body)
        .map(|r| {
            cell.captures_iter(&r[1])
                .map(|c| tag.replace_all(&c[1], "").into_owned())
                .collect()
        })
        .collect()
}

fn nums(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

fn median(xs: &[f64]) -> f64 {
    let mut s = xs.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// Sample standard deviation (n - 1), as hyperfine reports it.
fn stddev(xs: &[f64]) -> f64 {
    let m = mean(xs);
    (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64).sqrt()
}

#[test]
fn hyperfine_commands_show_statistics_of_their_times() {
    let (_, out) = built();
    let html = page(&out, "index.html");
    let export = json("data/runs/compress/hyperfine.json");
    let results = export["results"].as_array().unwrap();
    let table = rows(&html, "hyperfine");
    assert_eq!(table.len(), results.len());
    for (row, r) in table.iter().zip(results) {
        let times = nums(&r["times"]);
        let failed = r["exit_codes"].as_array().unwrap().iter().any(|c| c != 0);
        let expect = vec![
            r["command"].as_str().unwrap().to_string(),
            format!("{:.4}", mean(&times)),
            format!("{:.4}", median(&times)),
            format!("{:.4}", stddev(&times)),
            failed.to_string(),
        ];
        assert_eq!(row, &expect);
    }
    // The card reads the first command's record.
    let first = nums(&results[0]["times"]);
    assert!(
        html.contains(&format!("{:.4} s", mean(&first))),
        "card mean"
    );
    assert!(html.contains(&format!(
        "{} runs, median {:.4} s",
        first.len(),
        median(&first)
    )));
    // The chart draws every command.
    assert_eq!(wide_charts(&html).len(), 2, "hyperfine and power charts");
}

#[test]
fn failed_hyperfine_commands_reach_the_ledger_from_a_glob() {
    let (_, out) = built();
    let html = page(&out, "index.html");
    let export = json("data/runs/compress/hyperfine.json");
    let failing: Vec<&Value> = export["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["exit_codes"].as_array().unwrap().iter().any(|c| c != 0))
        .collect();
    assert_eq!(failing.len(), 1, "the fixture has one failing command");
    let ledger = rows(&html, "Failed commands");
    // The failing command of the export, then the empty export of the
    // run hyperfine aborted: in path order.
    assert_eq!(ledger.len(), 2, "{ledger:?}");
    let command = failing[0]["command"].as_str().unwrap();
    assert_eq!(ledger[0][1], format!("compress: {command}"));
    assert!(ledger[0][2].contains(&format!(
        "in {n} of {n} runs",
        n = failing[0]["times"].as_array().unwrap().len()
    )));
    assert_eq!(ledger[0][4], "data/runs/compress/hyperfine.json");
    assert_eq!(ledger[1][1], "failed: ");
    assert!(ledger[1][2].starts_with("empty export"), "{:?}", ledger[1]);
    assert_eq!(ledger[1][4], "data/runs/failed/hyperfine.json");
    // The campaign's ledger page has them too.
    let all = page(&out, "ledger.html");
    assert!(all.contains(command), "ledger page");
    // The glob's source note lists each file with its published hash.
    for f in [
        "data/runs/compress/hyperfine.json",
        "data/runs/failed/hyperfine.json",
    ] {
        let sums = read(&out.join(FIXTURE).join("SHA256SUMS"));
        let sha = sums
            .lines()
            .find(|l| l.ends_with(&format!("  {f}")))
            .unwrap_or_else(|| panic!("{f} not in SHA256SUMS"))
            .split_whitespace()
            .next()
            .unwrap()
            .to_string();
        assert!(
            html.contains(&format!(
                "{f}</a> · <span class=\"hash\" title=\"sha256 {sha}\">"
            )),
            "{f}"
        );
    }
}

/// nvidia-smi's header units come off the names; cells become numbers.
#[test]
fn nvidia_smi_csv_reads_as_written() {
    let (_, out) = built();
    let html = page(&out, "index.html");
    let csv = read(&repo().join("tests/fixtures/formats/data/gpu.csv"));
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(", ").collect();
    assert_eq!(header[2], "utilization.gpu [%]");
    let table = rows(&html, "nvidia-smi");
    let data: Vec<Vec<&str>> = lines.map(|l| l.split(", ").collect()).collect();
    assert_eq!(table.len(), data.len());
    let strip = |cell: &str, unit: &str| -> f64 {
        cell.strip_suffix(unit).unwrap().trim().parse().unwrap()
    };
    for (row, cells) in table.iter().zip(&data) {
        let util = strip(cells[2], "%");
        let mem = strip(cells[3], "MiB") as u64;
        let power = strip(cells[4], "W");
        let mem_grouped = format!("{},{:03}", mem / 1000, mem % 1000);
        assert_eq!(
            row,
            &vec![
                cells[0].to_string(),
                format!("{util}"),
                mem_grouped,
                format!("{power:.1}"),
            ]
        );
    }
    // The header's unit labels the chart's axis ("y": {"label": "Power"}).
    let unit = header[4].rsplit_once('[').unwrap().1.trim_end_matches(']');
    assert!(
        wide_charts(&html)[1].contains(&format!("Power ({unit})")),
        "axis unit"
    );
    // A TSV file reads the same way.
    let tsv = rows(&html, "Arms");
    assert_eq!(tsv, vec![vec!["linux", "1184.2"], vec!["wsl", "890.4"]]);
    // CSV files are published and hashed like any data file.
    let copy = out.join(FIXTURE).join("data/gpu.csv");
    assert_eq!(read(&copy), csv);
    assert!(read(&out.join(FIXTURE).join("SHA256SUMS")).contains("  data/gpu.csv\n"));
}

#[test]
fn criterion_estimates_through_a_glob_with_captures() {
    let (_, out) = built();
    let html = page(&out, "criterion.html");
    let table = rows(&html, "checksum");
    let benches = ["4KiB", "64KiB"];
    assert_eq!(table.len(), benches.len());
    for (row, b) in table.iter().zip(benches) {
        let dir = format!("data/criterion/checksum/{b}/new");
        let est = json(&format!("{dir}/estimates.json"));
        let meta = json(&format!("{dir}/benchmark.json"));
        let ci = &est["mean"]["confidence_interval"];
        assert_eq!(
            row,
            &vec![
                meta["full_id"].as_str().unwrap().to_string(),
                format!("checksum/{b}"),
                format!("{:.1}", est["mean"]["point_estimate"].as_f64().unwrap()),
                format!("{:.1}", ci["lower_bound"].as_f64().unwrap()),
                format!("{:.1}", ci["upper_bound"].as_f64().unwrap()),
                format!("{:.1}", est["median"]["point_estimate"].as_f64().unwrap()),
            ]
        );
    }
}

#[test]
fn pytest_benchmark_statistics_of_its_rounds() {
    let (_, out) = built();
    let html = page(&out, "tools.html");
    let report = json("data/pytest-benchmark.json");
    let table = rows(&html, "zlib");
    let benches = report["benchmarks"].as_array().unwrap();
    assert_eq!(table.len(), benches.len());
    for (row, b) in table.iter().zip(benches) {
        let data = nums(&b["stats"]["data"]);
        assert_eq!(
            row,
            &vec![
                b["name"].as_str().unwrap().to_string(),
                format!("{:.6}", mean(&data)),
                format!("{:.6}", median(&data)),
                data.len().to_string(),
            ]
        );
    }
}

#[test]
fn google_benchmark_rows_and_aggregates() {
    let (_, out) = built();
    let html = page(&out, "tools.html");
    let report = json("data/google-benchmark.json");
    let table = rows(&html, "Every row");
    let all = report["benchmarks"].as_array().unwrap();
    assert_eq!(table.len(), all.len());
    for family in ["BM_StringCopy/64", "BM_StringCopy/4096", "BM_Accumulate"] {
        let runs: Vec<f64> = all
            .iter()
            .filter(|r| r["run_name"] == family && r["run_type"] == "iteration")
            .map(|r| r["cpu_time"].as_f64().unwrap())
            .collect();
        assert_eq!(runs.len(), 3, "{family}: three repetitions");
        let find = |agg: &str| {
            table
                .iter()
                .find(|r| r[0] == format!("{family}_{agg}"))
                .unwrap_or_else(|| panic!("{family}_{agg} row"))
                .clone()
        };
        let m = find("mean");
        assert_eq!(m[1], "mean");
        assert_eq!(m[2], format!("{:.2}", mean(&runs)));
        assert_eq!(find("median")[2], format!("{:.2}", median(&runs)));
        assert_eq!(find("stddev")[2], format!("{:.2}", stddev(&runs)));
    }
    // A repetition row has no aggregate name.
    assert_eq!(table[0][1], "");
}

#[test]
fn vllm_and_sglang_results() {
    let (_, out) = built();
    let html = page(&out, "serving.html");
    let vllm = json("data/vllm-serve.json");
    let tok_s = vllm["total_output_tokens"].as_f64().unwrap() / vllm["duration"].as_f64().unwrap();
    assert!(
        html.contains(&format!("{tok_s:.1} tok/s")),
        "vLLM output throughput"
    );
    assert!(html.contains(&format!("{:.1} ms", vllm["p99_ttft_ms"].as_f64().unwrap())));
    let lines = read(&repo().join("tests/fixtures/formats/data/sglang-serving.jsonl"));
    let runs: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let table = rows(&html, "bench_serving");
    assert_eq!(table.len(), runs.len());
    for (row, r) in table.iter().zip(&runs) {
        let f = |k: &str| format!("{:.1}", r[k].as_f64().unwrap());
        let derived = r["total_output_tokens"].as_f64().unwrap() / r["duration"].as_f64().unwrap();
        // SGLang's throughput is its tokens over its duration.
        assert!((derived - r["output_throughput"].as_f64().unwrap()).abs() / derived < 0.01);
        assert_eq!(
            row,
            &vec![
                f("request_rate"),
                f("output_throughput"),
                f("median_ttft_ms"),
                f("p99_itl_ms")
            ]
        );
    }
}

/// Break the fixture with `edit`, reseal, build: exit 2, one message
/// naming each of `expect`.
fn bad(edit: impl FnOnce(&Path), expect: &[&str]) {
    let dir = fixture(FIXTURE);
    edit(&dir);
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "stderr:\n{err}");
    for e in expect {
        assert!(err.contains(e), "stderr lacks {e:?}:\n{err}");
    }
    assert!(!err.contains("panicked"));
    assert_eq!(err.matches("error:").count(), 1, "one message:\n{err}");
    assert!(!out.exists(), "no half-written site");
}

fn edit_file(dir: &Path, rel: &str, f: impl FnOnce(String) -> String) {
    let path = dir.join(rel);
    let text = read(&path);
    std::fs::write(&path, f(text)).unwrap();
}

#[test]
fn truncated_json_is_an_error_at_its_end() {
    bad(
        |d| {
            edit_file(d, "data/runs/compress/hyperfine.json", |t| {
                t[..300].to_string()
            });
        },
        &["EOF while parsing", "data/runs/compress/hyperfine.json:"],
    );
}

#[test]
fn ragged_csv_row_is_an_error_at_the_row() {
    bad(
        |d| {
            edit_file(d, "data/gpu.csv", |t| {
                t + "2026/10/01 12:00:03.000, NVIDIA H100 80GB HBM3, 10 %\n"
            })
        },
        &[
            "data/gpu.csv:5:1",
            "this row has 3 fields, the header has 5",
        ],
    );
}

#[test]
fn non_number_in_a_unit_column_is_an_error_at_the_cell() {
    let csv = read(&repo().join("tests/fixtures/formats/data/gpu.csv"));
    let line = csv.lines().nth(2).unwrap().replacen("95 %", "busy %", 1);
    let at = format!("data/gpu.csv:3:{}", line.find("busy").unwrap() + 1);
    bad(
        |d| edit_file(d, "data/gpu.csv", |t| t.replacen("95 %", "busy %", 1)),
        &[
            &at,
            "column `utilization.gpu` [%]: `busy %` is not a number in %",
        ],
    );
}

#[test]
fn unknown_hyperfine_shape_is_an_error_at_the_field() {
    bad(
        |d| {
            edit_file(d, "data/runs/compress/hyperfine.json", |t| {
                t.replacen("\"mean\": 0.", "\"mean\": \"0.", 1).replacen(
                    ",\n      \"stddev\"",
                    "\",\n      \"stddev\"",
                    1,
                )
            })
        },
        &[
            "not a hyperfine --export-json file this version of exhibit knows",
            "invalid type: string",
            "data/runs/compress/hyperfine.json:5:",
        ],
    );
}

#[test]
fn glob_matching_nothing_is_an_error_at_the_block() {
    bad(
        |d| {
            edit_file(d, "index.md", |t| {
                t.replace(
                    "data/runs/*/hyperfine.json",
                    "data/nothing/*/hyperfine.json",
                )
            })
        },
        &[
            "index.md:37:1",
            "source `data/nothing/*/hyperfine.json` matches no file of the manifest",
        ],
    );
}

/// docs/FORMAT.md's data-file examples build as a page of the doc's
/// campaign, with the figures its data files give.
#[test]
fn format_doc_tools_page_builds() {
    let dir = super::format_doc::doc_campaign();
    edit_file(&dir, "campaign.json", |t| {
        let mut c: Value = serde_json::from_str(&t).unwrap();
        c["pages"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({ "file": "tools.md", "title": "Tools" }));
        // The tools page's ledger adds the failed hyperfine run, which
        // failures.jsonl does not hold: the doc's check that every retained
        // failure has a record there would (rightly) fail.
        c["checks"]
            .as_array_mut()
            .unwrap()
            .retain(|k| !k["at_most"].to_string().contains("=ledger#count"));
        c.to_string()
    });
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = read(&out.join("demo-decode/tools.html"));
    let runs = rows(&html, "Compression runs");
    let mut expect = Vec::new();
    for run in ["gzip-1", "gzip-9"] {
        let path = dir.join(format!("data/runs/{run}/hyperfine.json"));
        let v: Value = serde_json::from_str(&read(&path)).unwrap();
        let r = &v["results"][0];
        let failed = r["exit_codes"].as_array().unwrap().iter().any(|c| c != 0);
        expect.push(vec![
            run.to_string(),
            format!("{:.3}", r["mean"].as_f64().unwrap()),
            failed.to_string(),
        ]);
    }
    assert_eq!(runs, expect);
    let gpu = rows(&html, "GPU");
    assert_eq!(gpu, vec![vec!["81,234", "580.2"], vec!["81,234", "574.5"]]);
    let ledger = rows(&html, "Failed commands");
    assert_eq!(ledger.len(), 1);
    // The entry names the run by the glob's capture, as an empty export
    // (whose record has no command) would be named too.
    let failed: Vec<&str> = expect
        .iter()
        .filter(|r| r[2] == "true")
        .map(|r| r[0].as_str())
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(ledger[0][1], format!("the {} run exits 0", failed[0]));
}

/// A CSV file is redacted like any data file: a private address in a cell
/// reaches neither the page nor the published copy.
#[test]
fn csv_cells_are_redacted() {
    let dir = fixture(FIXTURE);
    let private = "10.20.30.40";
    edit_file(&dir, "data/gpu.csv", |t| {
        t.replacen("NVIDIA H100 80GB HBM3", &format!("gpu at {private}"), 1)
    });
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = page(&out, "index.html");
    let copy = read(&out.join(FIXTURE).join("data/gpu.csv"));
    assert!(!html.contains(private) && !copy.contains(private));
    // The record keeps its row and its numbers.
    let table = rows(&html, "nvidia-smi");
    assert_eq!(table[0][1], "97");
    assert!(copy.contains("gpu at "));
}

/// An empty export alone is ambiguous: named as hyperfine it is a failed
/// command's record; unnamed it is an error that says what to write.
#[test]
fn format_named_in_the_block_reads_an_empty_export() {
    let single = |d: &Path, format: &str| {
        edit_file(d, "index.md", |t| {
            t.replace(
                "\"source\": \"data/runs/*/hyperfine.json\",",
                &format!("\"source\": \"data/runs/failed/hyperfine.json\",{format}"),
            )
            // One file has no glob captures.
            .replace("{source_1}", "run")
        })
    };
    let dir = fixture(FIXTURE);
    single(&dir, " \"format\": \"hyperfine\",");
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let ledger = rows(&page(&out, "index.html"), "Failed commands");
    assert_eq!(ledger.len(), 1);
    assert_eq!(ledger[0][4], "data/runs/failed/hyperfine.json");
    bad(
        |d| single(d, ""),
        &[
            "data/runs/failed/hyperfine.json:1:1",
            "data file is empty",
            "\"format\": \"hyperfine\"",
        ],
    );
    bad(
        |d| single(d, " \"format\": \"hyperfine2\","),
        &[
            "index.md:37:1",
            "unknown format `hyperfine2`: expected one of json, jsonl, csv",
        ],
    );
}
