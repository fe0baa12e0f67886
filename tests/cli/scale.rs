//! Scale: output that does not depend on how many threads built it, on the
//! sample, the leak corpus and a generated campaign of many pages.

use super::*;

fn build_with_threads(root: &Path, out: &Path, threads: usize) {
    let o = run(exhibit()
        .arg("build")
        .arg(root)
        .arg("-o")
        .arg(out)
        .env("RAYON_NUM_THREADS", threads.to_string()));
    assert!(o.status.success(), "{threads} threads: {}", stderr(&o));
}

fn same_site_on_one_and_two_threads(root: &Path) {
    let base = scratch("threads");
    build_with_threads(root, &base.join("one"), 1);
    build_with_threads(root, &base.join("two"), 2);
    let (one, two) = (tree(&base.join("one")), tree(&base.join("two")));
    assert!(one.len() > 5);
    let differ: Vec<&String> = one
        .iter()
        .zip(&two)
        .filter(|(a, b)| a != b)
        .map(|(a, _)| &a.0)
        .collect();
    assert!(
        one.len() == two.len() && differ.is_empty(),
        "{} differs between thread counts: {differ:?}",
        root.display()
    );
}

#[test]
fn sample_and_leak_corpus_do_not_depend_on_thread_count() {
    same_site_on_one_and_two_threads(&repo().join("sample-artifacts"));
    same_site_on_one_and_two_threads(&{
        let dir = fixture("leaky");
        seal(&dir);
        dir
    });
}

/// A campaign from benches/gen-campaign.py with these arguments.
fn gen_campaign(name: &str, args: &[&str]) -> PathBuf {
    let dir = scratch(name).join("gen");
    let o = Command::new("python3")
        .arg(repo().join("benches/gen-campaign.py"))
        .arg(&dir)
        .args(args)
        .output()
        .expect("python3 runs the generator");
    assert!(o.status.success(), "{}", stderr(&o));
    dir
}

/// A 60-page campaign, always the same seed.
pub(super) fn generated(name: &str) -> PathBuf {
    let args = [
        "--pages",
        "60",
        "--records",
        "8",
        "--artifact-mb",
        "1",
        "--seed",
        "3",
    ];
    gen_campaign(name, &args)
}

#[test]
fn a_generated_campaign_does_not_depend_on_thread_count() {
    let dir = generated("generated");
    same_site_on_one_and_two_threads(&dir);
    // The same seed gives the same campaign.
    assert_eq!(tree(&dir), tree(&generated("generated-again")));
}

/// A plain generated campaign of `pages` pages (no blocks, no artifacts).
fn plain(name: &str, pages: usize) -> PathBuf {
    let pages = pages.to_string();
    gen_campaign(name, &["--pages", &pages, "--plain", "--artifact-mb", "0"])
}

#[test]
fn long_campaigns_list_pages_once_and_link_neighbours() {
    let small = plain("pages-small", 20);
    let large = plain("pages-large", 200);
    let (out_s, out_l) = (
        small.parent().unwrap().join("site"),
        large.parent().unwrap().join("site"),
    );
    assert!(build(&small, &out_s).status.success());
    assert!(build(&large, &out_l).status.success());
    let page = |out: &Path, name: &str| read(&out.join("gen").join(name));

    // A page's size does not grow with the number of pages in the campaign.
    let (a, b) = (
        page(&out_s, "page-0005.html"),
        page(&out_l, "page-0005.html"),
    );
    // (The campaign title and the page count differ: 20 against 200.)
    assert!(
        a.len().abs_diff(b.len()) < 8,
        "page 5 grows with the campaign: {} against {}",
        a.len(),
        b.len()
    );
    let p = page(&out_l, "page-0005.html");
    assert!(
        p.contains("href=\"page-0004.html\">Previous: Cell group 4</a>"),
        "previous"
    );
    assert!(
        p.contains("href=\"page-0006.html\">Next: Cell group 6</a>"),
        "next"
    );
    assert!(p.contains("href=\"index.html#all-pages\">All 200 pages</a>"));
    assert!(!p.contains("page-0100.html"), "no tab per page");
    // The main page lists every other page once (page 1 is also "Next").
    let main = page(&out_l, "index.html");
    for i in 1..200 {
        assert_eq!(
            main.matches(&format!("href=\"page-{i:04}.html\"")).count(),
            1 + usize::from(i == 1),
            "page {i}"
        );
    }
}

