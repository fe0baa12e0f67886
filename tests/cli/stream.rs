//! Large text artifacts (over 1 MiB, not kept in memory) are read once by
//! a build: hashed, scanned, numbered, redacted and copied in one pass.
//! That pass must still refuse a file that does not match its manifest,
//! redact values at chunk edges, number values the same on any thread
//! count (after every file kept in memory), and redact a secret that only
//! a large file names by key wherever it appears.

use super::*;

/// One log line of 64 bytes.
const LINE: &[u8; 64] = b"2026-10-01T10:00:00Z cell=4096 decode_tok_s=149.02 status=ok   \n";
/// Where the scanner cuts its first chunk (`scan::CHUNK`, 2 MiB, at a
/// line break).
const EDGE: usize = 2 << 20;

/// A 10 MiB log (five chunks) with private values across the first chunk
/// edge, a secret named by key in the middle (if `secret`), and an
/// address at the end.
fn big_log(secret: bool) -> Vec<u8> {
    let mut log = Vec::with_capacity(10 << 20);
    while log.len() + 64 <= EDGE - 4096 {
        log.extend_from_slice(LINE);
    }
    // The address starts 7 bytes before the edge.
    let filler = EDGE - 12 - log.len() - 1;
    log.extend(std::iter::repeat_n(b'x', filler));
    log.extend_from_slice(b"\npeer=10.20.30.40 answered\n");
    while log.len() < 6 << 20 {
        log.extend_from_slice(LINE);
    }
    if secret {
        log.extend_from_slice(b"retry with password=hunter2hunter2 ok\n");
    }
    while log.len() < (10 << 20) - 4096 {
        log.extend_from_slice(LINE);
    }
    log.extend_from_slice(b"last line from 192.168.7.8 before the end\n");
    log
}

/// The minimal campaign with `big.log`, and a small file sorted after it
/// that names another address and the secret without its key.
fn campaign() -> PathBuf {
    campaign_with(true)
}

fn campaign_with(secret: bool) -> PathBuf {
    let dir = fixture("minimal");
    std::fs::write(dir.join("artifacts/big.log"), big_log(secret)).unwrap();
    std::fs::write(
        dir.join("artifacts/z-small.log"),
        "gateway 10.9.9.9 up\nthe value hunter2hunter2 again\n",
    )
    .unwrap();
    seal(&dir);
    dir
}

fn build_threads(dir: &Path, out: &Path, threads: &str) -> Output {
    run(exhibit()
        .arg("build")
        .arg(dir)
        .arg("-o")
        .arg(out)
        .env("RAYON_NUM_THREADS", threads))
}

/// `dir` built on one thread and on two, which must give the same site:
/// the one-thread site, and its copy of big.log.
fn built_on_one_and_two_threads(dir: &Path) -> (PathBuf, String) {
    let (one, two) = (dir.with_file_name("one"), dir.with_file_name("two"));
    for (out, threads) in [(&one, "1"), (&two, "2")] {
        let o = build_threads(dir, out, threads);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    assert!(
        tree(&one) == tree(&two),
        "the site depends on the thread count"
    );
    let copy = std::fs::read(one.join("minimal/artifacts/big.log")).unwrap();
    (one, String::from_utf8(copy).unwrap())
}

#[test]
fn a_large_log_is_redacted_in_one_pass_numbered_after_small_files_on_any_thread_count() {
    let dir = campaign();
    let (one, copy) = built_on_one_and_two_threads(&dir);
    for value in ["10.20.30.40", "192.168.7.8", "hunter2hunter2"] {
        assert!(!copy.contains(value), "{value} left in the copy");
    }
    // Files kept in memory are numbered first: the small file's address
    // is the first, the large file's come after it, in file order.
    let small = read(&one.join("minimal/artifacts/z-small.log"));
    assert_eq!(
        small,
        "gateway [private-endpoint-1] up\nthe value [credential-1] again\n"
    );
    assert!(copy.contains("\npeer=[private-endpoint-2] answered\n"));
    assert!(copy.contains("retry with password=[credential-1] ok\n"));
    assert!(copy.ends_with("last line from [private-endpoint-3] before the end\n"));
    // The copy keeps every line: only the values changed.
    let lines = |s: &str| s.matches('\n').count();
    assert_eq!(
        lines(&copy),
        lines(&String::from_utf8(big_log(true)).unwrap())
    );
    // The published copy's own hash is listed, never the original's.
    let sums = read(&one.join("minimal/SHA256SUMS"));
    let original = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(big_log(true)));
    assert!(!sums.contains(&original), "{sums}");
    let o = run(exhibit().arg("scan").arg(&one));
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
}

