//! Redaction: the leak corpus in tests/fixtures/leaky never reaches the
//! built site through any channel, the near-miss corpus survives, the output
//! is rescanned before the swap, and `exhibit scan` reports without values.

use super::*;
use serde_json::Value;

/// The private core of every value planted in the leaky fixture (compared
/// case-insensitively). Each must be in the fixture and nowhere in the site.
const PLANTED: &[&str] = &[
    // campaign.json: title, scope, decision, summary, page titles
    "dgx-lab-3",
    "10.20.30.40",
    "gpu-node-07.internal",
    "/home/alice",
    "infer-gw",
    "Mallory Quinn",
    "PROJ-4821",
    "GPU-5f0e3b2a-1c4d-4e8f-9a7b-3c2d1e0f9a8b",
    "172.16.5.9",
    // index.md: card labels, prose, inline code, fenced code
    "MIG-7c6b5a49-3827-1605-f4e3-d2c1b0a99887",
    "169.254.12.7",
    "10.20.30.41",
    "192.168.77.1",
    "gpu-node-11",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJiZW5jaCJ9",
    "Hunter2Pass",
    "svc_user",
    "/Users/bob",
    "sk-proj-AbCdEf1234567890GhIjKlMnOp",
    "tok_live_9f8e7d6c5b4a",
    "172.31.255.1",
    "GPU-11223344-5566-7788-99aa-bbccddeeff00",
    "/root/.cache/torch",
    "zyx987wvu654",
    "jenkins.corp",
    // links, link titles, images, inline HTML, file names
    "nas.lan",
    "wiki.intranet",
    "s3cr3tV4lue",
    "/home/frank",
    "gpu-node-09.internal",
    "10.0.0.7",
    "build-box.local",
    "GPU-0a0b0c0d-1e1f-2a2b-3c3d-4e4f5a5b6c6d",
    "router.home.arpa",
    r"\gina",
    "infer-03",
    "192.168.50.23",
    r"wsl.localhost\Debian",
    // table caption, chart title, axis labels, legends
    "/mnt/c/Users/erin",
    "fd12:3456:789a::1",
    "AKIA2QWERTYUIOPASDFG",
    "GPU-ABCDEF01-2345-6789-ABCD-EF0123456789",
    "PROJ-9913",
    // data files: card fields, table cells, chart categories
    "fd00:1:2::5",
    r"\ivan",
    "ghp_0123456789abcdefghijABCDEFGHIJ012345",
    "kq83hd72ks9sl2",
    r"\dave",
    "192.168.50.24",
    "gpu-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9",
    r"\carol",
    "PROJ-4822",
    "100.64.1.2",
    "fileserver",
    "PROJ-4823",
    "infer-04",
    "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ123456",
    "100.127.9.9",
    "ASIAZXCVBNMLKJHGFDSA",
    "/home/judy",
    "xoxb-123456789012-abcdefghijkl",
    // ledger fields
    "100.64.7.7",
    r"\kim",
    "gho_abcdefghijklmnopqrstuvwxyz0123456789",
    "MIG-GPU-1a2b3c4d-5e6f-7081-92a3-b4c5d6e7f809",
    // copied text artifacts
    "fe80::1ff:fe23:4567:890a",
    "dXNlcjpzZWNyZXRwYXNz",
    "CorrectHorse42",
    "/root/.cache/hf",
    "PROJ-9914",
    "github_pat_11ABCDEFG0123456789",
    "xoxp-998877665544-zyxwvutsrqpo",
    r"\lee",
    "MIG-aabbccdd-eeff-0011-2233-445566778899",
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
    "QyNTUxOQAAACBQmFakeKeyMaterial",
    "dgx-lab-3.corp",
    // secrets shown without their key: a card field read from "api_key",
    // a keyvalue row labelled HF_TOKEN
    "kq83hd72ks9sl2",
    "Zq9xW7vB3nM1kL5j",
];

