//! Every byte scanned: text in any encoding, binaries, compressed files and
//! archives, and the decoded views of Markdown, JSON and HTML. Each private
//! value is redacted or the build refuses; none is ever published.

use crate::redact::sha256_hex;
use crate::*;
use std::io::Write;

const VALUE: &str = "10.20.30.40";

/// The minimal campaign with `files` added under artifacts/ and sealed.
fn campaign_with(files: &[(&str, Vec<u8>)]) -> PathBuf {
    let dir = fixture("minimal");
    for (name, body) in files {
        let path = dir.join("artifacts").join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
    }
    seal(&dir);
    dir
}

fn utf16le(s: &str, bom: bool) -> Vec<u8> {
    let mut out = if bom { vec![0xFF, 0xFE] } else { Vec::new() };
    for u in s.encode_utf16() {
        out.extend_from_slice(&u.to_le_bytes());
    }
    out
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn tar_of(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, body) in members {
        let mut h = tar::Header::new_gnu();
        h.set_size(body.len() as u64);
        h.set_mode(0o644);
        h.set_mtime(0);
        h.set_cksum();
        b.append_data(&mut h, name, *body).unwrap();
    }
    b.into_inner().unwrap()
}

/// Every file of the site in every form a reader sees it: as it is, UTF-16
/// decoded, Markdown, JSON and HTML escapes taken out, gzip decompressed.
fn assert_never_published(site: &Path, value: &str) {
    for (rel, bytes) in tree(site) {
        let mut forms = vec![String::from_utf8_lossy(&bytes).into_owned()];
        if bytes.starts_with(&[0xFF, 0xFE]) {
            let units: Vec<u16> = bytes[2..]
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect();
            forms.push(String::from_utf16_lossy(&units));
        }
        if bytes.starts_with(&[0x1F, 0x8B]) {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(
                &mut flate2::read::MultiGzDecoder::new(&bytes[..]),
                &mut s,
            );
            forms.push(s);
        }
        let utf16_value = utf16le(value, false);
        assert!(
            !bytes.windows(utf16_value.len()).any(|w| w == utf16_value),
            "{rel} holds the value as UTF-16"
        );
        for f in forms {
            let decoded = f
                .replace("\\.", ".")
                .replace("&#46;", ".")
                .replace("&period;", ".")
                .replace("\\u002e", ".")
                .replace("\\u002E", ".");
            assert!(!decoded.contains(value), "{rel} publishes the value");
        }
    }
}

