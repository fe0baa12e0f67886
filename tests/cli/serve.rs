//! `exhibit serve`: a real headless Chromium (driven over the DevTools
//! protocol) sees an edit appear without a manual reload, build errors show
//! over the page and clear, and the HTTP side serves only the site, only
//! to its own Host, with capped reload streams and a redacted banner.

use super::browser::Browser;
use super::*;
use serde_json::json;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A running `exhibit serve`, stopped on drop.
struct Server {
    child: Child,
    base: String,
    preview: PathBuf,
    /// What the server prints after starting, line by line.
    output: std::sync::mpsc::Receiver<String>,
}

impl Server {
    fn start(dir: &Path) -> Server {
        Server::start_with(dir, &[])
    }

    /// [`Server::start`] with more arguments to `exhibit serve`.
    fn start_with(dir: &Path, args: &[&std::ffi::OsStr]) -> Server {
        let port = free_port();
        let mut child = exhibit()
            .arg("serve")
            .arg(dir)
            .args(args)
            .arg("--port")
            .arg(port.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("exhibit serve starts");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let (mut base, mut preview) = (None, None);
        while base.is_none() || preview.is_none() {
            let line = lines.next().expect("serve prints its address").unwrap();
            if let Some(url) = line
                .split(" at ")
                .nth(1)
                .filter(|_| line.starts_with("serving"))
            {
                base = Some(url.trim_end_matches('/').to_string());
            }
            if let Some(p) = line.strip_prefix("preview files in ") {
                preview = Some(PathBuf::from(p));
            }
        }
        // Keep draining stdout so the server never blocks on a full pipe.
        let (tx, output) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Server {
            child,
            base: base.unwrap(),
            preview: preview.unwrap(),
            output,
        }
    }

    /// The next printed line that contains `text`.
    fn wait_line(&self, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.output.recv_timeout(left) {
                Ok(line) if line.contains(text) => return line,
                Ok(_) => {}
                Err(_) => panic!("serve never printed `{text}`"),
            }
        }
    }

    fn addr(&self) -> String {
        self.base.trim_start_matches("http://").to_string()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.preview);
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One raw HTTP/1.1 request (so paths go out exactly as written); returns
/// the status code, the headers (lower-case names) and the body.
fn http(addr: &str, request: &str) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    // Read the head, then the body by Content-Length (some servers keep
    // the connection open) or to the end.
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    let end = loop {
        if let Some(e) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break e;
        }
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "connection closed before the headers ended");
        raw.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let mut lines = head.lines();
    let status = lines.next().unwrap().split(' ').nth(1).unwrap();
    let code: u16 = status.parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = raw[end + 4..].to_vec();
    let head_only = request.starts_with("HEAD ") || code == 304 || code == 204;
    match header(&headers, "content-length").and_then(|l| l.parse::<usize>().ok()) {
        _ if head_only => body.clear(),
        Some(len) => {
            while body.len() < len {
                let n = s.read(&mut buf).unwrap();
                assert!(n > 0, "connection closed inside the body");
                body.extend_from_slice(&buf[..n]);
            }
        }
        None => {
            s.read_to_end(&mut body).unwrap();
        }
    }
    (code, headers, body)
}

pub(super) fn get(addr: &str, path: &str) -> (u16, Vec<(String, String)>, Vec<u8>) {
    http(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
    )
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn served_campaign() -> PathBuf {
    let dir = fixture("minimal");
    seal(&dir);
    dir
}

const BODY_HAS: &str = "document.body.innerText.includes";

#[test]
fn browser_sees_an_edit_without_a_manual_reload() {
    let dir = served_campaign();
    let server = Server::start(&dir);
    let mut b = Browser::start();
    b.navigate(&format!("{}/minimal/", server.base));
    assert_eq!(b.eval(&format!("{BODY_HAS}('112.07')")), json!(true));
    assert_eq!(
        b.eval("document.getElementById('exhibit-unverified') === null"),
        json!(true)
    );
    // Mark the loaded document: a reload replaces it, nothing else does.
    b.eval("window.__before_edit = true");
    let errors = b.errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");

    let cells = dir.join("data/cells.json");
    std::fs::write(&cells, read(&cells).replace("112.07", "131.55")).unwrap();
    b.wait_for(
        &format!("{BODY_HAS}('131.55')"),
        "the edited figure appears",
    );
    assert_eq!(b.eval("window.__before_edit === undefined"), json!(true));
    assert_eq!(b.eval(&format!("{BODY_HAS}('112.07')")), json!(false));
    // The edit is unsealed: the page says so and how to fix it.
    b.wait_for(
        "!!document.getElementById('exhibit-unverified') && document.getElementById('exhibit-unverified').innerText.includes('exhibit seal --update')",
        "the unverified banner",
    );
    assert!(read(&server.preview.join("minimal/index.html")).contains("131.55"));
    assert!(
        !read(&server.preview.join("minimal/index.html")).contains("__exhibit"),
        "the reload script is never written into the site"
    );
    let errors = b.errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    // ... while `exhibit build` still refuses the same folder.
    let o = build(&dir, &dir.parent().unwrap().join("site"));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("cells.json"));
}

#[test]
fn a_bad_edit_shows_over_the_last_good_build_and_clears() {
    let dir = served_campaign();
    let server = Server::start(&dir);
    let mut b = Browser::start();
    b.navigate(&format!("{}/minimal/", server.base));
    let cells = dir.join("data/cells.json");
    let good = read(&cells);
    std::fs::write(&cells, "{\n  \"cells\": [,]\n}\n").unwrap();
    b.wait_for(
        "!!document.getElementById('exhibit-error')",
        "the error overlay",
    );
    let overlay = b.eval("document.getElementById('exhibit-error').innerText");
    let overlay = overlay.as_str().unwrap();
    assert!(
        overlay.contains("cells.json:2:"),
        "names file and position: {overlay}"
    );
    // The last good build is still what is served under the overlay.
    assert_eq!(b.eval(&format!("{BODY_HAS}('112.07')")), json!(true));
    std::fs::write(&cells, good.replace("112.07", "118.40")).unwrap();
    b.wait_for(
        &format!("!document.getElementById('exhibit-error') && {BODY_HAS}('118.40')"),
        "the fixed build replaces the overlay",
    );
    // The server survived all of it.
    let (code, _, _) = get(&server.addr(), "/");
    assert_eq!(code, 200);
}

