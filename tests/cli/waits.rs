//! Nothing waits forever: a named pipe in a campaign (or a symlink to one)
//! is refused with its path instead of blocking `verify`, `build`, `seal`
//! and `scan`, and a chart whose y range cannot be laid out is an error
//! naming the block, not a spinning build. Every run is under a deadline.

use super::*;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Run to the end, or kill after 20 s and fail: a hang is the bug.
fn bounded(cmd: &mut std::process::Command) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("exhibit runs");
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running after 20 s: {cmd:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn mkfifo(path: &Path) {
    let o = run(std::process::Command::new("mkfifo").arg(path));
    assert!(o.status.success(), "mkfifo: {}", stderr(&o));
}

/// Every command refuses the campaign with exit 1 and names one of
/// `shown` (a walk may meet the pipe before the link to it).
fn refused_everywhere(dir: &Path, shown: &[&str]) {
    let out = dir.parent().unwrap().join("site");
    let cases: [(&str, Vec<&std::ffi::OsStr>); 4] = [
        ("verify", vec![dir.as_os_str()]),
        (
            "build",
            vec![dir.as_os_str(), "-o".as_ref(), out.as_os_str()],
        ),
        ("seal", vec!["--update".as_ref(), dir.as_os_str()]),
        ("scan", vec![dir.as_os_str()]),
    ];
    for (cmd, args) in cases {
        let o = bounded(exhibit().arg(cmd).args(args));
        let text = format!("{}{}", stdout(&o), stderr(&o));
        assert_eq!(o.status.code(), Some(1), "{cmd}: exit code:\n{text}");
        assert!(
            shown.iter().any(|s| text.contains(s)) && text.contains("a named pipe"),
            "{cmd} does not name {shown:?} as a named pipe:\n{text}"
        );
        assert!(!text.contains("panicked"), "{cmd} panicked");
    }
    assert!(!out.exists(), "a refused build wrote a site");
}

#[test]
fn a_named_pipe_in_a_campaign_is_refused_with_its_path() {
    let dir = fixture("minimal");
    seal(&dir);
    mkfifo(&dir.join("artifacts/pipe.log"));
    refused_everywhere(&dir, &["artifacts/pipe.log"]);
}

#[test]
fn a_sealed_file_replaced_by_a_named_pipe_is_refused_with_its_path() {
    let dir = fixture("minimal");
    seal(&dir);
    std::fs::remove_file(dir.join("artifacts/run.log")).unwrap();
    mkfifo(&dir.join("artifacts/run.log"));
    refused_everywhere(&dir, &["artifacts/run.log"]);
}

#[test]
fn a_symlink_to_a_named_pipe_is_refused_with_its_path() {
    let dir = fixture("minimal");
    seal(&dir);
    // Inside the folder, so it is not refused as leading out of it.
    mkfifo(&dir.join("data/.pipe"));
    std::fs::remove_file(dir.join("artifacts/run.log")).unwrap();
    std::os::unix::fs::symlink("../data/.pipe", dir.join("artifacts/run.log")).unwrap();
    refused_everywhere(&dir, &["artifacts/run.log", "data/.pipe"]);
}

/// The minimal campaign with its chart's `"y"` replaced and `cells.json`
/// edited; the build must fail with exactly `expect` on stderr.
fn chart_case(y: &str, cells: Option<(&str, &str)>, expect: &str) {
    let dir = fixture("minimal");
    let index = dir.join("index.md");
    let text = read(&index);
    let old = "\"y\": { \"label\": \"Decode (tok/s)\" }";
    assert!(text.contains(old));
    std::fs::write(&index, text.replace(old, &format!("\"y\": {y}"))).unwrap();
    if let Some((from, to)) = cells {
        let path = dir.join("data/cells.json");
        std::fs::write(&path, read(&path).replace(from, to)).unwrap();
    }
    seal(&dir);
    let o = bounded(
        exhibit()
            .arg("build")
            .arg(&dir)
            .arg("-o")
            .arg(dir.parent().unwrap().join("site")),
    );
    assert_eq!(o.status.code(), Some(2), "exit code:\n{}", stderr(&o));
    let expect = format!(
        "error: {expect}\n  --> {}/index.md:19:1\n   |\n19 | ```exhibit chart\n   | ^\n",
        dir.display()
    );
    assert_eq!(stderr(&o), expect);
}

#[test]
fn a_chart_range_of_the_whole_float_line_is_an_error_not_a_spin() {
    chart_case(
        r#"{ "label": "D", "min": -1e308, "max": 1e308 }"#,
        None,
        "bad `exhibit chart` block: chart y range: min -1e308 is beyond the ±1e18 a chart can lay out",
    );
}

#[test]
fn a_chart_range_with_min_not_below_max_is_an_error() {
    chart_case(
        r#"{ "label": "D", "min": 5, "max": 5 }"#,
        None,
        "bad `exhibit chart` block: chart y range: min 5 is not below max 5",
    );
}

#[test]
fn a_chart_range_too_narrow_for_its_magnitude_is_an_error() {
    chart_case(
        r#"{ "label": "D", "min": 1000000000000, "max": 1000000000000.01 }"#,
        None,
        "bad `exhibit chart` block: chart y range: 1e12 to 1.00000000000001e12 is too narrow for its magnitude to lay out ticks",
    );
}

#[test]
fn a_chart_value_beyond_the_axis_limit_is_an_error() {
    chart_case(
        r#"{ "label": "D" }"#,
        Some(("112.07", "1e300")),
        "`exhibit chart` block: record data/cells.json#/cells/0: series `Before` value 1e300 in `before` is beyond the ±1e18 a chart can lay out",
    );
}

#[test]
fn a_chart_axis_whose_margin_overflows_the_limit_is_an_error() {
    chart_case(
        r#"{ "label": "D" }"#,
        Some(("112.07", "9e17")),
        "`exhibit chart` block: chart `Decode by context`: the y axis would run from 0 to 1.2e18, beyond the ±1e18 a chart can lay out",
    );
}
