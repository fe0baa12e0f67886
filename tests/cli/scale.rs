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

/// A 60-page campaign from benches/gen-campaign.py, always the same seed.
fn generated(name: &str) -> PathBuf {
    let dir = scratch(name).join("gen");
    let o = Command::new("python3")
        .arg(repo().join("benches/gen-campaign.py"))
        .arg(&dir)
        .args([
            "--pages",
            "60",
            "--records",
            "8",
            "--artifact-mb",
            "1",
            "--seed",
            "3",
        ])
        .output()
        .expect("python3 runs the generator");
    assert!(o.status.success(), "{}", stderr(&o));
    dir
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
    let dir = scratch(name).join("gen");
    let o = Command::new("python3")
        .arg(repo().join("benches/gen-campaign.py"))
        .arg(&dir)
        .args([
            "--pages",
            &pages.to_string(),
            "--plain",
            "--artifact-mb",
            "0",
        ])
        .output()
        .expect("python3 runs the generator");
    assert!(o.status.success(), "{}", stderr(&o));
    dir
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
