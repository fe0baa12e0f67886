//! Hostile markup: no script runs from a campaign's pages, a theme
//! override or a published artifact. Heading attributes are refused, every
//! link target meets one filter, the output gate refuses script-capable
//! markup whatever wrote it, and executable file types are published
//! under an inert name.

use super::browser::Browser;
use super::*;
use serde_json::json;

/// The minimal fixture with `markdown` as its notes page, sealed.
fn campaign_with_notes(markdown: &str) -> PathBuf {
    let dir = fixture("minimal");
    std::fs::write(dir.join("notes.md"), markdown).unwrap();
    seal(&dir);
    dir
}

fn build_single(dir: &Path, out: &Path) -> Output {
    run(exhibit()
        .arg("build")
        .arg(dir)
        .arg("-o")
        .arg(out)
        .arg("--single-file"))
}

#[test]
fn heading_attributes_other_than_an_id_are_refused() {
    for (heading, what) in [
        (
            "## T {#t tabindex=1 autofocus onfocus=alert(2)}",
            "attribute `tabindex`",
        ),
        ("## T {onfocus=alert(2)}", "attribute `onfocus`"),
        ("## T {#t .x}", "class `.x`"),
    ] {
        let dir = campaign_with_notes(&format!("# Notes\n\n{heading}\n"));
        let out = dir.parent().unwrap().join("site");
        let o = build_single(&dir, &out);
        assert_eq!(o.status.code(), Some(2), "{heading}: {}", stderr(&o));
        assert_eq!(
            stderr(&o),
            format!(
                "error: heading {what} is not allowed: a heading takes only an id, as `{{#name}}`\n  --> {}:3:6\n  |\n3 | {heading}\n  |      ^\n",
                dir.join("notes.md").display()
            ),
            "{heading}"
        );
        assert!(!out.exists(), "nothing is published");
    }
}

/// Links a browser would run or could not place, in every place a page
/// holds links: a heading, a table cell, a footnote, an image.
const HOSTILE: &str = "# Notes\n\n## D [x](javascript:alert(1)) [g](http://0x0a.0.0.5/m)\n\n## T {#t\"onfocus=alert(2)}\n\n| a |\n| --- |\n| [t](vbscript:alert(3)) [u](JaVa%09Script:alert(4)) |\n\nSee[^1] ![i](data:text/html,<script>alert(5)</script>) [w](java\tscript:alert(6))\n\n[^1]: [f](data:text/html;base64,PHNjcmlwdD5hbGVydCg3KTwvc2NyaXB0Pg==) <b onclick=alert(8)>b</b>\n";