fn built(dir: &Path) -> PathBuf {
    let out = dir.parent().unwrap().join("site");
    let o = build(dir, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

fn refused(dir: &Path) -> String {
    let out = dir.parent().unwrap().join("refused-site");
    let o = build(dir, &out);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!out.exists(), "nothing is published");
    let err = stderr(&o);
    assert!(!err.contains(VALUE), "never the value: {err}");
    err.replace(&dir.display().to_string(), "CAMPAIGN")
}

#[test]
fn a_latin1_log_is_redacted_in_place_keeping_its_other_bytes() {
    let log = b"h\xf4te caf\xe9 at 10.20.30.40 ok\n".to_vec();
    let dir = campaign_with(&[("env.log", log)]);
    let site = built(&dir);
    assert_never_published(&site, VALUE);
    let copy = std::fs::read(site.join("minimal/artifacts/env.log")).unwrap();
    assert_eq!(copy, b"h\xf4te caf\xe9 at [private-endpoint-1] ok\n");
}

#[test]
fn a_utf16_log_is_decoded_redacted_and_encoded_again() {
    let log = utf16le("GPU host at 10.20.30.40\r\ndone\r\n", true);
    let dir = campaign_with(&[("env.log", log)]);
    let site = built(&dir);
    assert_never_published(&site, VALUE);
    let copy = std::fs::read(site.join("minimal/artifacts/env.log")).unwrap();
    assert_eq!(
        copy,
        utf16le("GPU host at [private-endpoint-1]\r\ndone\r\n", true)
    );
}

#[test]
fn a_binary_with_an_address_refuses_the_build_until_accepted_by_hash() {
    let mut ascii = b"\x7fELF\x02\x01\0\0\0build on 10.20.30.40\0\x01".to_vec();
    ascii.extend(std::iter::repeat_n(0u8, 16));
    let mut wide = b"\0\x01\x02\x03".to_vec();
    wide.extend(utf16le("addr=10.20.30.40;", false));
    wide.extend([0, 0, 7]);
    let dir = campaign_with(&[("tool.bin", ascii.clone()), ("wide.dat", wide)]);
    let err = refused(&dir);
    assert_eq!(
        err,
        format!(
            "error: refusing to publish files whose private values cannot be redacted in place:\n  \
             CAMPAIGN/artifacts/tool.bin:1:19: private-endpoint in a binary file\n  \
             CAMPAIGN/artifacts/wide.dat:1:15: private-endpoint in a binary file\n\
             remove the values from these files, or accept each exact file as it is under \
             `redaction.binary` in campaign.json: \
             [{{\"path\": \"artifacts/tool.bin\", \"sha256\": \"{}\"}}, \
             {{\"path\": \"artifacts/wide.dat\", \"sha256\": \"{}\"}}]\n",
            sha256_hex(&ascii),
            sha256_hex(&std::fs::read(dir.join("artifacts/wide.dat")).unwrap())
        )
    );
}

#[test]
fn a_binary_accepted_by_its_hash_is_published_as_it_is_and_a_clean_one_needs_no_entry() {
    let blob = b"\0\0build on 10.20.30.40\0".to_vec();
    let clean = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0".to_vec();
    let dir = fixture("minimal");
    std::fs::write(dir.join("artifacts/tool.bin"), &blob).unwrap();
    std::fs::write(dir.join("artifacts/logo.png"), &clean).unwrap();
    let meta = dir.join("campaign.json");
    let text = read(&meta).replacen(
        "\"pages\"",
        &format!(
            "\"redaction\": {{\"binary\": [{{\"path\": \"artifacts/tool.bin\", \"sha256\": \"{}\"}}]}},\n  \"pages\"",
            sha256_hex(&blob)
        ),
        1,
    );
    std::fs::write(&meta, text).unwrap();
    seal(&dir);
    let site = built(&dir);
    assert_eq!(
        std::fs::read(site.join("minimal/artifacts/tool.bin.txt")).unwrap(),
        blob
    );
    assert_eq!(
        std::fs::read(site.join("minimal/artifacts/logo.png")).unwrap(),
        clean
    );
    // Another byte, another file: accepted no more.
    std::fs::write(
        dir.join("artifacts/tool.bin"),
        b"\0\0build on 10.20.30.41\0",
    )
    .unwrap();
    let o = run(exhibit().arg("seal").arg("--update").arg(&dir));
    assert!(o.status.success(), "{}", stderr(&o));
    let err = refused(&dir);
    assert!(
        err.contains("CAMPAIGN/artifacts/tool.bin:1:12: private-endpoint in a binary file"),
        "{err}"
    );
}

#[test]
fn compressed_logs_and_archives_refuse_naming_archive_and_member() {
    let log = format!("peer {VALUE}:9000\n");
    let tarred = tar_of(&[("logs/a.log", b"fine\n"), ("logs/b.log", log.as_bytes())]);
    let dir = campaign_with(&[
        ("env.log.gz", gzip(log.as_bytes())),
        (
            "env.log.zst",
            ruzstd::encoding::compress_to_vec(
                log.as_bytes(),
                ruzstd::encoding::CompressionLevel::Fastest,
            ),
        ),
        ("logs.tar", tarred.clone()),
        ("logs.tar.gz", gzip(&tarred)),
        ("logs.tgz", gzip(&tarred)),
        ("ok.tar.gz", gzip(&tar_of(&[("x.log", b"nothing here\n")]))),
    ]);
    let err = refused(&dir);
    let body: Vec<&str> = err.lines().skip(1).take(5).collect();
    assert_eq!(
        body,
        [
            "  CAMPAIGN/artifacts/env.log.gz > env.log:1:6: private-endpoint in an archive member",
            "  CAMPAIGN/artifacts/env.log.zst > env.log:1:6: private-endpoint in an archive member",
            "  CAMPAIGN/artifacts/logs.tar > logs/b.log:1:6: private-endpoint in an archive member",
            "  CAMPAIGN/artifacts/logs.tar.gz > logs.tar/logs/b.log:1:6: private-endpoint in an archive member",
            "  CAMPAIGN/artifacts/logs.tgz > logs.tar/logs/b.log:1:6: private-endpoint in an archive member",
        ],
        "{err}"
    );
    assert!(!err.contains("ok.tar.gz"), "{err}");
}

#[test]
fn a_member_name_is_masked_before_it_is_printed() {
    let tarred = tar_of(&[("ip-10-0-0-27/10.20.30.40.log", b"x\n")]);
    let dir = campaign_with(&[("names.tar", tarred)]);
    let err = refused(&dir);
    assert!(
        err.contains(
            "names.tar > ip-[private-endpoint]/[private-endpoint].log (member name): private-endpoint"
        ),
        "{err}"
    );
}

#[test]
fn scan_lists_content_it_could_not_read_and_exits_1() {
    let dir = scratch("skipped");
    std::fs::write(dir.join("good.log"), "nothing private\n").unwrap();
    std::fs::write(
        dir.join("broken.gz"),
        b"\x1f\x8b\x08\0garbage that is not deflate",
    )
    .unwrap();
    let o = run(exhibit().arg("scan").arg(&dir));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    let shown = dir.join("broken.gz").display().to_string();
    assert!(
        text.contains(&format!("{shown}: could not be read as Gzip")),
        "{text}"
    );
    assert!(text.contains("skipped, not scanned"), "{text}");
    assert!(!text.contains("no private values found"), "{text}");
    assert_eq!(
        stderr(&o),
        format!("error: 1 part not scanned in `{}`\n", dir.display())
    );
    let o = run(exhibit().arg("scan").arg("--json").arg(&dir));
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["clean"], false);
    assert_eq!(v["skipped"].as_array().unwrap().len(), 1, "{v}");
    // A zstd frame asking for a 3 TiB window is skipped, never allocated.
    std::fs::write(dir.join("bomb.zst"), b"\x28\xb5\x2f\xfd\x00\xff\0\0\0\0").unwrap();
    let o = run(exhibit().arg("scan").arg("--json").arg(&dir));
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(
        v["skipped"].to_string().contains(
            "bomb.zst: could not be read as Zstd: its zstd frame asks for a window over 128 MiB"
        ),
        "{v}"
    );
    std::fs::remove_file(dir.join("bomb.zst")).unwrap();
    // Two zstd frames: the decoder reads one, so the file is not clean.
    let frame = || {
        ruzstd::encoding::compress_to_vec(
            &b"fine\n"[..],
            ruzstd::encoding::CompressionLevel::Fastest,
        )
    };
    std::fs::write(dir.join("two.zst"), [frame(), frame()].concat()).unwrap();
    let o = run(exhibit().arg("scan").arg(&dir));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("two.zst: a zstd frame after the first was not read"),
        "{}",
        stdout(&o)
    );
    std::fs::remove_file(dir.join("two.zst")).unwrap();
    // A binary scanned for its printable runs is found, not skipped.
    std::fs::remove_file(dir.join("broken.gz")).unwrap();
    std::fs::write(dir.join("blob.bin"), b"\0\x01host 10.20.30.40\0").unwrap();
    let o = run(exhibit().arg("scan").arg(&dir));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("blob.bin:1:8: private-endpoint"),
        "{}",
        stdout(&o)
    );
    assert!(!stdout(&o).contains(VALUE));
}

#[test]
fn values_behind_markdown_json_and_html_escapes_are_redacted_in_every_copy() {
    let dir = fixture("minimal");
    let notes = dir.join("notes.md");
    std::fs::write(
        &notes,
        format!(
            "{}\nThe runner sat at 192\\.168\\.1\\.10 and 10&#46;20.30.40.\n",
            read(&notes)
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("artifacts/peers.json"),
        "{\"peer\": \"10\\u002e20.30.40\", \"ok\": true}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("artifacts/report.html"),
        "<p>peer 10&#46;20&period;30.40 and 192.168.<em>1</em>.10</p>\n",
    )
    .unwrap();
    seal(&dir);
    let site = built(&dir);
    assert_never_published(&site, VALUE);
    assert_never_published(&site, "192.168.1.10");
    let md = read(&site.join("minimal/notes.md"));
    assert!(md.contains("The runner sat at [private-endpoint-"), "{md}");
}
