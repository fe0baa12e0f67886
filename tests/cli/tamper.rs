//! Evidence failures exit 1, name every bad file, and publish nothing.

use super::*;

fn sealed() -> (PathBuf, PathBuf) {
    let dir = fixture("minimal");
    seal(&dir);
    let out = dir.parent().unwrap().join("site");
    let o = build(&dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    (dir, out)
}

fn refused(dir: &Path, out: &Path, expect: &[&str]) {
    let before = tree(out);
    let o = build(dir, out);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "stderr:\n{err}");
    for e in expect {
        assert!(err.contains(e), "stderr lacks {e:?}:\n{err}");
    }
    assert_eq!(before, tree(out), "a refused build changed the site");
}

#[test]
fn modified_file() {
    let (dir, out) = sealed();
    let p = dir.join("data/cells.json");
    let mut bytes = std::fs::read(&p).unwrap();
    bytes[10] ^= 1;
    std::fs::write(&p, bytes).unwrap();
    refused(&dir, &out, &["modified", "data/cells.json"]);
}

#[test]
fn missing_and_unlisted_files() {
    let (dir, out) = sealed();
    std::fs::remove_file(dir.join("artifacts/run.log")).unwrap();
    std::fs::write(dir.join("artifacts/extra.log"), "not sealed").unwrap();
    refused(
        &dir,
        &out,
        &[
            "missing",
            "artifacts/run.log",
            "unlisted",
            "artifacts/extra.log",
        ],
    );
}

#[test]
fn symlink_escaping_the_campaign() {
    let (dir, out) = sealed();
    let secret = dir.parent().unwrap().join("secret.txt");
    std::fs::write(&secret, "private").unwrap();
    std::os::unix::fs::symlink(&secret, dir.join("artifacts/link.txt")).unwrap();
    refused(&dir, &out, &["unsafe-path", "artifacts/link.txt"]);
}

#[test]
fn manifest_path_leaving_the_campaign() {
    let (dir, out) = sealed();
    let m = read(&dir.join("manifest.json"))
        .replace("\"artifacts/run.log\"", "\"../minimal/artifacts/run.log\"");
    std::fs::write(dir.join("manifest.json"), m).unwrap();
    refused(
        &dir,
        &out,
        &[
            "unsafe-path",
            "../minimal/artifacts/run.log",
            "unlisted",
            "artifacts/run.log",
        ],
    );
}

#[test]
fn size_wrong_hash_right() {
    let (dir, out) = sealed();
    let mut m: serde_json::Value = serde_json::from_str(&read(&dir.join("manifest.json"))).unwrap();
    for f in m["files"].as_array_mut().unwrap() {
        if f["path"] == "artifacts/run.log" {
            f["bytes"] = 999.into();
        }
    }
    std::fs::write(dir.join("manifest.json"), m.to_string()).unwrap();
    refused(&dir, &out, &["size-mismatch", "artifacts/run.log"]);
}