/// (published file, values from the near-miss corpus it must still hold)
const SURVIVORS: &[(&str, &[&str])] = &[
    (
        "index.html",
        &[
            "149.02 tok/s",
            "2026-11-20",
            "0.0.0.dev1+g033446bb05",
            "033446bb05c1d1e6a8c0e7d2f8b9a4c3d2e1f0a9",
            "zai-org/GLM-4.7-Flash@8a1b2c3d",
            "https://huggingface.co/zai-org/GLM-4.7-Flash",
            "tensorrt==10.3.0.26",
            "http://127.0.0.1:8000",
            "0.0.0.0:8000",
            "8.8.8.8",
            "192.0.2.10",
            "/usr/lib/x86_64-linux-gnu",
            "/opt/conda/envs/bench",
            "~/.cache/huggingface",
            "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            "3f2b8c1e-7d4a-4b9e-8c21-5e6f7a8b9c0d",
            "sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945",
            "max_tokens=512",
            "https://github.com/vllm-project/vllm",
            "550e8400-e29b-41d4-a716-446655440000",
            "10.9.9.9",
        ],
    ),
    (
        "notes.html",
        &["10.9.9.9", "033446bb05c1d1e6a8c0e7d2f8b9a4c3d2e1f0a9"],
    ),
    (
        "data/runs.json",
        &["0.0.0.dev1+g033446bb05", "tensorrt==10.3.0.26", "8.8.8.8"],
    ),
    (
        "ledger.html",
        &["033446bb05c1d1e6a8c0e7d2f8b9a4c3d2e1f0a9", "HTTP 401"],
    ),
];

/// A sealed copy of the leaky fixture.
fn leaky() -> PathBuf {
    let dir = fixture("leaky");
    seal(&dir);
    dir
}

fn build_leaky() -> (PathBuf, PathBuf) {
    let dir = leaky();
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "leaky build failed: {}", stderr(&o));
    (dir, out)
}

