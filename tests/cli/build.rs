//! `exhibit build` on the sample campaign and on the minimal fixture.

use super::*;

const SAMPLE_ID: &str = "glm53-flash-linux-vs-wsl";

fn build_sample() -> (PathBuf, PathBuf) {
    let root = scratch("sample");
    copy_tree(
        &repo().join("sample-artifacts"),
        &root.join("sample-artifacts"),
    );
    let out = root.join("site");
    let o = build(&root.join("sample-artifacts"), &out);
    assert!(o.status.success(), "sample build failed: {}", stderr(&o));
    (root, out)
}

#[test]
fn sample_builds_with_derived_figures_from_raw_values() {
    let (_root, out) = build_sample();
    let main = read(&out.join(SAMPLE_ID).join("index.html"));
    // Raw medians from the data files ...
    for raw in [
        "149.02", "112.07", "125.03", "96.17", "124.46", "102.42", "120.29", "99.79",
    ] {
        assert!(main.contains(raw), "main page lacks {raw}");
    }
    // ... and the decode changes exhibit derives from them.
    for derived in ["+33.0%", "+30.0%", "+21.5%", "+20.5%", "+39.6%"] {
        assert!(main.contains(derived), "main page lacks derived {derived}");
    }
    let c = read(&out.join(SAMPLE_ID).join("campaign.json"));
    for derived in ["33.0", "30.0", "21.5", "20.5", "39.6"] {
        assert!(!c.contains(derived), "{derived} is typed in campaign.json");
    }
    assert!(read(&out.join("index.html")).contains(&format!("{SAMPLE_ID}/index.html")));
    let ledger = read(&out.join(SAMPLE_ID).join("ledger.html"));
    assert!(
        ledger.contains("HTTP 413") || ledger.contains("HTTP413"),
        "ledger lacks the routed needle failure"
    );
    let manifest = read(&out.join(SAMPLE_ID).join("manifest.html"));
    assert!(manifest.contains("verdict-ok") && !manifest.contains("verdict-modified"));
}

#[test]
fn every_sample_svg_parses_and_has_one_bar_per_point() {
    let (_root, out) = build_sample();
    let mut charts = 0;
    for entry in std::fs::read_dir(out.join(SAMPLE_ID)).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "html") {
            let html = read(&path);
            for svg in svgs(&html) {
                let doc = roxmltree::Document::parse(svg)
                    .unwrap_or_else(|e| panic!("{}: bad SVG: {e}", path.display()));
                let title = doc.descendants().find(|n| n.has_tag_name("title"));
                assert!(
                    title.is_some_and(|t| !t.text().unwrap_or("").is_empty()),
                    "chart without title"
                );
                charts += 1;
            }
        }
    }
    assert!(
        charts >= 5,
        "expected at least 5 charts in the sample, found {charts}"
    );
}

#[test]
fn chart_has_one_bar_per_data_point() {
    let dir = fixture("minimal");
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = read(&out.join("minimal/index.html"));
    let svgs = svgs(&html);
    assert_eq!(svgs.len(), 2, "one chart, drawn wide and narrow");
    for svg in svgs {
        let doc = roxmltree::Document::parse(svg).unwrap();
        for colour in ["#0072B2", "#E69F00"] {
            let rects = doc
                .descendants()
                .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some(colour))
                .count();
            // two data points (the legend is HTML, beside the drawing)
            assert_eq!(rects, 2, "bars of {colour}");
        }
    }
    let table = roxmltree::Document::parse(
        &html[html.find("<details").unwrap()..html.find("</details>").unwrap() + 10],
    )
    .unwrap();
    assert_eq!(
        table.descendants().filter(|n| n.has_tag_name("tr")).count(),
        3,
        "data table beside the chart"
    );
}

#[test]
fn two_builds_are_byte_identical() {
    let (root, out) = build_sample();
    let first = tree(&out);
    let out2 = root.join("site2");
    let o = build(&root.join("sample-artifacts"), &out2);
    assert!(o.status.success());
    assert_eq!(first, tree(&out2));
    // and rebuilding over the previous site gives the same bytes again
    let o = build(&root.join("sample-artifacts"), &out);
    assert!(o.status.success());
    assert_eq!(first, tree(&out));
}