#[test]
fn http_serves_only_the_site() {
    let dir = served_campaign();
    let server = Server::start(&dir);
    let addr = server.addr();
    let (code, h, body) = get(&addr, "/minimal/");
    assert_eq!(code, 200);
    assert_eq!(header(&h, "content-type"), Some("text/html; charset=utf-8"));
    assert!(String::from_utf8_lossy(&body).contains("/__exhibit/live.js"));
    for (path, kind) in [
        ("/minimal/data/cells.json", "application/json"),
        ("/minimal/artifacts/run.log", "text/plain; charset=utf-8"),
        ("/minimal/SHA256SUMS", "text/plain; charset=utf-8"),
    ] {
        let (code, h, _) = get(&addr, path);
        assert_eq!(
            (code, header(&h, "content-type")),
            (200, Some(kind)),
            "{path}"
        );
    }
    let css = std::fs::read_dir(server.preview.join("assets"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name();
    let (_, h, _) = get(&addr, &format!("/assets/{}", css.to_string_lossy()));
    assert_eq!(header(&h, "content-type"), Some("text/css; charset=utf-8"));

    // Traversal in every spelling, and a symlink planted in the preview.
    std::os::unix::fs::symlink("/etc", server.preview.join("minimal/etc")).unwrap();
    for path in [
        "/../../../../etc/passwd",
        "/minimal/../../../../etc/passwd",
        "/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
        "/minimal/%2E%2E/%2E%2E/etc/passwd",
        "/..%2f..%2f..%2fetc%2fpasswd",
        "/minimal%2fdata%2fcells.json",
        "/minimal/etc/passwd",
        "/etc/passwd",
        "//etc/passwd",
        "/minimal/artifacts/",
        "/.exhibit-site",
    ] {
        let (code, h, body) = get(&addr, path);
        assert_eq!(code, 404, "{path}");
        assert!(!String::from_utf8_lossy(&body).contains("root:"), "{path}");
        assert_eq!(header(&h, "content-type"), Some("text/html; charset=utf-8"));
        assert!(
            String::from_utf8_lossy(&body).contains("Not found"),
            "{path}"
        );
    }
    let (code, h, _) = get(&addr, "/minimal");
    assert_eq!((code, header(&h, "location")), (301, Some("/minimal/")));

    // HEAD: the headers of a GET, no body.
    let (code, h, body) = http(
        &addr,
        &format!(
            "HEAD /minimal/data/cells.json HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
        ),
    );
    assert_eq!(code, 200);
    assert!(body.is_empty());
    let len = read(&server.preview.join("minimal/data/cells.json")).len();
    assert_eq!(header(&h, "content-length"), Some(len.to_string().as_str()));
    // Conditional GET with the ETag given.
    let etag = header(&h, "etag").expect("an ETag").to_string();
    let (code, _, body) = http(
        &addr,
        &format!("GET /minimal/data/cells.json HTTP/1.1\r\nHost: {addr}\r\nIf-None-Match: {etag}\r\nConnection: close\r\n\r\n"),
    );
    assert_eq!(code, 304);
    assert!(body.is_empty());
    let (code, _, _) = http(
        &addr,
        &format!("GET /minimal/data/cells.json HTTP/1.1\r\nHost: {addr}\r\nIf-None-Match: \"other\"\r\nConnection: close\r\n\r\n"),
    );
    assert_eq!(code, 200);
    let (code, h, _) = http(
        &addr,
        &format!("POST /minimal/ HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
    );
    assert_eq!((code, header(&h, "allow")), (405, Some("GET, HEAD")));
}

#[test]
fn a_busy_port_moves_to_the_next_and_other_addresses_warn() {
    let dir = served_campaign();
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port();
    let mut child = exhibit()
        .arg("serve")
        .arg(&dir)
        .arg("--port")
        .arg(port.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = lines
        .find(|l| l.as_ref().unwrap().starts_with("serving"))
        .unwrap()
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(line.contains("http://127.0.0.1:"), "{line}");
    assert!(
        !line.contains(&format!(":{port}/")),
        "took the busy port: {line}"
    );

    let mut child = exhibit()
        .arg("serve")
        .arg(&dir)
        .arg("--bind")
        .arg("0.0.0.0")
        .arg("--port")
        .arg(free_port().to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap()).lines();
    let warning = err.next().unwrap().unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        warning.starts_with("warning:") && warning.contains("unpublished"),
        "{warning}"
    );
}

#[test]
fn an_edit_to_one_page_renders_only_that_page_and_matches_a_fresh_build() {
    let dir = served_campaign();
    let server = Server::start(&dir);
    let notes = dir.join("notes.md");
    add_a_sentence(&server, &notes);
    assert!(read(&server.preview.join("minimal/notes.html")).contains("added in preview"));
    // A digest covers every file: the preview, which would change it on
    // every page at each save, shows none.
    assert!(read(&server.preview.join("minimal/index.html")).contains(NO_DIGEST));
    // Sealed, the preview is what `exhibit build` writes, but for the
    // publication digest, which the preview does not compute.
    sealed_again_as_built(&server, &dir, |_| true);
}

#[test]
fn a_save_by_rename_and_a_slow_writer_are_each_built_from_what_was_saved() {
    let dir = served_campaign();
    let server = Server::start(&dir);
    let notes = dir.join("notes.md");
    let built = |what: &str| {
        // A late event of the save may set off one more build.
        loop {
            server.wait_line("rendered, the others reused");
            if read(&server.preview.join("minimal/notes.html")).contains(what) {
                break;
            }
        }
    };
    // An editor's atomic save: a temporary file written, closed, then
    // renamed over the page.
    let tmp = dir.join(".notes.md.tmp");
    std::fs::write(&tmp, format!("{}\nSaved by rename.\n", read(&notes))).unwrap();
    std::fs::rename(&tmp, &notes).unwrap();
    built("Saved by rename.");
    // A writer that keeps the file open between its writes: the preview
    // waits for it to go quiet, then builds the whole of it.
    let text = format!("{}\nWritten in pieces, the last one here.\n", read(&notes));
    let mut f = std::fs::File::create(&notes).unwrap();
    for piece in text.as_bytes().chunks(text.len() / 4 + 1) {
        f.write_all(piece).unwrap();
        f.flush().unwrap();
        std::thread::sleep(Duration::from_millis(6));
    }
    built("the last one here.");
    drop(f);
}

/// Add a sentence to `page` and wait for the rebuild, which renders that
/// page alone.
fn add_a_sentence(server: &Server, page: &Path) {
    std::fs::write(
        page,
        format!("{}\nA sentence added in preview.\n", read(page)),
    )
    .unwrap();
    let line = server.wait_line("rendered, the others reused");
    assert!(line.contains("(1 rendered"), "{line}");
}

/// Names of the files a preview's differ from a build's in: they show the
/// digest, or list the hashes of files that do.
const DIFFERING: &[&str] = &[".html", "audit.json", ".xml", "SHA256SUMS", "manifest."];

/// What the preview shows in the digest's place.
const NO_DIGEST: &str = "not computed in the preview (exhibit build computes it)";

/// A site's files as the preview writes them: each publication digest
/// (`sha256:` and 64 hex digits after `digest`) read as the preview's
/// text, and, as the files showing it differ, their lines left out of the
/// listings that hash them ([`DIFFERING`]).
fn as_previewed(files: Vec<(String, Vec<u8>)>) -> Vec<(String, String)> {
    let digest = regex::Regex::new(r"sha256:[0-9a-f]{64}").unwrap();
    let differs = |s: &str| DIFFERING.iter().any(|x| s.contains(x));
    files
        .into_iter()
        .map(|(path, bytes)| {
            let mut text = String::from_utf8_lossy(&bytes).into_owned();
            if differs(&path) {
                text = text.replace(NO_DIGEST, "DIGEST");
                text = digest.replace_all(&text, "DIGEST").into_owned();
            }
            if path.ends_with("SHA256SUMS") || path.contains("manifest.") {
                let kept: Vec<&str> = text.lines().filter(|l| !differs(l)).collect();
                text = kept.join("\n");
            }
            (path, text)
        })
        .collect()
}

/// Seal `dir` again, then wait until the preview's files that `pick`
/// names are, as previewed, those of a fresh build of `dir`.
fn sealed_again_as_built(server: &Server, dir: &Path, pick: fn(&str) -> bool) {
    let o = run(exhibit().arg("seal").arg(dir).arg("--update"));
    assert!(o.status.success(), "{}", stderr(&o));
    let picked = |files: Vec<(String, Vec<u8>)>| -> Vec<(String, String)> {
        let files = as_previewed(files).into_iter();
        files.filter(|(p, _)| pick(p)).collect()
    };
    let want = picked(fresh_build(dir, "fresh"));
    // Compare after each rebuild: a late event of the edit may set off one
    // more before the reseal's.
    loop {
        server.wait_line("rendered, the others reused");
        if picked(site_files(&server.preview)) == want {
            break;
        }
    }
}

/// A site's files without exhibit's marker (the preview has its own).
fn site_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    tree(dir)
        .into_iter()
        .filter(|(p, _)| p != ".exhibit-site")
        .collect()
}

/// Wait until `done` holds, failing with `what` once `limit` has passed
/// since the waiter was made (one limit for all its waits).
fn waiter(limit: Duration) -> impl Fn(&str, &dyn Fn() -> bool) {
    let deadline = Instant::now() + limit;
    move |what, done| {
        while !done() {
            assert!(Instant::now() < deadline, "{what}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// What `exhibit build` writes for `dir` now, built next to it as `name`.
fn fresh_build(dir: &Path, name: &str) -> Vec<(String, Vec<u8>)> {
    let fresh = dir.parent().unwrap().join(name);
    let o = build(dir, &fresh);
    assert!(o.status.success(), "{}", stderr(&o));
    site_files(&fresh)
}

#[test]
fn a_file_added_then_removed_comes_and_goes_in_the_preview() {
    let dir = served_campaign();
    let server = Server::start(&dir);
    let extra = dir.join("artifacts/extra.log");
    let published = server.preview.join("minimal/artifacts/extra.log");
    let wait = waiter(Duration::from_secs(30));
    std::fs::write(&extra, "one more run log\n").unwrap();
    wait("the new file never reached the preview", &|| {
        published.is_file()
    });
    // Only changes are written to the served folder: a name that turns
    // from file to folder, and back to nothing, must follow, and the rest
    // must stay whole.
    std::fs::remove_file(&extra).unwrap();
    std::fs::create_dir(&extra).unwrap();
    std::fs::write(extra.join("inner.log"), "a log in a folder\n").unwrap();
    wait("a file turned folder never reached the preview", &|| {
        published.join("inner.log").is_file()
    });
    std::fs::remove_dir_all(&extra).unwrap();
    wait("the removed folder stayed in the preview", &|| {
        !published.exists()
    });
    let want = as_previewed(fresh_build(&dir, "fresh-after-remove"));
    wait("the preview differs from a fresh build", &|| {
        as_previewed(site_files(&server.preview)) == want
    });
}

/// GET `path` until its body satisfies `done` (30 s at most); the body.
fn wait_page(addr: &str, path: &str, what: &str, done: &dyn Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, _, body) = get(addr, path);
        let body = String::from_utf8_lossy(&body).into_owned();
        if done(&body) {
            return body;
        }
        assert!(Instant::now() < deadline, "{what}:\n{body}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_preview_answers_only_requests_for_its_own_address() {
    let dir = served_campaign();
    let server = Server::start(&dir);
    let addr = server.addr();
    let port = addr.rsplit(':').next().unwrap().to_string();
    let ask = |host: &str| {
        http(
            &addr,
            &format!("GET /minimal/ HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
        )
    };
    // A page of evil.example whose name was rebound to 127.0.0.1 sends
    // its own name: refused, and nothing of the site comes back.
    for host in [
        format!("evil.example:{port}"),
        "evil.example".to_string(),
        format!("127.0.0.1:{}", port.parse::<u16>().unwrap() + 1),
        format!("127.0.0.1.evil.example:{port}"),
    ] {
        let (code, _, body) = ask(&host);
        assert_eq!(code, 421, "{host}");
        let body = String::from_utf8_lossy(&body);
        assert!(
            !body.contains("minimal") && !body.contains("<"),
            "{host}: {body}"
        );
    }
    let (code, _, _) = http(&addr, "GET /minimal/ HTTP/1.0\r\n\r\n");
    assert_eq!(code, 421, "no Host at all");
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("LocalHost:{port}"),
        format!("[::1]:{port}"),
    ] {
        let (code, _, body) = ask(&host);
        assert_eq!(code, 200, "{host}");
        assert!(String::from_utf8_lossy(&body).contains("Decode by context"));
    }
}

fn threads(pid: u32) -> usize {
    read(Path::new(&format!("/proc/{pid}/status")))
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("Threads in /proc/PID/status")
}

/// The preview's threads, whatever its clients do: the main thread
/// (rebuilds), the watcher and the thread settling its events, the
/// request gatherer, four workers and the reload broadcaster, plus the
/// build's thread pool (one per core). README's preview paragraph gives the same figure.
fn fixed_threads() -> usize {
    9 + std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Open `n` connections to `addr` that send nothing (yet).
fn connections(addr: &str, n: usize) -> Vec<TcpStream> {
    (0..n)
        .map(|_| {
            let s = TcpStream::connect(addr).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            s
        })
        .collect()
}

/// Has the server closed this connection (end of stream or reset)?
fn closed_by_server(mut s: &TcpStream) -> bool {
    let mut buf = [0u8; 256];
    matches!(s.read(&mut buf), Ok(0) | Err(_))
}

/// A preview of `dir` that has answered once, and its thread count then.
fn settled(dir: &Path) -> (Server, usize) {
    let server = Server::start(dir);
    let (code, _, _) = get(&server.addr(), "/");
    assert_eq!(code, 200);
    let threads = threads(server.child.id());
    (server, threads)
}

#[test]
fn idle_and_trickling_connections_take_no_thread_and_are_dropped() {
    let dir = served_campaign();
    let (server, before) = settled(&dir);
    let addr = server.addr();
    let pid = server.child.id();
    assert!(before <= fixed_threads(), "{before} threads at the start");
    let idle = connections(&addr, 200);
    let mut trickling = connections(&addr, 50);
    let head = format!("GET / HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    let started = Instant::now();
    let mut most = 0;
    for (second, byte) in head.bytes().take(4).enumerate() {
        for s in &mut trickling {
            // A write may fail once the server has dropped the socket.
            let _ = s.write_all(&[byte]);
        }
        most = most.max(threads(pid));
        // A new client is answered at once all the same.
        let asked = Instant::now();
        let (code, _, body) = get(&addr, "/minimal/");
        assert_eq!(code, 200, "second {second}");
        assert!(String::from_utf8_lossy(&body).contains("Decode by context"));
        assert!(
            asked.elapsed() < Duration::from_secs(2),
            "a GET took {:?} beside 250 held connections",
            asked.elapsed()
        );
        std::thread::sleep(Duration::from_secs(1).saturating_sub(asked.elapsed()));
    }
    assert!(
        most <= before,
        "{most} threads with 250 held connections, {before} before"
    );
    // Past the head timeout (5 s from connecting) the server has closed
    // every one of them, the trickling ones too.
    std::thread::sleep(Duration::from_secs(6).saturating_sub(started.elapsed()));
    let open = idle
        .iter()
        .chain(&trickling)
        .filter(|s| !closed_by_server(s))
        .count();
    assert_eq!(open, 0, "connections the server still holds open");
    assert!(threads(pid) <= before);
}

#[test]
fn past_the_connection_cap_a_client_gets_503_at_once_and_service_resumes() {
    const CAP: usize = 512;
    let dir = served_campaign();
    let server = Server::start(&dir);
    let addr = server.addr();
    let pid = server.child.id();
    let held = connections(&addr, CAP);
    // Let the server take every one of them before the next knocks.
    std::thread::sleep(Duration::from_millis(500));
    let asked = Instant::now();
    let (code, h, _) = get(&addr, "/minimal/");
    assert_eq!((code, header(&h, "retry-after")), (503, Some("5")));
    assert!(asked.elapsed() < Duration::from_secs(2));
    assert!(threads(pid) <= fixed_threads());
    drop(held);
    let deadline = Instant::now() + Duration::from_secs(5);
    while get(&addr, "/minimal/").0 != 200 {
        assert!(
            Instant::now() < deadline,
            "the preview never answered again"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn reload_streams_are_capped_and_take_no_thread_of_their_own() {
    const CAP: usize = 32;
    let dir = served_campaign();
    let (server, before) = settled(&dir);
    let addr = server.addr();
    let pid = server.child.id();
    let mut open = Vec::new();
    let mut refused = 0;
    for _ in 0..CAP + 8 {
        let mut s = TcpStream::connect(&addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(
            s,
            "GET /__exhibit/events?since=1 HTTP/1.1\r\nHost: {addr}\r\n\r\n"
        )
        .unwrap();
        let mut r = BufReader::new(s);
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        if line.starts_with("HTTP/1.1 503") {
            refused += 1;
        } else {
            assert!(line.starts_with("HTTP/1.1 200"), "{line}");
            open.push(r);
        }
    }
    assert_eq!(refused, 8, "streams beyond the cap are refused");
    // The broadcaster holds every stream: not one thread more.
    let now = threads(pid);
    assert!(
        now <= before,
        "{now} threads with {CAP} streams, {before} before"
    );
    // The server still answers, and every stream sees the next build.
    let (code, _, _) = get(&addr, "/minimal/");
    assert_eq!(code, 200);
    let notes = dir.join("notes.md");
    std::fs::write(&notes, read(&notes) + "\nOne more line.\n").unwrap();
    for (i, r) in open.iter_mut().enumerate() {
        let mut seen = String::new();
        while !seen.contains("event: reload") {
            let mut line = String::new();
            assert!(r.read_line(&mut line).unwrap() > 0, "stream {i} closed");
            seen.push_str(&line);
        }
    }
    // A page that goes away frees its place for the next one.
    drop(open.pop());
    assert_eq!(status_line(&addr, "/__exhibit/events?since=1"), 200);
}

/// The status of a request whose answer may never end (a reload stream).
fn status_line(addr: &str, path: &str) -> u16 {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).unwrap();
    line.split(' ').nth(1).unwrap().parse().unwrap()
}

#[test]
fn the_banner_and_the_overlay_show_private_names_and_values_redacted() {
    let dir = fixture("minimal");
    let log = dir.join("artifacts/db01.internal-iostat.log");
    std::fs::write(&log, "iostat ok\n").unwrap();
    seal(&dir);
    let server = Server::start(&dir);
    let addr = server.addr();
    std::fs::write(&log, "iostat changed\n").unwrap();
    let page = wait_page(&addr, "/minimal/", "no banner", &|b| {
        b.contains("exhibit-unverified")
    });
    assert!(!page.contains("db01"), "{page}");
    assert!(
        page.contains("artifacts/[private-endpoint-1]-iostat.log: modified"),
        "{page}"
    );

    let index = dir.join("index.md");
    let good = read(&index);
    std::fs::write(
        &index,
        good.replace(
            "\"title\": \"Decode by context\",",
            "\"title\": \"Decode on 10.20.30.40\", oops",
        ),
    )
    .unwrap();
    let page = wait_page(&addr, "/minimal/", "no overlay", &|b| {
        b.contains("exhibit-error")
    });
    assert!(!page.contains("10.20.30.40"), "{page}");
    assert!(page.contains("Decode on [private-endpoint"), "{page}");
    assert!(page.contains("index.md:21:37"), "{page}");
}

#[test]
fn a_named_pipe_shows_in_the_overlay_and_rebuilding_goes_on_once_it_is_gone() {
    let dir = served_campaign();
    let server = Server::start(&dir);
    let addr = server.addr();
    let pipe = dir.join("artifacts/pipe.log");
    let o = run(std::process::Command::new("mkfifo").arg(&pipe));
    assert!(o.status.success());
    let page = wait_page(&addr, "/minimal/", "no overlay for the pipe", &|b| {
        b.contains("exhibit-error")
    });
    assert!(
        page.contains("artifacts/pipe.log") && page.contains("a named pipe"),
        "{page}"
    );
    std::fs::remove_file(&pipe).unwrap();
    wait_page(&addr, "/minimal/", "the overlay stayed", &|b| {
        !b.contains("exhibit-error")
    });
    let cells = dir.join("data/cells.json");
    std::fs::write(&cells, read(&cells).replace("112.07", "118.40")).unwrap();
    wait_page(&addr, "/minimal/", "the next edit never showed", &|b| {
        b.contains("118.40")
    });
}

/// A data file the preview parsed for keyed secrets and found none in
/// (`max_tokens` names a secret-like word) is not parsed again while it is
/// unchanged; once a save gives it a secret under a secret's key, that
/// value is learned and taken out of every published copy naming it.
#[test]
fn a_secret_saved_into_a_file_parsed_before_is_learned() {
    let dir = fixture("minimal");
    let settings = dir.join("data/settings.json");
    std::fs::write(&settings, "{\"max_tokens\": 512}\n").unwrap();
    let log = dir.join("artifacts/run.log");
    let secret = "Zq7vLm2Np9Rt4Wx8";
    std::fs::write(&log, format!("{}\nlogin as {secret}\n", read(&log))).unwrap();
    seal(&dir);
    let server = Server::start(&dir);
    let copy = server.preview.join("minimal/artifacts/run.log");
    assert!(read(&copy).contains(secret), "no key names it yet");
    std::fs::write(
        &settings,
        format!("{{\"max_tokens\": 512, \"api_key\": \"{secret}\"}}\n"),
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while read(&copy).contains(secret) {
        assert!(Instant::now() < deadline, "the secret stayed in the copy");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(read(&copy).contains("[credential-"), "{}", read(&copy));
}

/// The preview keeps each page's typed-figure check between saves: a page
/// nobody edited keeps its records only while the data it was checked
/// against is the same. A figure that matched nothing matches once a save
/// of the data file gives that value, and the edited page's new figure is
/// listed; the preview's audit.json records are a fresh build's.
#[test]
fn typed_figures_are_checked_again_where_a_save_changed_them() {
    let dir = fixture("minimal");
    let notes = dir.join("notes.md");
    std::fs::write(
        &notes,
        format!("{}\nThe cold run took 131.5 ms.\n", read(&notes)),
    )
    .unwrap();
    seal(&dir);
    let server = Server::start(&dir);
    let audit = server.preview.join("minimal/audit.json");
    let figure = |text: &str| -> serde_json::Value {
        let doc: serde_json::Value = serde_json::from_str(&read(&audit)).unwrap();
        let figures = doc["figures"].as_array().unwrap().clone();
        figures
            .into_iter()
            .find(|f| f["text"] == text)
            .unwrap_or_else(|| panic!("`{text}` not in audit.json"))
    };
    assert_eq!(figure("131.5")["matched"], serde_json::Value::Null);
    // The data now holds the value: the unedited page's figure matches.
    let cells = dir.join("data/cells.json");
    std::fs::write(&cells, read(&cells).replace("99.79", "131.5")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while figure("131.5")["matched"].is_null() {
        assert!(
            Instant::now() < deadline,
            "the figure never matched the new data"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // An edit to the page lists its new figure.
    std::fs::write(
        &notes,
        format!("{}\nThe warm run took 77.25 ms.\n", read(&notes)),
    )
    .unwrap();
    while !read(&audit).contains("\"77.25\"") {
        assert!(Instant::now() < deadline, "the new figure never appeared");
        std::thread::sleep(Duration::from_millis(50));
    }
    sealed_again_as_built(&server, &dir, |p| p.ends_with("audit.json"));
}

/// The header's typed figures are checked against the values every page
/// computes: the preview keeps that check while a save leaves those values
/// as they were (a page's prose edited), and checks it again when a save
/// changes them (a page's derived column), as a fresh build does.
#[test]
fn header_figures_follow_the_values_the_pages_compute() {
    let dir = fixture("minimal");
    let meta = dir.join("campaign.json");
    let quoted = r#""decision": "No change",
  "summary": "Decode rose by 33.0% at the small size.","#;
    std::fs::write(
        &meta,
        read(&meta).replace(r#""decision": "No change","#, quoted),
    )
    .unwrap();
    seal(&dir);
    let server = Server::start(&dir);
    let audit = server.preview.join("minimal/audit.json");
    let matched = || -> serde_json::Value {
        let doc: serde_json::Value = serde_json::from_str(&read(&audit)).unwrap();
        let figures = doc["figures"].as_array().unwrap().clone();
        let header = figures
            .into_iter()
            .find(|f| f["page"] == "campaign.json" && f["text"] == "33.0%");
        header.expect("the header's figure is listed")["matched"].clone()
    };
    assert!(matched().is_number(), "{}", read(&audit));
    // Prose only: the values are the same, and so is the check.
    add_a_sentence(&server, &dir.join("notes.md"));
    assert!(matched().is_number(), "{}", read(&audit));
    // Now no page computes +33.0% any more.
    let index = dir.join("index.md");
    let changed = read(&index)
        .replace(
            "/cells/0/before, /cells/0/after",
            "/cells/1/before, /cells/1/after",
        )
        .replace(
            r#""from": "before", "to": "after""#,
            r#""from": "after", "to": "before""#,
        );
    std::fs::write(&index, changed).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !matched().is_null() {
        assert!(Instant::now() < deadline, "{}", read(&audit));
        std::thread::sleep(Duration::from_millis(50));
    }
    sealed_again_as_built(&server, &dir, |p| p.ends_with("audit.json"));
}

/// The campaign's metadata is redacted on every save: a private value
/// saved into campaign.json is never shown, text without one is shown as
/// written, and the same private text saved again is redacted again (the
/// preview keeps only metadata the detector found nothing in).
#[test]
fn metadata_saved_in_the_preview_is_redacted_each_time() {
    let dir = fixture("minimal");
    seal(&dir);
    let server = Server::start(&dir);
    let index = server.preview.join("minimal/index.html");
    let meta = dir.join("campaign.json");
    let original = read(&meta);
    let scope = |text: &str| original.replace("Two cells, two arms", text);
    let shown = |want: &str| {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let html = read(&index);
            assert!(!html.contains("10.20.30.40"), "{html}");
            if html.contains(want) {
                return;
            }
            assert!(Instant::now() < deadline, "`{want}` never shown: {html}");
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    shown("Two cells, two arms");
    for round in 0..2 {
        std::fs::write(&meta, scope("Two cells on 10.20.30.40")).unwrap();
        shown("Two cells on [");
        std::fs::write(&meta, scope(&format!("Two cells, {} arms", round + 3))).unwrap();
        shown(&format!("Two cells, {} arms", round + 3));
    }
    std::fs::write(&meta, scope("Two cells, 3 arms")).unwrap();
    shown("Two cells, 3 arms");
    // The value in a page as well: numbered as a fresh build numbers it.
    let notes = dir.join("notes.md");
    std::fs::write(
        &notes,
        format!("{}\nThe peer 10.20.30.40 answered.\n", read(&notes)),
    )
    .unwrap();
    std::fs::write(&meta, scope("Two cells on 10.20.30.40")).unwrap();
    shown("Two cells on [");
    sealed_again_as_built(&server, &dir, |p| p.ends_with(".html"));
}

/// The preview numbers values as `exhibit build` does: a large log's after
/// the small files' (a build reads a large text file once, as it copies
/// it), although the preview scans it beforehand.
#[test]
fn the_preview_numbers_a_large_log_as_a_build_does() {
    let dir = fixture("minimal");
    let line = b"2026-10-01T10:00:00Z cell=4096 decode_tok_s=149.02 status=ok   \n";
    let mut log = line.repeat(40_000);
    log.extend_from_slice(b"peer 10.20.30.40 x\n");
    log.extend_from_slice(&line.repeat(40_000));
    std::fs::write(dir.join("artifacts/big.log"), &log).unwrap();
    std::fs::write(dir.join("artifacts/z-small.log"), "gateway 10.9.9.9 up\n").unwrap();
    seal(&dir);
    let server = Server::start(&dir);
    let built = fresh_build(&dir, "fresh");
    for name in ["minimal/artifacts/big.log", "minimal/artifacts/z-small.log"] {
        let want = &built.iter().find(|(p, _)| p == name).unwrap().1;
        let previewed = std::fs::read(server.preview.join(name)).unwrap();
        assert!(previewed == *want, "{name} differs from the build's");
    }
    assert_eq!(
        read(&server.preview.join("minimal/artifacts/z-small.log")),
        "gateway [private-endpoint-1] up\n"
    );
}

/// Two tables of the same bytes, one read as CSV and one as TSV, are two
/// reads: the preview parses each for keyed secrets, as a build does.
#[test]
fn the_same_bytes_as_csv_and_as_tsv_are_each_read_for_keyed_secrets() {
    let dir = fixture("minimal");
    let table = "key\tvalue\nHF_TOKEN\tabc123secretvalue99\n";
    std::fs::write(dir.join("data/x.csv"), table).unwrap();
    std::fs::write(dir.join("data/x.tsv"), table).unwrap();
    seal(&dir);
    let server = Server::start(&dir);
    let tsv = read(&server.preview.join("minimal/data/x.tsv"));
    assert_eq!(tsv, "key\tvalue\nHF_TOKEN\t[credential-1]\n");
    let built = fresh_build(&dir, "fresh");
    let want = &built
        .iter()
        .find(|(p, _)| p == "minimal/data/x.tsv")
        .unwrap()
        .1;
    assert_eq!(tsv.as_bytes(), &want[..]);
}

/// A save that numbers a new value before the data's own (an address at
/// the top of the first page) changes the data's published names: the
/// preview's typed-figure records name them as a fresh build does.
#[test]
fn figure_sources_follow_the_numbering_in_the_preview() {
    let dir = fixture("minimal");
    std::fs::write(
        dir.join("data/r.json"),
        "{\"10.1.2.3\": {\"tok\": 777.5}}\n",
    )
    .unwrap();
    let notes = dir.join("notes.md");
    std::fs::write(
        &notes,
        format!("{}\nIt decoded 777.5 tok/s.\n", read(&notes)),
    )
    .unwrap();
    seal(&dir);
    let server = Server::start(&dir);
    let audit = server.preview.join("minimal/audit.json");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !read(&audit).contains("r.json#/[private-endpoint-1]/tok") {
        assert!(Instant::now() < deadline, "{}", read(&audit));
        std::thread::sleep(Duration::from_millis(50));
    }
    let index = dir.join("index.md");
    std::fs::write(
        &index,
        format!("The peer 10.9.9.9 answered.\n\n{}", read(&index)),
    )
    .unwrap();
    while !read(&audit).contains("r.json#/[private-endpoint-2]/tok") {
        assert!(Instant::now() < deadline, "{}", read(&audit));
        std::thread::sleep(Duration::from_millis(50));
    }
    let o = run(exhibit().arg("seal").arg(&dir).arg("--update"));
    assert!(o.status.success(), "{}", stderr(&o));
    let fresh = fresh_build(&dir, "fresh");
    let want = &fresh
        .iter()
        .find(|(p, _)| p == "minimal/audit.json")
        .unwrap()
        .1;
    assert!(String::from_utf8_lossy(want).contains("r.json#/[private-endpoint-2]/tok"));
}

/// The site index's headline (the first result card's items) is read from
/// the page showing the card: kept with that page while another page is
/// edited, read again when the data under the card changes.
#[test]
fn the_headline_stays_through_an_edit_and_follows_the_data() {
    let dir = scratch("serve-headline").join("glm");
    copy_tree(
        &repo().join("sample-artifacts/glm53-flash-linux-vs-wsl"),
        &dir,
    );
    let server = Server::start(&dir);
    let index = server.preview.join("index.html");
    let headline = || {
        let html = read(&index);
        let after = html.split("<dl class=\"card-items headline\">").nth(1)?;
        after.split("</dl>").next().map(str::to_string)
    };
    let before = headline().expect("the site index shows the headline");
    assert!(
        before.contains("Linux 149.02 versus WSL 112.07"),
        "{before}"
    );
    // Another page edited: the card's page comes from the last build.
    add_a_sentence(&server, &dir.join("quality.md"));
    assert_eq!(headline().as_deref(), Some(before.as_str()));
    // The figure under the card: its page is rendered again.
    let data = dir.join("data/measurements.json");
    std::fs::write(&data, read(&data).replacen("149.02", "149.55", 1)).unwrap();
    loop {
        server.wait_line("rendered, the others reused");
        let now = headline().expect("the site index shows the headline");
        if now.contains("Linux 149.55 versus WSL 112.07") {
            break;
        }
        assert_eq!(now, before, "a headline neither before nor after");
    }
}

/// The preview keeps the parsed theme from one save to the next, known by
/// the bytes of its files: an edit to the theme's stylesheet is what the
/// next build links and serves.
#[test]
fn an_edit_to_the_theme_is_served_at_the_next_build() {
    let dir = served_campaign();
    let theme = dir.with_file_name("theme");
    std::fs::create_dir_all(theme.join("assets")).unwrap();
    let css = theme.join("assets/style.css");
    std::fs::write(&css, "body { color: #111 } /* theme mark 1 */\n").unwrap();
    let server = Server::start_with(&dir, &["--theme".as_ref(), theme.as_os_str()]);
    let addr = server.addr();
    let stylesheet = |page: &str| -> String {
        let Some(at) = page.find("assets/style.") else {
            return String::new();
        };
        let href = &page[at..at + page[at..].find('"').unwrap()];
        String::from_utf8_lossy(&get(&addr, &format!("/{href}")).2).into_owned()
    };
    let page = wait_page(&addr, "/minimal/", "the page", &|b| {
        b.contains("assets/style.")
    });
    assert!(stylesheet(&page).contains("theme mark 1"), "{page}");
    std::fs::write(&css, "body { color: #222 } /* theme mark 2 */\n").unwrap();
    wait_page(
        &addr,
        "/minimal/",
        "the edited stylesheet is linked",
        &|b| stylesheet(b).contains("theme mark 2"),
    );
    // An edit to the campaign keeps the theme as it now is.
    let cells = dir.join("data/cells.json");
    std::fs::write(&cells, read(&cells).replace("112.07", "131.55")).unwrap();
    let page = wait_page(&addr, "/minimal/", "the edited figure", &|b| {
        b.contains("131.55")
    });
    assert!(stylesheet(&page).contains("theme mark 2"), "{page}");
}

/// The preview keeps the pieces of large pages the gate passed, and reads
/// again only those an edit changed: script a theme plants near the end
/// of a long page (over 512 KiB) is refused, where it is, and the fix
/// clears it.
#[test]
fn script_planted_in_a_long_page_is_refused_by_the_preview() {
    let dir = fixture("minimal");
    let notes = dir.join("notes.md");
    let mut long = read(&notes);
    for n in 0..9000 {
        long.push_str(&format!(
            "\nParagraph {n} of the long notes, measured on run {n}.\n"
        ));
    }
    std::fs::write(&notes, long).unwrap();
    seal(&dir);
    let theme = dir.with_file_name("theme");
    std::fs::create_dir_all(theme.join("templates")).unwrap();
    let base = read(&repo().join("templates/base.html"));
    std::fs::write(theme.join("templates/base.html"), &base).unwrap();
    let server = Server::start_with(&dir, &["--theme".as_ref(), theme.as_os_str()]);
    let addr = server.addr();
    let page = wait_page(&addr, "/minimal/notes.html", "the long page", &|b| {
        b.contains("Paragraph 8999")
    });
    assert!(page.len() > 512 << 10, "{} bytes", page.len());
    let planted = base.replacen("</body>", "<img src=x onerror=\"alert(1)\">\n</body>", 1);
    assert_ne!(planted, base);
    std::fs::write(theme.join("templates/base.html"), planted).unwrap();
    let refused = wait_page(&addr, "/minimal/notes.html", "the gate's refusal", &|b| {
        b.contains("exhibit-error")
    });
    assert!(
        refused.contains("markup that can run script")
            && refused.contains("minimal/notes.html:")
            && refused.contains("an event-handler attribute (on...)"),
        "{refused}"
    );
    // The site under the overlay is the last good one.
    assert!(
        !std::fs::read_to_string(server.preview.join("minimal/notes.html"))
            .unwrap()
            .contains("onerror")
    );
    std::fs::write(theme.join("templates/base.html"), &base).unwrap();
    wait_page(&addr, "/minimal/notes.html", "the fix clears it", &|b| {
        !b.contains("exhibit-error") && b.contains("Paragraph 8999")
    });
}

/// A save's pages are announced (the reload event) before the files that
/// list them are written: SHA256SUMS, audit.json and the manifest page,
/// asked for at once, are held until they list the announced page.
#[test]
fn files_written_last_are_served_only_once_they_list_the_announced_page() {
    use sha2::Digest;
    let dir = super::scale::generated("serve-written-last");
    let server = Server::start(&dir);
    let addr = server.addr();
    let mut events = TcpStream::connect(&addr).unwrap();
    events
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        events,
        "GET /__exhibit/events?since=1 HTTP/1.1\r\nHost: {addr}\r\n\r\n"
    )
    .unwrap();
    let mut events = BufReader::new(events);
    let page = dir.join("page-0007.md");
    let hex = |bytes: &[u8]| -> String {
        sha2::Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    for n in 0..3 {
        let added = format!("Sentence {n} added in preview.");
        std::fs::write(&page, format!("{}\n{added}\n", read(&page))).unwrap();
        let source = hex(&std::fs::read(&page).unwrap());
        loop {
            let mut line = String::new();
            events.read_line(&mut line).expect("a reload event");
            if !line.starts_with("event: reload") {
                continue;
            }
            // The page as announced, then what lists it, asked for at once.
            let html = std::fs::read(server.preview.join("gen/page-0007.html")).unwrap();
            if !String::from_utf8_lossy(&html).contains(&added) {
                continue; // a late event of the last save
            }
            let sums = String::from_utf8(get(&addr, "/gen/SHA256SUMS").2).unwrap();
            let audit = String::from_utf8(get(&addr, "/gen/audit.json").2).unwrap();
            let manifest = String::from_utf8(get(&addr, "/gen//manifest.html").2).unwrap();
            let listed = format!("{}  page-0007.html\n", hex(&html));
            assert!(
                sums.contains(&listed),
                "SHA256SUMS lists the page as served:\n{listed}"
            );
            assert!(
                audit.contains(&source),
                "audit.json has the saved page's hash"
            );
            assert!(
                manifest.contains(&source),
                "the manifest page has the saved page's hash"
            );
            break;
        }
    }
}

/// A save that fails after its pages were announced (a theme's manifest
/// page, written last, plants script) puts them back: the last good site
/// is served under the overlay, and the fix brings the save's pages.
#[test]
fn a_save_failing_after_its_pages_are_shown_puts_the_last_good_site_back() {
    let dir = served_campaign();
    let theme = dir.with_file_name("theme");
    std::fs::create_dir_all(theme.join("templates")).unwrap();
    let manifest = read(&repo().join("templates/manifest.html"));
    std::fs::write(theme.join("templates/manifest.html"), &manifest).unwrap();
    let server = Server::start_with(&dir, &["--theme".as_ref(), theme.as_os_str()]);
    let addr = server.addr();
    let notes = dir.join("notes.md");
    let good = read(&notes);
    let before = tree(&server.preview);
    let planted = manifest.replacen(
        "{% endblock main %}",
        "<script>alert(1)</script>\n{% endblock main %}",
        1,
    );
    assert_ne!(planted, manifest);
    std::fs::write(theme.join("templates/manifest.html"), planted).unwrap();
    std::fs::write(&notes, format!("{good}\nA sentence added in preview.\n")).unwrap();
    // However the watcher groups the two saves, every build from now on
    // fails after its pages, and any it showed are put back.
    let refused = wait_page(&addr, "/minimal/notes.html", "the gate's refusal", &|b| {
        b.contains("exhibit-error") && b.contains("minimal/manifest.html")
    });
    assert!(refused.contains("markup that can run script"), "{refused}");
    std::thread::sleep(Duration::from_millis(500));
    let served = wait_page(&addr, "/minimal/notes.html", "the page put back", &|b| {
        b.contains("exhibit-error")
    });
    assert!(!served.contains("A sentence added in preview."), "{served}");
    assert_eq!(
        tree(&server.preview),
        before,
        "the preview folder is the last good site"
    );
    std::fs::write(theme.join("templates/manifest.html"), &manifest).unwrap();
    wait_page(
        &addr,
        "/minimal/notes.html",
        "the fix brings the save's page",
        &|b| !b.contains("exhibit-error") && b.contains("A sentence added in preview."),
    );
}

/// A save that drops a file (a binary renamed) is moved in at once, with
/// the binary copy told apart from text as in any build: it is not refused
/// as output that was never scanned.
#[test]
fn a_binary_renamed_in_the_preview_is_published_under_its_new_name() {
    let dir = fixture("minimal");
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.extend((0..4096u32).map(|i| (i * 7 % 251) as u8));
    std::fs::write(dir.join("artifacts/plot.png"), &png).unwrap();
    seal(&dir);
    let server = Server::start(&dir);
    let addr = server.addr();
    let (old, new) = (
        "minimal/artifacts/plot.png",
        "minimal/artifacts/renamed.png",
    );
    assert_eq!(std::fs::read(server.preview.join(old)).unwrap(), png);
    std::fs::rename(
        dir.join("artifacts/plot.png"),
        dir.join("artifacts/renamed.png"),
    )
    .unwrap();
    let page = wait_page(
        &addr,
        "/minimal/manifest.html",
        "the renamed file listed",
        &|b| b.contains("renamed.png") || b.contains("exhibit-error"),
    );
    assert!(!page.contains("exhibit-error"), "{page}");
    assert_eq!(std::fs::read(server.preview.join(new)).unwrap(), png);
    assert!(!server.preview.join(old).exists());
}

/// A campaign taken out of a root of two goes from the preview whole, its
/// manifest's copy with it: the preview is then what a fresh build of the
/// root writes.
#[test]
fn a_campaign_taken_out_of_a_root_goes_from_the_preview_whole() {
    let one = fixture("minimal");
    let root = one.parent().unwrap().join("root");
    let (a, b) = (root.join("a"), root.join("b"));
    copy_tree(&one, &a);
    copy_tree(&one, &b);
    let meta = b.join("campaign.json");
    let text = read(&meta);
    assert!(text.contains(r#""id": "minimal""#));
    std::fs::write(
        &meta,
        text.replacen(r#""id": "minimal""#, r#""id": "second""#, 1),
    )
    .unwrap();
    seal(&a);
    seal(&b);
    let server = Server::start(&root);
    let second = server.preview.join("second");
    assert!(second.join("manifest.json").is_file());
    std::fs::remove_dir_all(&b).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while second.exists() {
        assert!(
            Instant::now() < deadline,
            "left of the removed campaign: {:?}",
            tree(&second)
                .into_iter()
                .map(|(p, _)| p)
                .collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let want = as_previewed(fresh_build(&root, "fresh-without-second"));
    let deadline = Instant::now() + Duration::from_secs(30);
    while as_previewed(site_files(&server.preview)) != want {
        assert!(
            Instant::now() < deadline,
            "the preview differs from a fresh build"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The preview reuses a campaign's walk while none of its folders changed
/// (and they changed long enough before the walk to tell): a file added
/// in a subfolder of a campaign left alone for a while, after an edit in
/// place, still reaches the preview, and goes when it is removed after
/// another such pause and edit.
#[test]
fn a_file_added_to_a_settled_campaign_comes_and_goes_in_the_preview() {
    let dir = served_campaign();
    let server = Server::start(&dir);
    // Older than the walk by more than the listing cache asks for.
    std::thread::sleep(Duration::from_millis(3500));
    add_a_sentence(&server, &dir.join("notes.md"));
    let extra = dir.join("artifacts/later.log");
    let published = server.preview.join("minimal/artifacts/later.log");
    let wait = waiter(Duration::from_secs(30));
    std::fs::write(&extra, "a run log added later\n").unwrap();
    wait("the new file never reached the preview", &|| {
        published.is_file()
    });
    // Left alone again, then saved in place: the walk is reused once
    // more, until the file goes.
    std::thread::sleep(Duration::from_millis(3500));
    let notes = dir.join("notes.md");
    std::fs::write(&notes, format!("{}\nSaved in place again.\n", read(&notes))).unwrap();
    let shown = server.preview.join("minimal/notes.html");
    wait("the second edit never reached the preview", &|| {
        read(&shown).contains("Saved in place again.")
    });
    std::fs::remove_file(&extra).unwrap();
    wait("the removed file stayed in the preview", &|| {
        !published.exists()
    });
    sealed_again_as_built(&server, &dir, |_| true);
}