#[test]
fn every_link_target_meets_the_one_filter() {
    let dir = campaign_with_notes(HOSTILE);
    let out = dir.parent().unwrap().join("site");
    let o = build_single(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    // The single file embeds notes.md itself as an inert text/plain link:
    // its hostile text is the artifact's content, not markup.
    let embedded = regex::Regex::new(r#"href="data:text/plain;[^"]*""#).unwrap();
    for page in ["minimal/notes.html", "minimal/minimal.html"] {
        let html = read(&out.join(page)).to_ascii_lowercase();
        let html = embedded.replace_all(&html, "href=\"\"");
        for bad in [
            "javascript:",
            "vbscript:",
            "data:text/html",
            "0x0a.0.0.5",
            "<b onclick",
            "href=\"java",
        ] {
            assert!(!html.contains(bad), "{page} holds `{bad}`");
        }
        // The link text stays; the raw HTML is shown as text.
        assert!(html.contains("&lt;b onclick=alert(8)&gt;"), "{page}");
    }
    let notes = read(&out.join("minimal/notes.html"));
    assert!(
        notes.contains("<h2 id=\"d-x-g\">D x g <a class=\"anchor\""),
        "{notes}"
    );
    assert!(
        notes.contains("<h2 id=\"t&quot;onfocus=alert(2)\">T "),
        "{notes}"
    );
}

/// Record every dialog a page asks for (as a console error) and load it.
fn load_and_poke(b: &mut Browser, url: &str) {
    b.call(
        "Page.addScriptToEvaluateOnNewDocument",
        json!({"source": "for (const f of ['alert', 'confirm', 'prompt', 'print']) { window[f] = () => console.error('dialog opened: ' + f); }"}),
    );
    b.navigate(url);
    // Focus every heading, then click every link of the notes section
    // (the section links and footnote links stay on the page).
    b.eval(
        "for (const h of document.querySelectorAll('h1,h2,h3,h4,h5,h6')) { h.focus(); h.dispatchEvent(new FocusEvent('focus')); }",
    );
    let clicked = b.eval(
        "(() => { let n = 0; for (const a of document.querySelectorAll('main a')) { if (!a.hasAttribute('download')) { a.click(); n++; } } return n; })()",
    );
    assert!(clicked.as_u64().unwrap_or(0) > 0, "links clicked on {url}");
    std::thread::sleep(std::time::Duration::from_millis(500));
}

/// Load each page in Chromium, poke it, and require that it stayed put
/// and opened no dialog.
fn assert_inert_in_chromium(b: &mut Browser, out: &Path, pages: &[&str]) {
    for page in pages {
        let url = format!("file://{}", out.join(page).display());
        load_and_poke(b, &url);
        let here = b.eval("location.href.split('#')[0]");
        assert_eq!(here, json!(url), "no navigation away from {page}");
        let dialogs: Vec<String> = b
            .errors()
            .into_iter()
            .filter(|e| e.contains("dialog opened"))
            .collect();
        assert!(dialogs.is_empty(), "{page} opened a dialog: {dialogs:?}");
    }
}

#[test]
fn hostile_headings_run_no_script_in_chromium() {
    const PAGES: &[&str] = &["minimal/notes.html", "minimal/minimal.html"];
    let mut b = Browser::start();
    let dir = campaign_with_notes(HOSTILE);
    let out = dir.parent().unwrap().join("site");
    let o = build_single(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_inert_in_chromium(&mut b, &out, PAGES);
    // The attribute vector is refused (see above); whatever a build of it
    // publishes must be inert too.
    let dir = campaign_with_notes(
        "# Notes\n\n## T {#t tabindex=1 autofocus onfocus=alert(2)}\n\n[up](#t)\n",
    );
    let out = dir.parent().unwrap().join("site");
    let o = build_single(&dir, &out);
    if o.status.success() {
        assert_inert_in_chromium(&mut b, &out, PAGES);
    }
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// Constructs a theme could plant, each with the column (in line 4 of
/// every page: the element's, or the attribute's) the gate names and
/// what it says.
const PLANTS: &[(&str, usize, &str)] = &[
    ("<script>alert(1)</script>", 1, "a <script> element"),
    (
        "<body onload=\"alert(1)\">",
        7,
        "an event-handler attribute (on...)",
    ),
    (
        "<a href=\"javascript:alert(1)\">x</a>",
        4,
        "a javascript: URL",
    ),
    ("<a href=\" VBScript:x\">x</a>", 4, "a vbscript: URL"),
    (
        "<a href=\"data:text/html,x\">x</a>",
        4,
        "a data: URL of a type that can run script",
    ),
    (
        "<form><button formaction=\"javascript:x\">b</button></form>",
        15,
        "a javascript: URL",
    ),
    ("<iframe></iframe>", 1, "an <iframe> element"),
    ("<img srcdoc=\"x\">", 6, "a srcdoc attribute"),
    ("<object data=\"x.swf\"></object>", 1, "an <object> element"),
    ("<embed src=\"x.swf\">", 1, "an <embed> element"),
    (
        "<base href=\"https://example.com/\">",
        1,
        "a <base> element",
    ),
    (
        "<meta http-equiv=\"refresh\" content=\"0;url=https://example.com/\">",
        1,
        "a <meta http-equiv=\"refresh\"> redirect",
    ),
    (
        "<svg><foreignObject></foreignObject></svg>",
        6,
        "an SVG <foreignObject> element",
    ),
    (
        "<svg><a><set attributeName=\"href\"></set></a></svg>",
        9,
        "an SVG animation that sets a link",
    ),
    (
        "<svg><a xlink:href=\"javascript:x\">x</a></svg>",
        9,
        "a javascript: URL",
    ),
];

#[test]
fn the_gate_refuses_script_a_theme_plants() {
    for (plant, col, why) in PLANTS {
        let dir = fixture("minimal");
        seal(&dir);
        let out = dir.parent().unwrap().join("site");
        let theme = dir.parent().unwrap().join("theme");
        std::fs::create_dir_all(theme.join("templates")).unwrap();
        let base = read(&repo().join("templates/base.html")).replacen(
            "<head>",
            &format!("<head>\n{plant}"),
            1,
        );
        std::fs::write(theme.join("templates/base.html"), base).unwrap();
        let o = build_themed(&dir, &out, &theme);
        assert_eq!(o.status.code(), Some(1), "{plant}: {}", stderr(&o));
        assert_eq!(stderr(&o), refused_on_every_page(*col, why), "{plant}");
        assert!(!out.exists(), "{plant}: nothing is published");
    }
}

/// The gate's whole message when a plant at the top of the theme's
/// `<head>` (line 4, column `col`) is refused on every page.
pub(super) fn refused_on_every_page(col: usize, why: &str) -> String {
    let lines: String = [
        "index.html",
        "minimal/index.html",
        "minimal/ledger.html",
        "minimal/manifest.html",
        "minimal/notes.html",
    ]
    .iter()
    .map(|f| format!("  {f}:4:{col}: {why}\n"))
    .collect();
    format!("error: refusing to publish: the written site holds markup that can run script (the previous site is unchanged)\n{lines}")
}

#[test]
fn executable_artifact_types_are_published_inert() {
    let types = [
        "html",
        "htm",
        "shtml",
        "shtm",
        "xhtml",
        "xht",
        "xhtm",
        "svg",
        "svgz",
        "xml",
        "xsl",
        "xslt",
        "mht",
        "mhtml",
        "js",
        "mjs",
        "swf",
        "php",
        "ASPX",
        "html.gz",
        "unknownext",
    ];
    let dir = fixture("minimal");
    let mut links = String::from("# Notes\n\n");
    for t in types {
        std::fs::write(
            dir.join(format!("artifacts/run.{t}")),
            "<script>alert(1)</script>\n",
        )
        .unwrap();
        links.push_str(&format!("[{t}](artifacts/run.{t})\n"));
    }
    for bare in [".htaccess", "Makefile", ".hidden"] {
        std::fs::write(dir.join("artifacts").join(bare), "x\n").unwrap();
    }
    std::fs::write(dir.join("notes.md"), &links).unwrap();
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let notes = read(&out.join("minimal/notes.html"));
    let manifest = read(&out.join("minimal/manifest.html"));
    for t in types {
        let name = format!("artifacts/run.{t}");
        assert!(
            !out.join("minimal").join(&name).exists(),
            "{name} kept its name"
        );
        assert!(
            out.join("minimal").join(format!("{name}.txt")).is_file(),
            "{name}"
        );
        assert!(notes.contains(&format!("href=\"{name}.txt\"")), "{name}");
        assert!(manifest.contains(&format!("href=\"{name}.txt\"")), "{name}");
    }
    for bare in [".htaccess", "Makefile", ".hidden"] {
        let a = out.join("minimal/artifacts");
        assert!(!a.join(bare).exists(), "{bare} kept its name");
        assert!(a.join(format!("{bare}.txt")).is_file(), "{bare}");
    }
    // Inert types keep their name.
    assert!(out.join("minimal/artifacts").read_dir().unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .ends_with(".log")));
}