#[test]
fn a_large_log_modified_after_sealing_fails_the_build_and_publishes_nothing() {
    let dir = campaign();
    let out = dir.with_file_name("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let before = tree(&out);
    // The same size, one byte changed near the end: only reading the
    // whole file tells.
    let path = dir.join("artifacts/big.log");
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.len() - 10;
    bytes[at] ^= 1;
    std::fs::write(&path, bytes).unwrap();
    for threads in ["1", "2"] {
        let o = build_threads(&dir, &out, threads);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(
            err.contains("refusing to publish: the evidence does not match the manifest"),
            "{err}"
        );
        assert!(err.contains("1 modified"), "{err}");
        let line = err
            .lines()
            .find(|l| l.trim_start().starts_with("modified"))
            .unwrap_or_else(|| panic!("no modified line: {err}"));
        assert!(line.ends_with("artifacts/big.log"), "{err}");
        assert!(before == tree(&out), "a refused build changed the site");
        let staging = std::fs::read_dir(dir.parent().unwrap())
            .unwrap()
            .filter_map(|e| e.ok())
            .any(|e| e.file_name().to_string_lossy().contains("staging"));
        assert!(!staging, "a staging folder was left behind");
    }
}

#[test]
fn a_large_log_with_a_nul_byte_past_its_head_is_judged_as_a_binary() {
    let dir = campaign();
    let path = dir.join("artifacts/big.log");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[5 << 20] = 0;
    std::fs::write(&path, bytes).unwrap();
    let o = run(exhibit().arg("seal").arg("--update").arg(&dir));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.with_file_name("site");
    let o = build(&dir, &out);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("in a binary file"), "{err}");
    assert!(err.contains("artifacts/big.log"), "{err}");
    assert!(!err.contains("10.20.30.40"), "{err}");
    assert!(!out.exists());
}

/// A large log accepted as a binary (a NUL byte past its head, its hash
/// under `redaction.binary`) is published as it is, and the values its
/// text part held are not numbered: the next large file's first value
/// takes the number after the small files'.
#[test]
fn a_large_log_accepted_as_a_binary_leaves_no_number_behind() {
    let dir = campaign_with(false);
    let path = dir.join("artifacts/big.log");
    let mut bytes = std::fs::read(&path).unwrap();
    // In the last chunk: with two threads, the first four chunks (two
    // batches) are searched and their values numbered before it is read.
    let at = bytes.len() - 100;
    bytes[at] = 0;
    std::fs::write(&path, &bytes).unwrap();
    let mut second = LINE.repeat(40_000);
    second.extend_from_slice(b"then 10.50.50.50 joined\n");
    std::fs::write(dir.join("artifacts/big2.log"), &second).unwrap();
    let sha = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes));
    let meta = dir.join("campaign.json");
    let text = read(&meta).replacen(
        "{\n",
        &format!(
            "{{\n  \"redaction\": {{\"binary\": [{{\"path\": \"artifacts/big.log\", \"sha256\": \"{sha}\"}}]}},\n"
        ),
        1,
    );
    std::fs::write(&meta, text).unwrap();
    let o = run(exhibit().arg("seal").arg("--update").arg(&dir));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.with_file_name("site");
    let o = build_threads(&dir, &out, "2");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(out.join("minimal/artifacts/big.log")).unwrap(),
        bytes
    );
    let small = read(&out.join("minimal/artifacts/z-small.log"));
    assert!(
        small.starts_with("gateway [private-endpoint-1] up\n"),
        "{small}"
    );
    let copy = read(&out.join("minimal/artifacts/big2.log"));
    assert!(
        copy.ends_with("then [private-endpoint-2] joined\n"),
        "{}",
        &copy[copy.len() - 100..]
    );
}

