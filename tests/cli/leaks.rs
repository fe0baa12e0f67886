//! Detection at any density and in every published copy: a dense line of
//! addresses is redacted in linear time, and a value redacted in a table is
//! redacted alike in the data file, the Markdown source and the downloads.

use super::*;
use std::time::{Duration, Instant};

/// The minimal fixture with `extra` appended to its main page and `files`
/// added; sealed.
fn campaign(name: &str, extra: &str, files: &[(&str, &[u8])]) -> PathBuf {
    let dir = scratch(name).join("campaign");
    copy_tree(&fixture("minimal"), &dir);
    let page = dir.join("index.md");
    std::fs::write(&page, format!("{}\n{extra}\n", read(&page))).unwrap();
    for (path, body) in files {
        std::fs::write(dir.join(path), body).unwrap();
    }
    seal(&dir);
    dir
}

/// Build a campaign whose log is one line of `n` private addresses;
/// returns the build time and the published log.
fn build_dense(name: &str, n: usize) -> (Duration, Vec<u8>) {
    let line = "10.0.0.5 ".repeat(n);
    let dir = campaign(name, "", &[("artifacts/dense.log", line.as_bytes())]);
    let out = dir.parent().unwrap().join("site");
    let t = Instant::now();
    let o = build(&dir, &out);
    let took = t.elapsed();
    assert!(o.status.success(), "{}", stderr(&o));
    (
        took,
        std::fs::read(out.join("minimal/artifacts/dense.log")).unwrap(),
    )
}

fn count(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).filter(|w| *w == needle).count()
}

#[test]
fn a_dense_line_of_addresses_is_redacted_in_linear_time() {
    // `10.0.0.5 ` is 9 bytes: about 1.3 MB and 5.2 MB, both past the size
    // up to which files are kept in memory, so both take the same path.
    let (n_small, n_large) = (145_636, 582_544);
    let (t1, log1) = build_dense("dense-1mb", n_small);
    let (t4, log4) = build_dense("dense-4mb", n_large);
    for (log, n) in [(&log1, n_small), (&log4, n_large)] {
        assert_eq!(count(log, b"10.0.0.5"), 0, "an address survived");
        assert_eq!(
            count(log, b"[private-endpoint-1]"),
            n,
            "every address replaced"
        );
    }
    // Linear: four times the input costs about four times the time
    // (quadratic work costs sixteen); the absolute bound only catches a
    // hang on a slow debug build, not a rate.
    assert!(
        t4 < t1 * 8,
        "4 MB took {t4:?}, 1 MB took {t1:?}: worse than linear"
    );
    assert!(t4 < Duration::from_secs(120), "4 MB took {t4:?}");
}

#[test]
fn a_value_redacted_in_a_table_is_redacted_in_every_copy() {
    let data =
        br#"{"hosts": [{"os": "windows", "windows": "172.28.160.2", "linux": "Linux 10.0.0.5"}]}"#;
    let table = r#"
```exhibit table
{
  "caption": "Hosts",
  "source": "data/hosts.json",
  "pointer": "/hosts",
  "columns": [
    { "header": "OS", "field": "os" },
    { "header": "Windows", "field": "windows" },
    { "header": "Linux", "field": "linux" }
  ]
}
```

Peers host_10.0.0.5 and `"windows": "172.28.160.2"`.
"#;
    let dir = campaign("every-copy", table, &[("data/hosts.json", data)]);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    for (path, bytes) in tree(&out) {
        for raw in ["172.28.160.2", "10.0.0.5"] {
            assert_eq!(count(&bytes, raw.as_bytes()), 0, "{raw} in {path}");
        }
    }
    let site = out.join("minimal");
    for copy in [
        "index.html",
        "index.md",
        "data/hosts.json",
        "downloads/index-table-2.csv",
        "downloads/index-table-2.json",
    ] {
        let text = read(&site.join(copy));
        assert!(
            text.contains("[private-endpoint-"),
            "no placeholder in {copy}: {text}"
        );
    }
}
