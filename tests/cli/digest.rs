//! The publication digest on every campaign page (recomputed here from the
//! published files by the rule docs/FORMAT.md gives, and checked by
//! `exhibit verify`), the single file with the campaign's files inside it,
//! and the site's index, OpenGraph tags and Atom feed.

use super::*;
use sha2::{Digest, Sha256};

const SAMPLE: &str = "glm53-flash-linux-vs-wsl";

/// The sample built with `--single-file` into a scratch folder: the site.
fn sample_site(name: &str) -> PathBuf {
    sample_with_single_file(name)
}

/// The documented rule, done here independently: SHA-256 of SHA256SUMS
/// without the lines of `.html` files and of `audit.json`.
fn recomputed(campaign: &Path) -> String {
    let sums = read(&campaign.join("SHA256SUMS"));
    let mut h = Sha256::new();
    for line in sums.split_inclusive('\n') {
        let l = line.trim_end_matches('\n');
        let audit = l.len() == 64 + 2 + 10 && l.ends_with("  audit.json");
        if !l.ends_with(".html") && !audit {
            h.update(line.as_bytes());
        }
    }
    format!("sha256:{}", hex::encode(h.finalize()))
}

/// The `.html` files a campaign's SHA256SUMS lists.
fn pages(campaign: &Path) -> Vec<String> {
    read(&campaign.join("SHA256SUMS"))
        .lines()
        .filter_map(|l| l.split_once("  ").map(|(_, p)| p.to_string()))
        .filter(|p| p.ends_with(".html"))
        .collect()
}

/// The "Cite this" section of a page.
fn cite(html: &str) -> &str {
    let start = html
        .find("<section class=\"cite\"")
        .expect("a Cite this block");
    let end = html[start..].find("</section>").expect("cite closes") + start;
    &html[start..end]
}

#[test]
fn every_page_shows_the_digest_of_sha256sums_without_its_pages() {
    let site = sample_site("digest-shown");
    let campaign = site.join(SAMPLE);
    let digest = recomputed(&campaign);
    assert_eq!(digest.len(), "sha256:".len() + 64);
    let pages = pages(&campaign);
    assert!(
        pages.len() >= 7,
        "pages, ledger, manifest and single file: {pages:?}"
    );
    for page in &pages {
        let html = read(&campaign.join(page));
        let block = cite(&html);
        assert!(block.contains("Cite this"), "{page}");
        assert!(
            block.contains(&format!("<code class=\"digest\">{digest}</code>")),
            "{page} shows the digest: {block}"
        );
        // Title and date in the text, BibTeX with the digest as its note.
        assert!(block.contains("GLM-5.3-Flash"), "{page}");
        assert!(block.contains("2026-09-08"), "{page}");
        let bib_start = block.find("@misc{").expect("BibTeX entry");
        let bib = &block[bib_start..block[bib_start..].find("</code>").unwrap() + bib_start];
        for field in [
            "title = {",
            "year = {2026}",
            "month = sep",
            "date = {2026-09-08}",
        ] {
            assert!(bib.contains(field), "{page}: {field} in {bib}");
        }
        assert!(
            bib.contains(&format!("note = {{Publication digest {digest}}}")),
            "{bib}"
        );
        let depth = bib.chars().try_fold(0i32, |d, c| match c {
            '{' => Some(d + 1),
            '}' if d == 0 => None,
            '}' => Some(d - 1),
            _ => Some(d),
        });
        assert_eq!(depth, Some(0), "balanced braces: {bib}");
        // The print margins carry it too.
        assert!(
            html.contains(&format!("content: \"Digest {digest}\"")),
            "{page}"
        );
    }
    let audit: serde_json::Value =
        serde_json::from_str(&read(&campaign.join("audit.json"))).unwrap();
    assert_eq!(audit["verification"]["digest"], digest.as_str());
    // The shell command FORMAT.md gives computes the same value.
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg("grep -v -E '\\.html$|^[0-9a-f]{64}  audit\\.json$' SHA256SUMS | sha256sum")
        .current_dir(&campaign)
        .output()
        .expect("sh runs");
    let shell = String::from_utf8_lossy(&o.stdout);
    assert_eq!(format!("sha256:{}", &shell[..64]), digest);
}