/// HTML and XML character references decoded, so `&#49;0.0.0.7` is caught.
fn decode_entities(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let end = rest.find(';').filter(|&e| e <= 12);
        let decoded = end.and_then(|e| {
            let name = &rest[1..e];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some(' '),
                _ if name.starts_with("#x") || name.starts_with("#X") => {
                    u32::from_str_radix(&name[2..], 16)
                        .ok()
                        .and_then(char::from_u32)
                }
                _ if name.starts_with('#') => name[1..].parse().ok().and_then(char::from_u32),
                _ => None,
            };
            c.map(|c| (c, e))
        });
        match decoded {
            Some((c, e)) => {
                out.push(c);
                rest = &rest[e + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Every text the site exposes: each file's path, its bytes, and its
/// entity-decoded form, lower-cased.
fn exposed(site: &Path) -> Vec<(String, String)> {
    let mut texts = Vec::new();
    for (path, bytes) in tree(site) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        texts.push((path.clone(), path.to_lowercase()));
        texts.push((path.clone(), decode_entities(&text).to_lowercase()));
        texts.push((path, text.to_lowercase()));
    }
    texts
}

#[test]
fn no_planted_value_reaches_the_site() {
    assert!(
        PLANTED.len() >= 60,
        "the corpus has {} values",
        PLANTED.len()
    );
    let (dir, out) = build_leaky();
    // Each value really is in the input, so the test can fail.
    let input: String = tree(&dir)
        .into_iter()
        .map(|(p, b)| format!("{p}\n{}\n", String::from_utf8_lossy(&b)))
        .collect::<String>()
        .to_lowercase();
    for v in PLANTED {
        assert!(input.contains(&v.to_lowercase()), "{v} is not planted");
    }
    let mut leaks = Vec::new();
    for (path, text) in exposed(&out) {
        for v in PLANTED {
            if text.contains(&v.to_lowercase()) {
                leaks.push(format!("{v} in {path}"));
            }
        }
    }
    leaks.dedup();
    assert!(leaks.is_empty(), "leaked: {leaks:#?}");
    // The charts are part of the output too: they were drawn from the data.
    let main = read(&out.join("leaky/index.html"));
    assert_eq!(svgs(&main).len(), 2, "one chart, drawn wide and narrow");
    assert!(main.contains("[gpu-uuid-"), "legend lost its placeholder");
}

#[test]
fn near_misses_survive_unchanged() {
    let (_dir, out) = build_leaky();
    let mut count = 0;
    for (file, values) in SURVIVORS {
        let text = decode_entities(&read(&out.join("leaky").join(file)));
        for v in *values {
            assert!(text.contains(v), "{v} was lost from {file}");
            count += 1;
        }
    }
    assert!(count >= 15);
}

#[test]
fn the_same_value_gets_the_same_placeholder_in_every_channel() {
    let (dir, out) = build_leaky();
    let site = out.join("leaky");
    let smi = std::fs::read_dir(site.join("artifacts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("smi-"))
        .expect("the nvidia-smi dump is published");
    // The MIG UUID appears in the dump and in a card label.
    let dump = read(&smi);
    let at = dump.find("Device 0: (UUID: ").unwrap() + "Device 0: (UUID: ".len();
    let placeholder = &dump[at..at + dump[at..].find(')').unwrap()];
    assert!(placeholder.starts_with("[gpu-uuid-"), "{placeholder}");
    let main = read(&site.join("index.html"));
    assert!(main.contains(&format!("Decode on {placeholder}")));
    // A deny term matches in any case and keeps one placeholder.
    let log = std::fs::read_dir(site.join("artifacts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("-run.log"))
        .unwrap();
    let log = read(&log);
    let op = &log[log.find("(operator ").unwrap() + 10..log.find(")\n").unwrap()];
    assert!(op.starts_with("[redacted-"), "{op}");
    assert!(main.contains(&format!("Operated by {op}")) || main.contains(op));
    // A second build is byte-identical, placeholders included.
    let again = dir.parent().unwrap().join("again");
    assert!(build(&dir, &again).status.success());
    assert_eq!(tree(&out), tree(&again));
}

#[test]
fn report_counts_redactions_and_publishes_only_the_copys_hash() {
    let (_dir, out) = build_leaky();
    let site = out.join("leaky");
    let audit: Value = serde_json::from_str(&read(&site.join("audit.json"))).unwrap();
    let files = audit["files"].as_array().unwrap();
    let log = files
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with("-run.log"))
        .unwrap();
    assert_eq!(log["redactions"]["credential"], 3, "{log}");
    assert_eq!(log["redactions"]["policy"], 2, "{log}");
    assert_eq!(log["redacted"], true, "{log}");
    assert!(log.get("published_sha256").is_none(), "{log}");
    let published = site.join(log["published"].as_str().unwrap());
    let bytes = std::fs::read(&published).unwrap();
    assert_eq!(
        log["sha256"].as_str().unwrap(),
        sha256_hex(&bytes),
        "a redacted file is listed with its copy's hash"
    );
    assert_eq!(log["bytes"], bytes.len(), "and its copy's size");
    let logo = files
        .iter()
        .find(|f| f["path"] == "artifacts/logo.png")
        .unwrap();
    assert_eq!(logo["unscanned"], true);
    assert_eq!(logo["redacted"], false);
    let manifest = read(&site.join("manifest.html"));
    assert!(manifest.contains("<th scope=\"col\">Redactions</th>"));
    assert!(manifest.contains("redacted copy"));
    assert!(manifest.contains("binary, scanned and published as it is"));
    assert!(
        manifest.contains("3 credential"),
        "per-category counts shown"
    );
    // The published folder still audits clean, and coreutils agrees.
    let o = run(exhibit().arg("verify").arg(&site));
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let o = Command::new("sha256sum")
        .args(["-c", "--quiet", "SHA256SUMS"])
        .current_dir(&site)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stdout(&o));
}

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn a_leak_in_the_output_fails_the_build_and_keeps_the_old_site() {
    let (dir, out) = build_leaky();
    let before = tree(&out);
    // A theme whose base template carries a private address: nothing in
    // the campaign has it, so only the scan of the written output sees it.
    let theme = dir.parent().unwrap().join("theme");
    std::fs::create_dir_all(theme.join("templates")).unwrap();
    let base = read(&repo().join("templates/base.html")).replacen(
        "<head>",
        "<head>\n<!-- staged on 10.11.12.13 -->",
        1,
    );
    assert!(base.contains("10.11.12.13"));
    std::fs::write(theme.join("templates/base.html"), base).unwrap();
    let o = run(exhibit()
        .arg("build")
        .arg(&dir)
        .arg("-o")
        .arg(&out)
        .arg("--theme")
        .arg(&theme));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("leaky/index.html:4:"),
        "names file:line:col: {err}"
    );
    assert!(
        err.contains("private-endpoint"),
        "names the category: {err}"
    );
    assert!(!err.contains("10.11.12.13"), "never the value: {err}");
    assert_eq!(tree(&out), before, "the previous site stays");
}

#[test]
fn scan_reports_findings_by_position_without_values() {
    let dir = leaky();
    let o = run(exhibit().arg("scan").arg(&dir));
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    // Every finding line is `FILE:LINE:COL: CATEGORY` (or `FILE (file
    // name): CATEGORY`) for a real file: the value itself is never printed.
    let categories = [
        "private-endpoint",
        "host-path",
        "gpu-uuid",
        "credential",
        "policy",
    ];
    for line in text.lines() {
        if line.contains(" finding") {
            continue;
        }
        let (at, category) = line.rsplit_once(": ").expect(line);
        assert!(categories.contains(&category), "{line}");
        let file = at
            .strip_suffix(" (file name)")
            .map(str::to_string)
            .unwrap_or_else(|| {
                let mut parts = at.rsplitn(3, ':');
                let col: usize = parts.next().unwrap().parse().expect(line);
                let ln: usize = parts.next().unwrap().parse().expect(line);
                assert!(col > 0 && ln > 0, "{line}");
                parts.next().unwrap().to_string()
            });
        // A name holding a private value is shown masked (`[host-path]`).
        let masked = categories.iter().any(|c| file.contains(&format!("[{c}]")));
        assert!(Path::new(&file).is_file() || masked, "{line}");
    }
    assert!(
        !text.contains("gpu-node-09.internal"),
        "names are masked: {text}"
    );
    assert!(!stderr(&o).to_lowercase().contains("10.20.30.40"));
    let shown = dir.join("notes.md").display().to_string();
    assert!(text.contains(&format!("{shown}:7:")), "{text}");
    assert!(text.contains(": policy"), "campaign policy applied: {text}");
    assert!(
        text.contains("(1 binary or archive, scanned for printable text)"),
        "{text}"
    );
    for c in ["private-endpoint", "host-path", "gpu-uuid", "credential"] {
        assert!(text.contains(&format!(": {c}\n")), "{c} missing: {text}");
    }
    let o = run(exhibit().arg("scan").arg(&dir).arg("--json"));
    assert_eq!(o.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["clean"], false);
    let findings = report["findings"].as_array().unwrap();
    assert!(findings.len() > 60, "{} findings", findings.len());
    let f = findings
        .iter()
        .find(|f| f["file"].as_str().unwrap().ends_with("notes.md"))
        .unwrap();
    assert!(f["line"].as_u64().unwrap() > 0 && f["column"].as_u64().unwrap() > 0);
}

#[test]
fn scan_of_a_clean_folder_or_a_missing_path() {
    let (_dir, out) = build_leaky();
    let o = run(exhibit().arg("scan").arg(&out));
    assert!(o.status.success(), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("no private values found"),
        "{}",
        stdout(&o)
    );
    let o = run(exhibit()
        .arg("scan")
        .arg(out.join("leaky/index.html"))
        .arg("--json"));
    assert!(o.status.success());
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["clean"], true);
    assert_eq!(report["files"], 1);
    let o = run(exhibit().arg("scan").arg(out.join("no-such-thing")));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no-such-thing"));
}

#[test]
fn sample_campaign_builds_clean_with_its_planted_values_redacted() {
    let planted = [
        "/home/glmops",
        "10.40.2.17",
        "GPU-8d3f1c2a-6b7e-4a90-b5c4-1e2f3a4b5c6d",
        "GPU-2e7a9b4c-0d1f-4c38-9e6a-7b8c9d0e1f2a",
        "glm-box.lan",
        "7c2f9e41a8d3b605ce",
    ];
    let sample = repo().join("sample-artifacts");
    let raw: String = tree(&sample)
        .into_iter()
        .map(|(_, b)| String::from_utf8_lossy(&b).into_owned())
        .collect();
    let out = scratch("sample-redacted").join("site");
    let o = build(&sample, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    for v in planted {
        assert!(raw.contains(v), "{v} is not planted in the sample");
        for (path, text) in exposed(&out) {
            assert!(!text.contains(&v.to_lowercase()), "{v} leaked into {path}");
        }
    }
    let manifest = read(&out.join("glm53-flash-linux-vs-wsl/manifest.html"));
    assert!(
        manifest.contains("6 private values were replaced by placeholders in 3 files"),
        "manifest page states the redactions"
    );
    for counted in ["2 gpu-uuid", "1 host-path"] {
        assert!(manifest.contains(counted), "{counted} not shown");
    }
}

/// A copy of the minimal fixture with `extra` appended to its main page,
/// `policy` as its redaction policy, and `files` added; sealed.
fn minimal_with(extra: &str, policy: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = fixture("minimal");
    let page = dir.join("index.md");
    std::fs::write(&page, format!("{}\n{extra}\n", read(&page))).unwrap();
    let meta = dir.join("campaign.json");
    let text = read(&meta).replacen(
        "\"pages\"",
        &format!("\"redaction\": {policy},\n  \"pages\""),
        1,
    );
    std::fs::write(&meta, text).unwrap();
    for (name, body) in files {
        std::fs::write(dir.join(name), body).unwrap();
    }
    seal(&dir);
    dir
}

#[test]
fn disguised_values_are_redacted_or_their_links_dropped() {
    let dir = minimal_with(
        "Run by Mallory\nQuinn, Mallory  Quinn and MALLORY QUINN.\n\n\
         Paths file://localhost/home/fuser/x and \\\\?\\C:\\Users\\fuser3\\x.\n\n\
         Links [a](http://10.5/), [b](http://0x0a.0.0.5/), [c](http://167772165/),\n\
         [d](http://%31%30.0.0.17/x), [e](http://gpu-node%2einternal/),\n\
         [f](http://10\u{3002}0\u{3002}0\u{3002}76/) and mail <ops@example.com>;\n\
         public [g](https://8.8.8.8/) stays.\n",
        r#"{"deny": ["Mallory Quinn"]}"#,
        &[],
    );
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let main = read(&out.join("minimal/index.html"));
    for gone in [
        "Mallory",
        "fuser",
        "fuser3",
        "10.5/",
        "0x0a",
        "167772165",
        "%31%30",
        "%2einternal",
        "%E3%80%82",
    ] {
        assert!(
            !main.to_lowercase().contains(&gone.to_lowercase()),
            "{gone} survived"
        );
    }
    assert!(
        main.contains("href=\"mailto:ops@example.com\""),
        "mail autolink kept"
    );
    assert!(
        main.contains("href=\"https://8.8.8.8/\""),
        "public link kept"
    );
}

#[test]
fn anchored_policy_patterns_match_at_every_line() {
    let dir = minimal_with(
        "A paragraph before.\n\nopsbox-17 handled the second run.\n",
        r#"{"patterns": ["^opsbox-[0-9]+"]}"#,
        &[("artifacts/hosts.txt", "first line\nopsbox-21 served\n")],
    );
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let main = read(&out.join("minimal/index.html"));
    assert!(!main.contains("opsbox-17"), "page line start survived");
    assert!(main.contains("[redacted-"), "placeholder shown");
    let copy = read(&out.join("minimal/artifacts/hosts.txt"));
    assert!(!copy.contains("opsbox-21"), "{copy}");
}

#[test]
fn values_hidden_by_markup_or_escapes_fail_closed() {
    let dir = minimal_with(
        "Split by emphasis: 10.0.*0*.9 here.\n\nEntity in the copy: 10&#46;0.0.5 there.\n",
        "{}",
        &[("data/escaped.json", "{\"host\": \"10\\u002e0.0.41\"}\n")],
    );
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    // The page the renderer wrote is caught; the copies of the source and
    // the data file are redacted in every view, so they are not.
    assert!(err.contains("minimal/index.html:"), "{err}");
    for copy in ["minimal/index.md:", "escaped.json"] {
        assert!(!err.contains(copy), "{copy} named: {err}");
    }
    assert!(
        !err.contains("10.0.0.41") && !err.contains("10.0.0.9"),
        "{err}"
    );
    assert!(!out.exists());
}

/// The minimal fixture with a table of settings read by a key-value block
/// (`data/creds.EXT`, read as `format` when given) whose row labelled
/// `HF_TOKEN` holds a secret, and a log naming that secret with no key.
fn secret_by_label(ext: &str, format: Option<&str>) -> PathBuf {
    let dir = fixture("minimal");
    let creds = format!("data/creds.{ext}");
    std::fs::write(
        dir.join(&creds),
        format!("key,value\nHF_TOKEN,{LABELLED}\nregion,west\n"),
    )
    .unwrap();
    let format = format.map_or(String::new(), |f| format!(", \"format\": \"{f}\""));
    let index = dir.join("index.md");
    let block = format!("\n```exhibit keyvalue\n{{ \"source\": \"{creds}\"{format} }}\n```\n");
    std::fs::write(&index, read(&index) + &block).unwrap();
    let note = format!("the run used {LABELLED} to pull weights\n");
    std::fs::write(dir.join("artifacts/notes.txt"), note).unwrap();
    seal(&dir);
    dir
}

const LABELLED: &str = "Qm4Zr8Tx2Lw6Np0Vb";

/// A CSV's row labelled as a secret is learned before anything is copied:
/// the log naming the value without a key, and the CSV itself, are
/// published redacted, as the page is.
#[test]
fn a_secret_labelled_in_a_csv_is_taken_out_of_every_copy() {
    let dir = secret_by_label("csv", None);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    for (path, bytes) in tree(&out) {
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(LABELLED), "{path} publishes the secret");
    }
    let notes = read(&out.join("minimal/artifacts/notes.txt"));
    assert_eq!(notes, "the run used [credential-1] to pull weights\n");
    assert!(read(&out.join("minimal/index.html")).contains("[credential-1]"));
}

/// A secret met by key only as the pages render (a table read in a format
/// its file name does not say) is looked for in the copies published as
/// they are too: the build refuses them, exit 1, naming file, line and
/// category only, and publishes nothing.
#[test]
fn a_secret_met_only_as_pages_render_is_looked_for_in_verbatim_copies() {
    let dir = secret_by_label("txt", Some("csv"));
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains(LABELLED), "{err}");
    insta::assert_snapshot!("secret-met-while-rendering", err);
    assert!(!out.exists());
}