/// A folder for a big generated file: tmpfs when there is one (the
/// machine's disk would time file creation, not exhibit), else the target.
fn big_scratch(name: &str) -> PathBuf {
    let shm = Path::new("/dev/shm");
    // Room for the log and its copy (a container's tmpfs may be tiny).
    let free_kib = Command::new("df")
        .args(["-k", "--output=avail"])
        .arg(shm)
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .nth(1)?
                .trim()
                .parse::<u64>()
                .ok()
        })
        .unwrap_or(0);
    if shm.is_dir() && free_kib > 5 << 20 {
        let dir = shm.join(format!("exhibit-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        return dir;
    }
    scratch(name)
}

/// Removes a folder when dropped, even when the test fails.
struct Cleanup(PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Peak resident memory of `cmd`, in KiB, read by GNU time.
fn peak_kib(cmd: &mut Command, report: &Path) -> (Output, u64) {
    let o = run(cmd);
    let text = std::fs::read_to_string(report).unwrap_or_default();
    let kib = text
        .lines()
        .rev()
        .find_map(|l| l.trim().parse().ok())
        .unwrap_or_else(|| {
            panic!(
                "no peak memory from /usr/bin/time: {text:?}\n{}",
                stderr(&o)
            )
        });
    (o, kib)
}

/// `exhibit build DIR -o OUT` and its peak memory (see [`peak_kib`]).
fn peak_build(dir: &Path, out: &Path, report: &Path) -> (Output, u64) {
    peak_kib(
        Command::new("/usr/bin/time")
            .arg("-f")
            .arg("%M")
            .arg("-o")
            .arg(report)
            .arg(env!("CARGO_BIN_EXE_exhibit"))
            .arg("build")
            .arg(dir)
            .arg("-o")
            .arg(out),
        report,
    )
}

#[test]
fn a_two_gib_log_publishes_in_bounded_memory_with_values_at_chunk_edges_redacted() {
    const SIZE: u64 = 2 << 30;
    let base = big_scratch("two-gib");
    let _cleanup = Cleanup(base.clone());
    let dir = base.join("big");
    copy_tree(&fixture("minimal"), &dir);
    std::fs::create_dir_all(dir.join("artifacts")).unwrap();
    // Log lines of 64 bytes; private addresses planted across the first
    // chunk edge (2 MiB, `scan::CHUNK`), on a line of their own
    // elsewhere, and at the end.
    let line = b"2026-10-01T10:00:00Z cell=4096 decode_tok_s=149.02 status=ok   \n";
    assert_eq!(line.len(), 64);
    let block: Vec<u8> = line.repeat(1024);
    let mut f =
        std::io::BufWriter::new(std::fs::File::create(dir.join("artifacts/big.log")).unwrap());
    // The planted address starts 7 bytes before the first chunk edge.
    let edge = 2u64 << 20;
    let mut written = 0u64;
    use std::io::Write;
    while written + (block.len() as u64) <= edge - 4096 {
        f.write_all(&block).unwrap();
        written += block.len() as u64;
    }
    let filler = (edge - 12 - written - 1) as usize;
    f.write_all(&b"x".repeat(filler)).unwrap();
    f.write_all(b"\npeer=10.20.30.40 answered\n").unwrap();
    written += filler as u64 + 1 + 27;
    while written < SIZE - 64 * 1024 {
        f.write_all(&block).unwrap();
        written += block.len() as u64;
    }
    f.write_all(b"last line from 192.168.7.8 before the end\n")
        .unwrap();
    drop(f);
    seal(&dir);

    let out = base.join("site");
    let (o, kib) = peak_build(&dir, &out, &base.join("time.txt"));
    assert!(o.status.success(), "{}", stderr(&o));
    eprintln!("2 GiB artifact: peak memory {kib} KiB");
    assert!(
        kib < 100 * 1024,
        "peak memory {kib} KiB for a 2 GiB artifact"
    );

    // The copy is whole, and both planted values are gone, the one across
    // the chunk edge included; read around them only.
    use std::io::{Read, Seek, SeekFrom};
    let copy = out.join("minimal/artifacts/big.log");
    let mut c = std::fs::File::open(&copy).unwrap();
    let mut around = vec![0u8; 4096];
    c.seek(SeekFrom::Start(edge - 2048)).unwrap();
    c.read_exact(&mut around).unwrap();
    let around = String::from_utf8_lossy(&around);
    assert!(
        !around.contains("10.20.30.40") && around.contains("peer=[private-endpoint-"),
        "{around}"
    );
    let len = c.metadata().unwrap().len();
    c.seek(SeekFrom::Start(len - 200)).unwrap();
    let mut tail = String::new();
    c.read_to_string(&mut tail).unwrap();
    assert!(
        !tail.contains("192.168.7.8") && tail.contains("[private-endpoint-"),
        "{tail}"
    );
    let audit = read(&out.join("minimal/audit.json"));
    assert!(audit.contains("\"path\": \"artifacts/big.log\""));
}

/// Many pages of large prose: what a build holds at once is a few pages,
/// not every rendered page (set aside until the header is known), nor
/// every page's source once it is rendered, nor every page's audit
/// records until audit.json is written.
#[test]
fn a_campaign_of_many_large_pages_builds_in_bounded_memory() {
    const PAGES: usize = 400;
    let base = big_scratch("many-pages");
    let _cleanup = Cleanup(base.clone());
    let dir = base.join("wide");
    std::fs::create_dir_all(&dir).unwrap();
    // About 150 KB of Markdown a page (60 MB in all), with 400 typed
    // figures each, so audit.json lists 13 MB of records.
    let paragraph = "Throughput held steady while the queue drained; the scheduler \
                     kept every worker busy and no request waited on a cold cache. ";
    let mut listed = Vec::new();
    for i in 0..PAGES {
        let name = format!("p{i:04}.md");
        let mut text = format!("# Cell group {i}\n\n");
        for j in 0..1000 {
            text.push_str(paragraph);
            if j % 5 == 0 {
                text.push_str(&format!("Run {j} took {}.{} s.", i + j, j % 10));
            }
            text.push_str("\n\n");
        }
        std::fs::write(dir.join(&name), text).unwrap();
        listed.push(serde_json::json!({ "file": name, "title": format!("Cell group {i}") }));
    }
    let meta = serde_json::json!({
        "id": "wide", "title": "Many large pages", "date": "2026-10-01",
        "state": "Completed", "scope": "synthetic", "decision": "none",
        "pages": listed,
    });
    std::fs::write(dir.join("campaign.json"), meta.to_string()).unwrap();
    seal(&dir);

    let out = base.join("site");
    let (o, kib) = peak_build(&dir, &out, &base.join("time.txt"));
    assert!(o.status.success(), "{}", stderr(&o));
    eprintln!("{PAGES} pages of 150 KB: peak memory {kib} KiB");
    // Their html alone is over 60 MB: every page held until the last was
    // rendered, with its source and records, took 213 MB here; now 81 MB,
    // most of it the sources the verify stage keeps (48 MB at most) until
    // each page renders, and the figures until they are checked.
    assert!(kib < 100 * 1024, "peak memory {kib} KiB for {PAGES} pages");

    // Every page is whole, and nothing set aside is published.
    let last = read(&out.join(format!("wide/p{:04}.html", PAGES - 1)));
    assert!(last.contains("Cell group 399") && last.contains("</html>"));
    assert_eq!(last.matches("Throughput held steady").count(), 1000);
    let audit: serde_json::Value =
        serde_json::from_str(&read(&out.join("wide/audit.json"))).unwrap();
    let figures = audit["figures"].as_array().unwrap();
    // Two in each typed run, one in each heading, one in each page's title
    // in campaign.json.
    assert_eq!(figures.len(), PAGES * (200 * 2 + 1 + 1));
    assert_eq!(figures.last().unwrap()["page"], "p0399.md");
    assert_eq!(figures.last().unwrap()["text"], "1394.5");
    // In page order, wherever each page's records waited.
    let pages: Vec<&str> = figures
        .iter()
        .map(|f| f["page"].as_str().unwrap())
        .collect();
    assert!(pages.windows(2).all(|w| w[0] <= w[1]));
    let names: Vec<String> = walkdir::WalkDir::new(&out)
        .into_iter()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.starts_with(".held")), "{names:?}");
}