#[test]
fn published_sha256sums_passes_coreutils() {
    let (_root, out) = build_sample();
    let o = run(Command::new("sha256sum")
        .arg("--strict")
        .arg("-c")
        .arg("SHA256SUMS")
        .current_dir(out.join(SAMPLE_ID)));
    assert!(
        o.status.success(),
        "sha256sum -c failed:\n{}{}",
        stdout(&o),
        stderr(&o)
    );
    let listed = read(&out.join(SAMPLE_ID).join("SHA256SUMS"))
        .lines()
        .count();
    let on_disk = tree(&out.join(SAMPLE_ID)).len() - 1;
    assert_eq!(
        listed, on_disk,
        "SHA256SUMS lists every published file but itself"
    );
    // and exhibit itself accepts the published site
    let o = run(exhibit().arg("verify").arg(out.join(SAMPLE_ID)));
    assert!(o.status.success(), "{}", stdout(&o));
}

#[test]
fn blocks_name_their_source_and_short_hash() {
    let dir = fixture("minimal");
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    assert!(build(&dir, &out).status.success());
    let html = read(&out.join("minimal/index.html"));
    let manifest: serde_json::Value =
        serde_json::from_str(&read(&dir.join("manifest.json"))).unwrap();
    let files = manifest["files"].as_array().unwrap();
    let entry = files
        .iter()
        .find(|f| f["path"] == "data/cells.json")
        .unwrap();
    let cells = entry["sha256"].as_str().unwrap();
    assert!(
        html.contains(&format!("sha256 {}", &cells[..12])),
        "short hash of data/cells.json missing"
    );
    assert!(html.contains("href=\"data/cells.json\""));
    assert!(
        html.contains("href=\"notes.html\""),
        "page links are rewritten to .html"
    );
}

/// The minimal fixture with `markdown` as its notes page, sealed and built:
/// the published notes page.
fn notes_page(markdown: &str) -> String {
    let dir = fixture("minimal");
    std::fs::write(dir.join("notes.md"), markdown).unwrap();
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    read(&out.join("minimal/notes.html"))
}

#[test]
fn html_in_markdown_and_script_links_never_execute() {
    let html = notes_page(
        "## Notes\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n[click](javascript:alert(3)) and [also](JaVaScRiPt:alert(4)) and ![i](data:text/html,x)\n\n{{ campaign.title }} {% if x %}\n",
    );
    assert!(!html.contains("<script>alert"), "raw script tag survived");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!html.contains("<img src=x"));
    assert!(
        !html.to_ascii_lowercase().contains("javascript:"),
        "script link survived"
    );
    assert!(!html.contains("data:text/html"));
    // Markdown is not a template: tera syntax stays literal text
    assert!(html.contains("{{ campaign.title }} {% if x %}"));
}

#[test]
fn markdown_tables_align_by_class_in_a_scroll_box() {
    let html = notes_page(
        "## Notes\n\n| Case | Mid | tok/s |\n| :--- | :---: | ---: |\n| a | b | 81.69 |\n| c | d | 105.96 |\n",
    );
    assert!(
        html.contains(
            "<div class=\"scroll\" tabindex=\"0\"><table><thead><tr><th>Case</th><th class=\"center\">Mid</th><th class=\"num\">tok/s</th></tr></thead><tbody>"
        ),
        "{html}"
    );
    assert!(html
        .contains("<tr><td>c</td><td class=\"center\">d</td><td class=\"num\">105.96</td></tr>"));
    assert!(html.contains("</tbody></table></div>"));
    assert!(!html.contains("style="), "no inline styles on cells");
}

#[test]
fn active_artifacts_are_published_inert() {
    let dir = fixture("minimal");
    std::fs::write(
        dir.join("artifacts/report.html"),
        "<script>alert(1)</script>",
    )
    .unwrap();
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    assert!(build(&dir, &out).status.success());
    assert!(out.join("minimal/artifacts/report.html.txt").is_file());
    assert!(!out.join("minimal/artifacts/report.html").exists());
    assert!(read(&out.join("minimal/manifest.html")).contains("artifacts/report.html.txt"));
}

#[test]
fn several_campaigns_get_an_index() {
    let root = scratch("multi");
    for id in ["alpha", "beta"] {
        let dir = root.join(id);
        copy_tree(&repo().join("tests/fixtures/minimal"), &dir);
        let meta = read(&dir.join("campaign.json")).replace("\"minimal\"", &format!("\"{id}\""));
        std::fs::write(dir.join("campaign.json"), meta).unwrap();
        seal(&dir);
    }
    let out = root.join("site");
    let o = build(&root, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let index = read(&out.join("index.html"));
    assert!(index.contains("alpha/index.html") && index.contains("beta/index.html"));
}

#[test]
fn refuses_to_replace_a_folder_it_did_not_write() {
    let dir = fixture("minimal");
    seal(&dir);
    let out = dir.parent().unwrap().join("precious");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("thesis.tex"), "years of work").unwrap();
    let o = build(&dir, &out);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("refusing to replace"));
    assert_eq!(read(&out.join("thesis.tex")), "years of work");
}
