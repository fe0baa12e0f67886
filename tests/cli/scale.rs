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
