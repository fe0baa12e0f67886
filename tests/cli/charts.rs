//! Charts away from the browser: a generated campaign with a ten-column
//! table, a 12-category bar chart, a line chart of close values, a log
//! scale and a failed cell. Log scales refuse values at or below zero by
//! the block's name, missing values are drawn as missing, every chart has
//! one legend (in HTML, none inside the SVG) and two drawings.

use super::*;

/// Header of the wide table: ten numeric columns after the category.
pub(super) const WIDE_HEADERS: [&str; 11] = [
    "Context target (tokens)",
    "Decode tok/s, WSL",
    "Decode tok/s, Linux",
    "Decode change",
    "Prefill tok/s, WSL",
    "Prefill tok/s, Linux",
    "Prefill change",
    "TTFT s, WSL",
    "TTFT s, Linux",
    "Output tokens, WSL",
    "Output tokens, Linux",
];

/// Twelve records; record 5 has no `linux` value (a failed cell).
fn cells() -> String {
    let rows: Vec<String> = (0..12)
        .map(|i| {
            let f = i as f64;
            let linux = if i == 5 {
                "null".to_string()
            } else {
                format!("{:.2}", 140.0 - f * 3.1)
            };
            format!(
                "{{\"context\": {}, \"wsl\": {:.2}, \"linux\": {linux}, \"change\": {:.4}, \"pw\": {}, \"pl\": {}, \"pc\": {:.4}, \"tw\": {:.3}, \"tl\": {:.3}, \"ow\": {}, \"ol\": {}, \"close_a\": {:.2}, \"close_b\": {:.2}, \"small\": {}, \"big\": {}}}",
                4096 * (i + 1),
                110.0 - f * 2.3,
                0.2 + f / 100.0,
                18000 - i * 900,
                18500 - i * 880,
                0.01 * f,
                0.1 + f * 4.5,
                0.12 + f * 4.4,
                40 + i,
                42 + i,
                100.0 + f * 0.1,
                100.05 + f * 0.1,
                0.8 + f / 10.0,
                117.8 * (f + 1.0)
            )
        })
        .collect();
    format!("{{\"cells\": [\n{}\n]}}\n", rows.join(",\n"))
}

fn chart(title: &str, kind: &str, y: &str, series: &[(&str, &str)]) -> String {
    let series: Vec<String> = series
        .iter()
        .map(|(f, n)| format!("{{ \"field\": \"{f}\", \"name\": \"{n}\" }}"))
        .collect();
    format!(
        "```exhibit chart\n{{\n  \"title\": \"{title}\",\n  \"type\": \"{kind}\",\n  \"source\": \"data/cells.json\",\n  \"pointer\": \"/cells\",\n  \"x\": {{ \"field\": \"context\", \"label\": \"Context target (tokens)\", \"format\": \",\" }},\n  \"y\": {y},\n  \"series\": [{}]\n}}\n```\n\n",
        series.join(", ")
    )
}

/// The wide table's block: every column a number.
fn wide_table() -> String {
    let fields = [
        "context", "wsl", "linux", "change", "pw", "pl", "pc", "tw", "tl", "ow", "ol",
    ];
    let columns: Vec<String> = WIDE_HEADERS
        .iter()
        .zip(fields)
        .map(|(h, f)| {
            // The failed cell's `linux` is null: shown as it is, unformatted.
            let fmt = match f {
                "change" | "pc" => ", \"format\": \"+.1%\"",
                "context" | "pw" | "pl" => ", \"format\": \",\"",
                "tw" | "tl" => ", \"format\": \".3\"",
                "linux" => "",
                _ => ", \"format\": \".2\"",
            };
            format!("{{ \"header\": \"{h}\", \"field\": \"{f}\"{fmt} }}")
        })
        .collect();
    format!(
        "```exhibit table\n{{\n  \"caption\": \"Every cell, both arms\",\n  \"source\": \"data/cells.json\",\n  \"pointer\": \"/cells\",\n  \"columns\": [{}]\n}}\n```\n\n",
        columns.join(",\n")
    )
}

/// A sealed campaign `wide` under a fresh root; `extra` is appended to its
/// page. Returns the campaign folder.
pub(super) fn wide_campaign(extra: &str) -> PathBuf {
    let dir = scratch("charts").join("wide");
    std::fs::create_dir_all(dir.join("data")).unwrap();
    std::fs::write(
        dir.join("campaign.json"),
        r#"{"id": "wide", "title": "Wide tables and many categories", "date": "2026-11-02",
"state": "Completed", "scope": "Twelve context targets, two arms",
"decision": "No change", "pages": [{"file": "index.md", "title": "Overview"}]}"#,
    )
    .unwrap();
    std::fs::write(dir.join("data/cells.json"), cells()).unwrap();
    let mut page = String::from("# Overview\n\nTwelve cells.\n\n");
    page.push_str(&wide_table());
    page.push_str(&chart(
        "Decode by context target",
        "bar",
        r#"{ "label": "Decode median (tok/s, higher is faster)", "format": ".2" }"#,
        &[("wsl", "Windows/WSL"), ("linux", "Native Linux")],
    ));
    page.push_str(&chart(
        "Two arms a hair apart",
        "line",
        r#"{ "label": "Score", "min": 99, "format": ".2" }"#,
        &[("close_a", "Arm A"), ("close_b", "Arm B")],
    ));
    page.push_str(&chart(
        "Small and large throughput",
        "bar",
        r#"{ "label": "Throughput (MB/s)", "scale": "log", "format": ".1" }"#,
        &[("small", "Small files"), ("big", "Large files")],
    ));
    page.push_str(extra);
    std::fs::write(dir.join("index.md"), page).unwrap();
    seal(&dir);
    dir
}

