//! docs/FORMAT.md is tested: every fenced block with a `file=NAME` info
//! string is written to a folder, which is sealed and built, and the
//! figures the doc promises appear in the output.

use super::*;

pub fn doc_campaign() -> PathBuf {
    let doc = read(&repo().join("docs/FORMAT.md"));
    let dir = scratch("format-doc").join("campaign");
    let mut lines = doc.lines();
    let mut written = 0;
    while let Some(line) = lines.next() {
        let fence: String = line.chars().take_while(|c| *c == '`').collect();
        if fence.len() < 3 {
            continue;
        }
        let Some(name) = line
            .split_whitespace()
            .find_map(|w| w.strip_prefix("file="))
        else {
            continue;
        };
        let mut body = String::new();
        for l in lines.by_ref() {
            if l == fence {
                break;
            }
            body.push_str(l);
            body.push('\n');
        }
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
        written += 1;
    }
    assert!(
        written >= 8,
        "FORMAT.md examples: found only {written} files"
    );
    dir
}

#[test]
fn format_doc_examples_build() {
    let dir = doc_campaign();
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(
        o.status.success(),
        "FORMAT.md example campaign fails: {}",
        stderr(&o)
    );
    let main = read(&out.join("demo-decode/index.html"));
    // the inline reference, the card and the derived columns of the doc
    for want in [
        "+30.0%",
        "149.02 versus 112.07 tok/s",
        "+33.0%",
        "+36.95",
        "1.330x",
        // references in campaign.json, a caption, a keyvalue value
        "<dd>Completed with 2 retained failures</dd>",
        "(3 cells)</figcaption>",
        "<td>3 per cell and arm</td>",
    ] {
        assert!(main.contains(want), "doc example output lacks {want}");
    }
    let details = read(&out.join("demo-decode/details.html"));
    assert!(details.contains("Routed 380K needle") && details.contains("artifacts/run.log"));
    assert!(details.contains("Routed contexts stay below 131,072 tokens"));
    let audit = read(&out.join("demo-decode/audit.json"));
    assert_eq!(
        audit.matches("\"holds\": true").count(),
        4,
        "the doc's checks"
    );
}

#[test]
fn format_doc_table_of_formats_holds() {
    // The doc's format table, checked against the real renderer.
    let dir = doc_campaign();
    std::fs::write(
        dir.join("data/fmt.json"),
        r#"{"v": 149.0234, "big": 16729}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("details.md"),
        "`=data/fmt.json#/v:+.1` `=data/fmt.json#/big:,.0` `=data/fmt.json#/v:.2` `=data/fmt.json#/v:.1%` `=data/fmt.json#/big`\n",
    )
    .unwrap();
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = read(&out.join("demo-decode/details.html"));
    for want in [">+149.0<", ">16,729<", ">149.02<", ">149.0%<", ">16729<"] {
        assert!(html.contains(want), "lacks {want}");
    }
}