/// A build's `rchar` (bytes read through read(2)): read from
/// /proc/PID/io once the process has exited but before it is reaped.
#[cfg(target_os = "linux")]
fn bytes_read_by(cmd: &mut Command) -> (std::process::ExitStatus, Option<u64>) {
    use std::process::Stdio;
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("exhibit runs");
    let pid = child.id();
    // SAFETY: waitid only writes the zeroed siginfo_t it is given; WNOWAIT
    // leaves the child to be reaped by `wait` below.
    let waited = unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOWAIT,
        )
    };
    let rchar = (waited == 0)
        .then(|| std::fs::read_to_string(format!("/proc/{pid}/io")).ok())
        .flatten()
        .and_then(|io| {
            io.lines()
                .find_map(|l| l.strip_prefix("rchar:"))
                .and_then(|n| n.trim().parse().ok())
        });
    (child.wait().unwrap(), rchar)
}

#[cfg(target_os = "linux")]
#[test]
fn a_build_reads_a_large_log_once() {
    // No secret met by key only in the log: that would have every copy
    // made again once it is known (a second read, tested above).
    let dir = campaign_with(false);
    let size = std::fs::metadata(dir.join("artifacts/big.log"))
        .unwrap()
        .len();
    let others: u64 = walkdir::WalkDir::new(&dir)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.metadata().unwrap().len())
        .sum::<u64>()
        - size;
    let out = dir.with_file_name("site");
    let (status, rchar) = bytes_read_by(exhibit().arg("build").arg(&dir).arg("-o").arg(&out));
    assert!(status.success());
    let Some(rchar) = rchar else {
        eprintln!("no /proc/PID/io here: the read count is not checked");
        return;
    };
    // Every input once, and a little for the head of the large file read
    // by the public stage and what the process itself reads; a second
    // read of the log (or of its copy) would be 10 MiB more.
    let allowance = 2 * others + (1 << 20);
    assert!(
        rchar <= size + allowance,
        "read {rchar} bytes for a {size}-byte log and {others} bytes of other inputs"
    );
}

/// A line longer than a chunk is cut at a space. The last space before
/// the first chunk's end falls between `password:` and its value, so
/// searching each side of that cut alone would find neither. The cut is
/// moved past the value: the build redacts it where it is (it used to be
/// missed by the search of the input, and only the scan of the copy,
/// cut elsewhere once an address before it was replaced, refused it).
#[test]
fn a_value_split_by_a_chunk_cut_is_redacted_whole() {
    let dir = fixture("minimal");
    let chunk = EDGE;
    let mut line = b"peer 10.0.0.1 ".to_vec();
    // `password: ` ends 4 bytes before the first chunk's end, where the
    // input is cut (its last space); the value runs on past the cut.
    let key = b" password: ";
    line.resize(chunk - 4 - key.len(), b'x');
    line.extend_from_slice(key);
    line.extend_from_slice(b"hunter2hunter2xyz and more");
    line.resize(5 << 20, b'y');
    line.push(b'\n');
    std::fs::write(dir.join("artifacts/big.log"), &line).unwrap();
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let copy = std::fs::read(out.join("minimal/artifacts/big.log")).unwrap();
    let copy = String::from_utf8(copy).unwrap();
    assert!(
        copy.starts_with("peer [private-endpoint-1] x"),
        "{}",
        &copy[..40]
    );
    assert!(
        copy.contains(" password: [credential-1] and more"),
        "the value is not replaced where it was"
    );
    assert!(!copy.contains("hunter2"));
}