/// Replace `from` by `to` in `rel` of `campaign` and give SHA256SUMS the
/// new hash, as someone rewriting a published campaign would.
fn rewrite(campaign: &Path, rel: &str, from: &str, to: &str) {
    let path = campaign.join(rel);
    let text = read(&path);
    assert!(text.contains(from), "{rel} holds {from}");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    let sha = hex::encode(Sha256::digest(std::fs::read(&path).unwrap()));
    let sums: String = read(&campaign.join("SHA256SUMS"))
        .lines()
        .map(|l| match l.split_once("  ") {
            Some((_, p)) if p == rel => format!("{sha}  {p}\n"),
            _ => format!("{l}\n"),
        })
        .collect();
    std::fs::write(campaign.join("SHA256SUMS"), sums).unwrap();
}

fn verify(dir: &Path) -> (Option<i32>, String) {
    let o = run(exhibit().arg("verify").arg(dir));
    (o.status.code(), stdout(&o) + &stderr(&o))
}

#[test]
fn verify_fails_when_the_shown_digest_or_a_covered_file_changes() {
    let site = sample_site("digest-verify");
    let (code, out) = verify(&site);
    assert_eq!(code, Some(0), "{out}");
    let digest = recomputed(&site.join(SAMPLE));

    // A page showing another digest, with SHA256SUMS rewritten to match.
    let shown = scratch("digest-shown-changed");
    copy_tree(&site, &shown);
    let campaign = shown.join(SAMPLE);
    let other = format!("sha256:{}", "0".repeat(64));
    rewrite(
        &campaign,
        "quality.html",
        &format!("<code class=\"digest\">{digest}"),
        &format!("<code class=\"digest\">{other}"),
    );
    let (code, out) = verify(&campaign);
    assert_eq!(code, Some(1), "{out}");
    let line = out
        .lines()
        .find(|l| l.contains("quality.html"))
        .expect("named");
    assert!(line.contains("modified") && line.contains(&other), "{line}");
    assert!(line.contains("publication digest"), "{line}");

    // A covered file (a data download) changed, SHA256SUMS rewritten: the
    // digest the pages show is no longer the files'.
    let covered = scratch("digest-covered-changed");
    copy_tree(&site, &covered);
    let campaign = covered.join(SAMPLE);
    let download = read(&campaign.join("SHA256SUMS"))
        .lines()
        .filter_map(|l| l.split_once("  ").map(|(_, p)| p.to_string()))
        .find(|p| p.starts_with("downloads/") && p.ends_with(".csv"))
        .expect("a data download");
    let text = read(&campaign.join(&download));
    let first = text.lines().nth(1).expect("a data row").to_string();
    rewrite(&campaign, &download, &first, &format!("{first}0"));
    let (code, out) = verify(&campaign);
    assert_eq!(code, Some(1), "{out}");
    for named in ["index.html", "audit.json", "manifest.html"] {
        let line = out
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(named))
            .unwrap_or_else(|| panic!("{named} named: {out}"));
        assert!(
            line.contains("modified") && line.contains("publication digest"),
            "{line}"
        );
    }
}

/// The `data:` URL of `href`, decoded.
fn decode(url: &str) -> Vec<u8> {
    let url = url.replace("&amp;", "&");
    let (head, body) = url.split_once(',').expect("data: URL");
    if head.ends_with(";base64") {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD
            .decode(body)
            .unwrap()
    } else {
        percent_encoding::percent_decode_str(body).collect()
    }
}

