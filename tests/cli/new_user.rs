//! A new user outside the repository: `exhibit new` starts a campaign
//! that builds as it is, and `exhibit build` without ROOT says what to do.

use super::*;

/// `exhibit ARGS` run in `dir`.
fn in_dir(dir: &Path, args: &[&str]) -> std::process::Output {
    run(exhibit().current_dir(dir).args(args))
}

#[test]
fn new_then_build_gives_a_card_table_chart_and_ledger() {
    let home = scratch("new-user");
    let o = in_dir(&home, &["new", "c"]);
    assert!(o.status.success(), "new: {}", stderr(&o));
    let o = in_dir(&home, &["build", "c", "-o", "out"]);
    assert!(o.status.success(), "build: {}", stderr(&o));
    let html = read(&home.join("out/my-campaign/index.html"));
    for part in [
        "class=\"block card\"",
        "class=\"block table\"",
        "class=\"block ledger\"",
    ] {
        assert!(html.contains(part), "page lacks {part}");
    }
    assert_eq!(wide_charts(&html).len(), 1, "one chart");
    // The ledger's entry comes from the failed row of the data file.
    let csv = read(&home.join("c/data/results.csv"));
    let failed = csv.lines().find(|l| l.ends_with(",failed")).unwrap();
    let cells: Vec<&str> = failed.split(',').collect();
    assert!(html.contains(&format!("{} versus {} tok/s", cells[3], cells[2])));
    // It is sealed: verify passes as written.
    let o = in_dir(&home, &["verify", "c"]);
    assert!(o.status.success(), "verify: {}", stdout(&o));
}

#[test]
fn new_refuses_a_folder_that_is_not_empty() {
    let home = scratch("new-user-full");
    std::fs::create_dir_all(home.join("c")).unwrap();
    std::fs::write(home.join("c/notes.txt"), "mine").unwrap();
    let o = in_dir(&home, &["new", "c"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is not an empty folder"),
        "{}",
        stderr(&o)
    );
    assert_eq!(read(&home.join("c/notes.txt")), "mine");
    assert!(!home.join("c/campaign.json").exists());
}

#[test]
fn build_without_root_outside_a_campaign_says_what_to_do() {
    let home = scratch("new-user-lost");
    let o = in_dir(&home, &["build"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("exhibit new PATH") && err.contains("exhibit build PATH"),
        "{err}"
    );
    assert!(!home.join("site").exists());
    // Inside a campaign, it names the command that builds it.
    assert!(in_dir(&home, &["new", "c"]).status.success());
    let o = in_dir(&home.join("c"), &["build"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("exhibit build . -o ../site"),
        "{}",
        stderr(&o)
    );
}