/// A key that ends a chunk's last line and its value on the next line
/// (`api_token:` then the token, indented, as YAML and many logs write
/// it): found by `exhibit scan` at the value's line and column, as in a
/// small file, and redacted by a build on any thread count. Cutting at
/// the line break between them hid the value from both. The key's line
/// ends 5 bytes before the first chunk's end, then exactly at it (where
/// the first read stops).
#[test]
fn a_key_and_its_value_either_side_of_a_chunk_cut_are_found_and_redacted() {
    for gap in [5, 0] {
        let dir = fixture("minimal");
        let mut log = Vec::new();
        let key = b"api_token:\n";
        while log.len() + 64 <= EDGE - gap - key.len() {
            log.extend_from_slice(LINE);
        }
        log.resize(EDGE - gap - 1 - key.len(), b'x');
        log.push(b'\n');
        log.extend_from_slice(key);
        log.extend_from_slice(b"  Zq8vLm3pRt7wXy2KabcdefGH\n");
        while log.len() < 6 << 20 {
            log.extend_from_slice(LINE);
        }
        std::fs::write(dir.join("artifacts/big.log"), &log).unwrap();
        seal(&dir);

        let o = run(exhibit().arg("scan").arg(dir.join("artifacts/big.log")));
        assert_eq!(o.status.code(), Some(1), "gap {gap}: {}", stderr(&o));
        let found = stdout(&o);
        assert!(found.contains(":3: credential"), "gap {gap}: {found}");
        let at = found
            .split(':')
            .nth(1)
            .and_then(|l| l.parse::<usize>().ok());
        let value_line = log[..EDGE].iter().filter(|&&b| b == b'\n').count() + 1;
        assert_eq!(at, Some(value_line), "gap {gap}: {found}");

        let (_, copy) = built_on_one_and_two_threads(&dir);
        assert!(
            copy.contains("\napi_token:\n  [credential-1]\n"),
            "gap {gap}"
        );
        assert!(!copy.contains("Zq8vLm3pRt7wXy2K"), "gap {gap}");
    }
}

/// The copy's hash starts at the first chunk redaction changes, from the
/// original's hash of the chunks before it: a log whose only private
/// value is on its last line (four clean chunks, then a changed one), and
/// one with none (never hashed twice), each list their copy's true hash.
#[test]
fn a_large_log_changed_only_at_its_end_lists_its_copys_own_hash() {
    let dir = fixture("minimal");
    let mut changed = Vec::with_capacity(10 << 20);
    while changed.len() < (10 << 20) - 4096 {
        changed.extend_from_slice(LINE);
    }
    let clean = changed.clone();
    changed.extend_from_slice(b"last line from 192.168.7.8 before the end\n");
    std::fs::write(dir.join("artifacts/changed.log"), &changed).unwrap();
    std::fs::write(dir.join("artifacts/clean.log"), &clean).unwrap();
    seal(&dir);
    let out = dir.with_file_name("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let sha = |b: &[u8]| hex::encode(<sha2::Sha256 as sha2::Digest>::digest(b));
    let sums = read(&out.join("minimal/SHA256SUMS"));
    let listed = |name: &str| {
        let line = sums.lines().find(|l| l.ends_with(name)).unwrap();
        line.split_whitespace().next().unwrap().to_string()
    };
    let copy = std::fs::read(out.join("minimal/artifacts/changed.log")).unwrap();
    assert!(copy.ends_with(b"last line from [private-endpoint-1] before the end\n"));
    assert_eq!(listed("artifacts/changed.log"), sha(&copy));
    assert_ne!(listed("artifacts/changed.log"), sha(&changed));
    let copy = std::fs::read(out.join("minimal/artifacts/clean.log")).unwrap();
    assert_eq!(copy, clean);
    assert_eq!(listed("artifacts/clean.log"), sha(&clean));
    let o = run(exhibit().arg("verify").arg(&out));
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
}

/// A line longer than a chunk is cut inside it: a value past the cut is
/// reported at its own column of the line, counted from the line's start
/// (it was counted from the chunk's), and a value on the next line at its
/// column there.
#[test]
fn a_value_past_a_long_lines_cut_is_reported_at_its_column() {
    let dir = scratch("long-line-column");
    let mut log = vec![b'w'; EDGE + 1000];
    log.extend_from_slice("é peer 10.1.2.3 end\nnext 10.4.5.6\n".as_bytes());
    let path = dir.join("long.log");
    std::fs::write(&path, &log).unwrap();
    let o = run(exhibit().current_dir(&dir).arg("scan").arg("long.log"));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // `é` is one character of two bytes.
    let column = EDGE + 1000 + "é peer ".chars().count() + 1;
    assert_eq!(
        stdout(&o),
        format!(
            "long.log:1:{column}: private-endpoint\nlong.log:2:6: private-endpoint\n\
             2 findings in 1 of 1 file scanned\n"
        )
    );
}