fn built(dir: &Path) -> String {
    let out = dir.parent().unwrap().join("site");
    let o = build(dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    read(&out.join("wide/index.html"))
}

/// Build the wide campaign with `extra` on its page, which must be refused
/// as bad input (exit 2, no panic); its message.
fn refused(extra: &str) -> String {
    let dir = wide_campaign(extra);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!out.join("wide/index.html").exists());
    err
}

/// The chart figures of a page, each from its opening tag to its end.
fn figures(html: &str) -> Vec<&str> {
    html.split("<figure class=\"block chart\"")
        .skip(1)
        .map(|f| &f[..f.find("</figure>").unwrap()])
        .collect()
}

#[test]
fn log_scale_refuses_values_at_or_below_zero_naming_the_block() {
    let extra = chart(
        "Zero on a log axis",
        "line",
        r#"{ "label": "Rate", "scale": "log" }"#,
        &[("pc", "Prefill change")],
    );
    let err = refused(&extra);
    assert!(
        err.contains("index.md") && err.contains("`Zero on a log axis`"),
        "names the file and the block: {err}"
    );
    assert!(
        err.contains("log scale") && err.contains("above zero"),
        "{err}"
    );

    // A limit at or below zero is refused as well.
    let extra = chart(
        "Floor at zero",
        "bar",
        r#"{ "label": "Rate", "scale": "log", "min": 0 }"#,
        &[("big", "Large files")],
    );
    let err = refused(&extra);
    assert!(err.contains("`Floor at zero`"), "{err}");
}

#[test]
fn log_scale_spans_decades_so_small_bars_are_seen() {
    let html = built(&wide_campaign(""));
    let fig = figures(&html)[2];
    let svg = svgs(fig)[0];
    let doc = roxmltree::Document::parse(svg).unwrap();
    let ticks: Vec<&str> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("chart-tick"))
        .filter_map(|n| n.text())
        .collect();
    for decade in ["0.1", "1", "10", "100", "1,000", "10,000"] {
        assert!(ticks.contains(&decade), "ticks {ticks:?}");
    }
    assert!(svg.contains("Log scale"), "the chart says so");
    // The smallest bar (0.8 MB/s) is tall enough to see beside 1,413.6.
    let heights: Vec<f64> = doc
        .descendants()
        .filter(|n| n.tag_name().name() == "rect" && n.attribute("fill") == Some("#0072B2"))
        .map(|n| n.attribute("height").unwrap().parse().unwrap())
        .collect();
    assert_eq!(heights.len(), 12);
    assert!(heights[0] > 20.0, "{heights:?}");
}

#[test]
fn a_missing_value_is_drawn_as_missing_not_refused() {
    let html = built(&wide_campaign(""));
    let fig = figures(&html)[0];
    assert!(
        fig.contains("<td class=\"num missing\">missing</td>"),
        "the data table says so"
    );
    let svg = svgs(fig)[0];
    assert!(
        svg.contains("One value is missing"),
        "the description says so"
    );
    let doc = roxmltree::Document::parse(svg).unwrap();
    let bars = |fill: &str| {
        doc.descendants()
            .filter(|n| n.tag_name().name() == "rect" && n.attribute("fill") == Some(fill))
            .count()
    };
    assert_eq!(bars("#0072B2"), 12);
    assert_eq!(bars("#E69F00"), 11, "no bar for the failed cell");

    // A series with no value at all is a mistake, named.
    let extra = chart(
        "Nothing to draw",
        "bar",
        r#"{ "label": "Rate" }"#,
        &[("no_such_field", "Ghost")],
    );
    let err = refused(&extra);
    assert!(err.contains("series `Ghost` has no value"), "{err}");
}

#[test]
fn every_chart_has_one_legend_two_drawings_and_no_fixed_size() {
    let html = built(&wide_campaign(""));
    let figs = figures(&html);
    assert_eq!(figs.len(), 3);
    for fig in figs {
        assert_eq!(fig.matches("<ul class=\"legend\"").count(), 1, "one legend");
        let drawings = svgs(fig);
        let kinds: Vec<&str> = drawings
            .into_iter()
            .filter(|s| s.starts_with("<svg class=\"chart-svg"))
            .collect();
        assert_eq!(kinds.len(), 2, "a wide and a narrow drawing");
        for svg in kinds {
            let doc = roxmltree::Document::parse(svg).unwrap();
            let root = doc.root_element();
            assert!(root.attribute("viewBox").is_some());
            assert!(root.attribute("width").is_none() && root.attribute("height").is_none());
            // No legend inside: no series name is drawn as text, and no
            // white panel sits behind the plot.
            for name in ["Windows/WSL", "Native Linux", "Arm A", "Small files"] {
                assert!(
                    !doc.descendants()
                        .any(|n| n.tag_name().name() == "text" && n.text() == Some(name)),
                    "{name} drawn inside the SVG"
                );
            }
            assert!(
                !svg.contains("fill=\"#FFFFFF\" stroke=\"none\""),
                "a fixed white panel"
            );
        }
    }
}

#[test]
fn bars_start_at_zero_and_a_cut_line_axis_says_so() {
    let html = built(&wide_campaign(""));
    assert!(
        figures(&html)[1].contains("The y axis starts at 99, not zero"),
        "the line chart with min 99 says so"
    );
    let extra = chart(
        "Cut bars",
        "bar",
        r#"{ "label": "Rate", "min": 50 }"#,
        &[("wsl", "Windows/WSL")],
    );
    let err = refused(&extra);
    assert!(
        err.contains("`Cut bars`") && err.contains("starts at zero"),
        "{err}"
    );
}
