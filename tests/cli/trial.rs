//! Issue 19's work tried as a new user would (tests/fixtures/trial-compression/,
//! real hyperfine and sadf output: see its README.md): the campaign builds
//! as committed, and every figure on its page is checked against a value
//! this test computes from the raw tool output. Then the messages a new
//! user meets first, pinned whole (insta, as in bad_input.rs).

use super::formats::rows;
use super::*;
use serde_json::Value;

const FIXTURE: &str = "trial-compression";

/// One command of a hyperfine export, as the test reads it.
struct Run {
    tool: String,
    command: String,
    median: f64,
    bytes: f64,
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    match n % 2 {
        1 => xs[n / 2],
        _ => (xs[n / 2 - 1] + xs[n / 2]) / 2.0,
    }
}

/// Every command of every non-empty export, in path order (the glob's).
fn runs() -> Vec<Run> {
    let dir = repo()
        .join("tests/fixtures")
        .join(FIXTURE)
        .join("data/runs");
    let mut tools: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    tools.sort();
    let mut out = Vec::new();
    for tool in tools {
        let text = read(&dir.join(&tool).join("hyperfine.json"));
        if text.trim().is_empty() {
            continue;
        }
        let doc: Value = serde_json::from_str(&text).unwrap();
        for r in doc["results"].as_array().unwrap() {
            let times = r["times"].as_array().unwrap();
            out.push(Run {
                tool: tool.clone(),
                command: r["command"].as_str().unwrap().to_string(),
                median: median(times.iter().map(|t| t.as_f64().unwrap()).collect()),
                bytes: r["parameters"]["bytes"].as_str().unwrap().parse().unwrap(),
            });
        }
    }
    out
}

fn built_page() -> String {
    let dir = fixture(FIXTURE);
    let out = dir.parent().unwrap().join("site");
    // Built as committed: its manifest was written by `exhibit seal`.
    let o = build(&dir, &out);
    assert!(o.status.success(), "build failed: {}", stderr(&o));
    read(&out.join(FIXTURE).join("index.html"))
}

fn ms(s: f64) -> String {
    format!("{:.1} ms", s * 1000.0)
}

fn pct(base: f64, x: f64) -> String {
    format!("{:+.1}%", (x - base) / base * 100.0)
}

#[test]
fn trial_campaign_figures_follow_the_raw_tool_output() {
    let html = built_page();
    let runs = runs();
    let find = |c: &str| runs.iter().find(|r| r.command == c).unwrap();
    let base = find("gzip -6 -c input.dat").median;
    let zstd = find("zstd -3 -c input.dat").median;

    // The card: zstd -3's median and its change against gzip -6.
    assert!(html.contains(&pct(base, zstd)), "card change");
    let value = format!("{} against gzip -6&#39;s {}", ms(zstd), ms(base));
    assert!(html.contains(&value), "card value {value}");

    // The table: the failed brotli export is a row of missing cells, then
    // one row per command with its median, MB/s and change.
    let table = rows(&html, "Every compressor against gzip -6");
    assert_eq!(table.len(), runs.len() + 1, "{table:?}");
    assert_eq!(table[0], ["brotli", "", "—", "—", "—"]);
    for (row, r) in table[1..].iter().zip(&runs) {
        let mbs = format!("{:.1} MB/s", r.bytes / r.median / 1e6);
        let want = [
            r.tool.clone(),
            r.command.clone(),
            ms(r.median),
            mbs,
            pct(base, r.median),
        ];
        assert_eq!(row[..], want[..], "{}", r.command);
    }

    // The failed command reached the ledger, and nothing else did.
    assert_eq!(html.matches("hyperfine run of ").count(), 1);
    assert!(html.contains("hyperfine run of brotli exits 0"));
    assert!(html.contains("empty export: the command failed"));

    // hyperfine's CSV exports through one glob: the empty one gives no row.
    let csv_rows = rows(&html, "hyperfine&#39;s own CSV exports");
    let mut want = Vec::new();
    for r in &runs {
        let text = read(
            &repo()
                .join("tests/fixtures")
                .join(FIXTURE)
                .join("data/runs")
                .join(&r.tool)
                .join("hyperfine.csv"),
        );
        let line = text.lines().find(|l| l.starts_with(&r.command)).unwrap();
        let mean: f64 = line.split(',').nth(1).unwrap().parse().unwrap();
        want.push(format!("{mean:.3}"));
    }
    let got: Vec<String> = csv_rows.iter().map(|r| r[2].clone()).collect();
    assert_eq!(got, want);

    // sadf -d: `;` between fields, the header a `# ` comment.
    let cpu = read(
        &repo()
            .join("tests/fixtures")
            .join(FIXTURE)
            .join("data/cpu.csv"),
    );
    let header: Vec<&str> = cpu.lines().next().unwrap()[2..].split(';').collect();
    let user = header.iter().position(|h| *h == "%user").unwrap();
    let want: Vec<String> = cpu
        .lines()
        .skip(1)
        .map(|l| {
            format!(
                "{:.1}",
                l.split(';').nth(user).unwrap().parse::<f64>().unwrap()
            )
        })
        .collect();
    let got: Vec<String> = rows(&html, "CPU during one bzip2 -9 run (sar, sadf -d)")
        .iter()
        .map(|r| r[1].clone())
        .collect();
    assert_eq!(got, want);
}

/// `o` exited 2 without a panic; its whole stderr, `dir` shown as `[DIR]`,
/// is the snapshot `name`.
fn pinned(name: &str, o: &Output, dir: &Path) {
    let err = stderr(o).replace(&dir.display().to_string(), "[DIR]");
    assert_eq!(o.status.code(), Some(2), "{name}: {err}");
    assert!(!err.contains("panicked"), "{name}: {err}");
    insta::assert_snapshot!(name, err);
}

#[test]
fn build_without_root_names_the_campaign_below() {
    let home = scratch("trial-no-root");
    let o = run(exhibit().current_dir(&home).arg("build"));
    pinned("trial-build-no-root-empty-folder", &o, &home);
    // After `exhibit new camp`, the folder above it: name `camp`.
    assert!(run(exhibit().current_dir(&home).args(["new", "camp"]))
        .status
        .success());
    let o = run(exhibit().current_dir(&home).arg("build"));
    pinned("trial-build-no-root-campaign-below", &o, &home);
    assert!(!home.join("site").exists());
}

#[test]
fn new_on_a_folder_that_is_not_empty_says_what_to_do() {
    let home = scratch("trial-new-full");
    std::fs::create_dir_all(home.join("camp")).unwrap();
    std::fs::write(home.join("camp/notes.txt"), "mine").unwrap();
    let o = run(exhibit().current_dir(&home).args(["new", "camp"]));
    pinned("trial-new-not-empty", &o, &home);
    assert_eq!(read(&home.join("camp/notes.txt")), "mine");
}

#[test]
fn a_glob_that_matches_nothing_shows_what_it_could_match() {
    let dir = fixture(FIXTURE);
    let page = dir.join("index.md");
    let text = read(&page).replace(
        "\"source\": \"data/runs/*/hyperfine.csv\"",
        "\"source\": \"data/run/*/hyperfine.csv\"",
    );
    std::fs::write(&page, text).unwrap();
    let o = run(exhibit().arg("seal").arg("--update").arg(&dir));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    pinned("trial-glob-matches-nothing", &o, dir.parent().unwrap());
    assert!(!out.exists());
}