/// `(href, download)` of every link with a `download` name in `html`.
fn downloads(html: &str) -> Vec<(String, String)> {
    let re = regex::Regex::new(r#"<a href="([^"]*)" download="([^"]*)""#).unwrap();
    re.captures_iter(html)
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect()
}

#[test]
fn single_file_holds_the_files_under_their_names_and_the_ledger_once() {
    let site = sample_site("digest-single");
    let campaign = site.join(SAMPLE);
    let single = read(&campaign.join(format!("{SAMPLE}.html")));
    let links = downloads(&single);
    // Every file of the file list is inside, byte for byte the published copy.
    let audit: serde_json::Value =
        serde_json::from_str(&read(&campaign.join("audit.json"))).unwrap();
    let files = audit["files"].as_array().unwrap();
    assert!(files.len() > 5);
    for f in files {
        let published = f["published"].as_str().unwrap();
        let name = published.rsplit('/').next().unwrap();
        let (href, _) = links
            .iter()
            .find(|(h, n)| n == name && h.starts_with("data:"))
            .unwrap_or_else(|| panic!("{published} embedded"));
        assert_eq!(
            decode(href),
            std::fs::read(campaign.join(published)).unwrap(),
            "{published}"
        );
    }
    assert!(single.contains("Every file is inside this copy"));
    assert!(!single.contains("The files are not inside this copy"));
    // The pages' data downloads save under their published names.
    for (href, name) in links.iter().filter(|(_, n)| n.ends_with(".csv")) {
        let path = campaign.join("downloads").join(name);
        if path.is_file() {
            assert_eq!(decode(href), std::fs::read(path).unwrap(), "{name}");
        }
    }
    assert!(
        !single.contains("download=\"download"),
        "no anonymous downloads"
    );
    assert!(links.iter().any(|(_, n)| n.ends_with("-table-1.csv")));
    // The ledger once: as many ledger tables as the pages show, each entry once.
    let shown: usize = pages(&campaign)
        .iter()
        .filter(|p| {
            !p.ends_with("ledger.html")
                && !p.ends_with(&format!("{SAMPLE}.html"))
                && *p != "manifest.html"
        })
        .map(|p| {
            read(&campaign.join(p))
                .matches("<table class=\"ledger-table\"")
                .count()
        })
        .sum();
    assert!(shown >= 1);
    assert_eq!(
        single.matches("<table class=\"ledger-table\"").count(),
        shown
    );
    let rows = regex::Regex::new(r#"<tr id="([^"]*failure-[^"]*)""#).unwrap();
    let ids: Vec<&str> = rows
        .captures_iter(&single)
        .map(|c| c.get(1).unwrap().as_str())
        .collect();
    let unique: std::collections::BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(ids.len(), unique.len(), "{ids:?}");
}

#[test]
fn single_file_names_the_files_left_out_past_the_limit() {
    let dir = fixture("minimal");
    // 9 MiB of log: past the 8 MiB the single file holds.
    let line = "step ok: tokens 128 latency 41 ms\n";
    let big = line.repeat((9 << 20) / line.len() + 1);
    std::fs::write(dir.join("artifacts/big.log"), big).unwrap();
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    let o = run(exhibit()
        .arg("build")
        .arg(&dir)
        .arg("-o")
        .arg(&out)
        .arg("--single-file"));
    assert!(o.status.success(), "{}", stderr(&o));
    let single = read(&out.join("minimal/minimal.html"));
    assert!(
        single.contains("1 file is not inside this copy: <code>artifacts/big.log</code>"),
        "names it"
    );
    assert!(single.contains("up to 8 MiB"));
    let links = downloads(&single);
    assert!(!links.iter().any(|(_, n)| n == "big.log"));
    let (href, _) = links
        .iter()
        .find(|(_, n)| n == "run.log")
        .expect("the small log is inside");
    assert_eq!(
        decode(href),
        std::fs::read(out.join("minimal/artifacts/run.log")).unwrap()
    );
    let (code, report) = verify(&out);
    assert_eq!(code, Some(0), "{report}");
}

/// The sample and the minimal fixture side by side, built.
fn two_campaigns(name: &str) -> PathBuf {
    let root = scratch(name).join("campaigns");
    copy_tree(&repo().join("sample-artifacts"), &root);
    let minimal = root.join("minimal");
    copy_tree(&repo().join("tests/fixtures/minimal"), &minimal);
    seal(&minimal);
    let out = root.parent().unwrap().join("site");
    let o = build(&root, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

#[test]
fn index_shows_headline_figures_and_state_and_the_feed_lists_every_campaign() {
    let site = two_campaigns("digest-index");
    let index = read(&site.join("index.html"));
    // The sample's first card item, as its own page shows it.
    let page = read(&site.join(SAMPLE).join("index.html"));
    let change = regex::Regex::new(
        r#"<dd class="card-change">([^<]*) <span class="card-direction">([^<]*)</span>"#,
    )
    .unwrap();
    let first = change.captures(&page).expect("the sample's card");
    let value = regex::Regex::new(r#"<dd class="card-value">([^<]*)</dd>"#).unwrap();
    let shown = index
        .find("class=\"card-items headline\"")
        .expect("headline figures");
    assert!(
        index[shown..].contains(&first[0]),
        "the change: {}",
        &first[0]
    );
    assert!(index[shown..].contains(&value.captures(&page).unwrap()[0]));
    for id in [SAMPLE, "minimal"] {
        let meta: serde_json::Value =
            serde_json::from_str(&read(&site.join(id).join("audit.json"))).unwrap();
        let state = meta["campaign"]["state"].as_str().unwrap();
        assert!(
            index.contains(&format!(
                "<dt>State</dt><dd>{}</dd>",
                state.replace('\'', "&#39;")
            )),
            "{id}"
        );
    }
    assert!(index.contains(r#"<link rel="alternate" type="application/atom+xml" title="Benchmark campaigns" href="feed.xml">"#));

    let feed = read(&site.join("feed.xml"));
    let doc = roxmltree::Document::parse(&feed).expect("the feed is XML");
    let atom = "http://www.w3.org/2005/Atom";
    let root = doc.root_element();
    assert!(root.has_tag_name((atom, "feed")));
    let child = |n: roxmltree::Node<'_, '_>, name: &str| {
        n.children()
            .find(|c| c.has_tag_name((atom, name)))
            .unwrap_or_else(|| panic!("<{name}> in <{}>", n.tag_name().name()))
            .text()
            .unwrap_or("")
            .to_string()
    };
    for name in ["title", "id", "updated"] {
        assert!(!child(root, name).is_empty(), "feed {name}");
    }
    let entries: Vec<_> = root
        .children()
        .filter(|c| c.has_tag_name((atom, "entry")))
        .collect();
    assert_eq!(entries.len(), 2);
    let mut linked = Vec::new();
    for e in &entries {
        let href = e
            .children()
            .find(|c| c.has_tag_name((atom, "link")))
            .and_then(|l| l.attribute("href"))
            .expect("entry link");
        assert!(site.join(href).is_file(), "{href}");
        let id = href.trim_end_matches("/index.html");
        let audit: serde_json::Value =
            serde_json::from_str(&read(&site.join(id).join("audit.json"))).unwrap();
        let c = &audit["campaign"];
        assert_eq!(child(*e, "title"), c["title"].as_str().unwrap());
        assert_eq!(
            child(*e, "updated"),
            format!("{}T00:00:00Z", c["date"].as_str().unwrap())
        );
        let summary = c["summary"].as_str().or(c["decision"].as_str()).unwrap();
        assert_eq!(child(*e, "summary"), summary);
        assert!(!child(*e, "id").is_empty());
        linked.push(id.to_string());
    }
    linked.sort();
    assert_eq!(linked, ["glm53-flash-linux-vs-wsl", "minimal"]);
    // Dated by the campaigns: a second build writes the same feed.
    let again = two_campaigns("digest-index-again");
    assert_eq!(read(&again.join("feed.xml")), feed);
}

#[test]
fn every_page_carries_opengraph_tags() {
    let site = sample_site("digest-og");
    let audit: serde_json::Value =
        serde_json::from_str(&read(&site.join(SAMPLE).join("audit.json"))).unwrap();
    let summary = audit["campaign"]["summary"].as_str().unwrap();
    let mut seen = 0;
    for e in walkdir::WalkDir::new(&site) {
        let e = e.unwrap();
        if e.path().extension().is_none_or(|x| x != "html") {
            continue;
        }
        let html = read(e.path());
        let head = &html[..html.find("</head>").expect("a head")];
        for tag in ["og:title", "og:description", "og:type"] {
            assert!(
                head.contains(&format!("<meta property=\"{tag}\" content=\"")),
                "{tag} in {}",
                e.path().display()
            );
        }
        if e.path().parent() == Some(&site.join(SAMPLE)) {
            assert!(
                head.contains(&format!(
                    "<meta property=\"og:description\" content=\"{summary}\">"
                )),
                "{}",
                e.path().display()
            );
        }
        seen += 1;
    }
    assert!(seen >= 8, "{seen} pages");
}
