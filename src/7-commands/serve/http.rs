//! The preview's HTTP side: refuse any Host but the preview's own, map a
//! request to a file of the built site (and nothing else), answer with the right content type and cache validators,
//! inject the live-reload script and the preview banner into HTML, and keep
//! server-sent-event streams open for reloads.

use super::net::Request;
use super::{Shared, Status};
use std::fs::File;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The path the reload stream is served under; no site file can take it.
pub(super) const EVENTS: &str = "/__exhibit/events";
pub(super) const SCRIPT: &str = "/__exhibit/live.js";
const LIVE_JS: &str = include_str!("live.js");

/// What a request path names in the site.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Resolved {
    File(PathBuf),
    /// A folder asked for without its trailing slash.
    Redirect(String),
    NotFound,
}

/// Resolve the path part of a request URL under `site` (canonical). Only
/// regular files inside the site are ever returned: `..`, `.` and hidden
/// segments, encoded slashes or backslashes, NUL bytes, and symlinks that
/// lead out are all not found; so are folders without an index.html.
pub(super) fn resolve(site: &Path, url: &str) -> Resolved {
    let path = url.split(['?', '#']).next().unwrap_or("");
    let lower = path.to_ascii_lowercase();
    if !path.starts_with('/')
        || path.contains('\\')
        || lower.contains("%2f")
        || lower.contains("%5c")
        || lower.contains("%00")
    {
        return Resolved::NotFound;
    }
    let Ok(decoded) = percent_encoding::percent_decode_str(path).decode_utf8() else {
        return Resolved::NotFound;
    };
    let mut full = site.to_path_buf();
    for seg in decoded.split('/').filter(|s| !s.is_empty()) {
        if seg.starts_with('.') || seg.contains('\0') || seg.contains(':') {
            return Resolved::NotFound;
        }
        full.push(seg);
    }
    let Ok(real) = full.canonicalize() else {
        return Resolved::NotFound;
    };
    if !real.starts_with(site) {
        return Resolved::NotFound;
    }
    if real.is_dir() {
        if !path.ends_with('/') {
            return Resolved::Redirect(format!("{path}/"));
        }
        let index = real.join("index.html");
        return if index.is_file() {
            Resolved::File(index)
        } else {
            Resolved::NotFound
        };
    }
    if real.is_file() {
        Resolved::File(real)
    } else {
        Resolved::NotFound
    }
}

/// Extensions of what exhibit writes itself and the output gate has read
/// (pages, the stylesheet, charts): served as what they are.
const WRITTEN: &[(&str, &str)] = &[
    ("html", "text/html; charset=utf-8"),
    ("htm", "text/html; charset=utf-8"),
    ("css", "text/css; charset=utf-8"),
    ("svg", "image/svg+xml"),
];

/// Types a browser shows or saves but never runs, served as `mime_guess`
/// names them. Text of these kinds is sent as text/plain, so that it is
/// shown rather than downloaded.
const SHOWN: &[&str] = &[
    "application/json",
    "application/pdf",
    "application/zip",
    "application/gzip",
    "application/x-tar",
    "application/x-xz",
    "application/x-bzip2",
    "application/x-compressed",
    "application/vnd.apache.parquet",
    "application/octet-stream",
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/avif",
];

/// Text names exhibit publishes as they are
/// ([`crate::campaign::published_name`]) that `mime_guess` does not know.
const TEXT: &[&str] = &["jsonl", "ndjson", "out", "err", "md", "sha256"];

const PLAIN: &str = "text/plain; charset=utf-8";

/// The Content-Type of a site file. The rule is publishing's: a type a
/// browser may run is never sent as itself. Everything in a built site is
/// either written by exhibit and read by the gate ([`WRITTEN`]) or has an
/// inert name; a type outside [`SHOWN`] (HTML under another extension, XML,
/// script, an archive of a web page) is sent as text/plain whatever put it
/// there, and an unknown one as a download.
pub(super) fn content_type(path: &Path) -> &'static str {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if let Some((_, kind)) = WRITTEN.iter().find(|(e, _)| *e == ext) {
        return kind;
    }
    if TEXT.contains(&ext.as_str()) || path.file_name().is_some_and(|n| n == "SHA256SUMS") {
        return PLAIN;
    }
    match mime_guess::from_ext(&ext).first_raw() {
        None => "application/octet-stream",
        Some(kind) if SHOWN.contains(&kind) => kind,
        Some(_) => PLAIN,
    }
}

/// The most reload streams open at once; one more is refused with 503.
pub(super) const MAX_STREAMS: usize = 32;

/// The open reload streams: sockets one thread (the broadcaster) writes
/// to, none with a thread of its own.
#[derive(Default)]
pub(super) struct Streams {
    open: std::sync::Mutex<Vec<TcpStream>>,
}

impl Streams {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<TcpStream>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Send `reload` to every stream when a build finishes, a comment every
    /// 15 s otherwise; a stream that cannot take the whole message at once
    /// (closed, or not reading) is dropped.
    pub(super) fn broadcast(&self, shared: &Shared) -> ! {
        let mut seen = shared.status().generation;
        loop {
            let generation = shared.wait_newer(seen, Duration::from_secs(15));
            let msg = if generation != seen {
                seen = generation;
                format!("event: reload\ndata: {generation}\n\n")
            } else {
                ": ping\n\n".to_string()
            };
            self.lock()
                .retain(|mut s| s.write_all(msg.as_bytes()).is_ok());
        }
    }
}

/// Has the page at the other end of a stream gone? The socket does not
/// block, so a live stream has nothing to read and says so.
fn closed(stream: &TcpStream) -> bool {
    let mut byte = [0u8; 1];
    match stream.peek(&mut byte) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
    }
}

/// The Host values the preview answers: the address it listens on, by
/// the loopback names when it is loopback, with the exact port. A page of
/// another site that rebinds its own name to 127.0.0.1 sends its own name,
/// so it is refused and cannot read the preview.
pub(super) fn allowed_hosts(bind: std::net::IpAddr, port: u16) -> Vec<String> {
    let mut hosts = Vec::new();
    if bind.is_loopback() || bind.is_unspecified() {
        for h in ["127.0.0.1", "localhost", "[::1]"] {
            hosts.push(format!("{h}:{port}"));
        }
    }
    if !bind.is_loopback() {
        hosts.push(match bind {
            std::net::IpAddr::V6(a) => format!("[{a}]:{port}"),
            std::net::IpAddr::V4(a) => format!("{a}:{port}"),
        });
    }
    hosts
}

/// An answer: status, headers, and a body that is sent unless the
/// request was HEAD. Every answer closes its connection.
struct Response {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: Body,
}

enum Body {
    Empty,
    Bytes(Vec<u8>),
    File(File, u64),
}

impl Response {
    fn new(status: u16, body: Body) -> Response {
        Response {
            status,
            headers: Vec::new(),
            body,
        }
    }

    fn text(status: u16, text: &str) -> Response {
        Response::new(status, Body::Bytes(text.as_bytes().to_vec())).with("Content-Type", PLAIN)
    }

    fn with(mut self, name: &'static str, value: &str) -> Response {
        self.headers.push((name, value.to_string()));
        self
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        301 => "Moved Permanently",
        304 => "Not Modified",
        404 => "Not Found",
        405 => "Method Not Allowed",
        421 => "Misdirected Request",
        503 => "Service Unavailable",
        _ => "",
    }
}

/// The most time one answer may hold a worker, however slowly the client
/// reads: a local browser takes a large artifact in well under a second.
const SEND_DEADLINE: Duration = Duration::from_secs(60);

/// Write `resp` to the request's connection and close it; a client that
/// went away or stopped reading just loses its answer.
fn send(req: Request, resp: Response) {
    let mut out = &req.stream;
    let len = match &resp.body {
        Body::Empty => 0,
        Body::Bytes(b) => b.len() as u64,
        Body::File(_, len) => *len,
    };
    let mut head = format!("HTTP/1.1 {} {}\r\n", resp.status, reason(resp.status));
    for (name, value) in &resp.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if !matches!(resp.status, 204 | 304) {
        head.push_str(&format!("Content-Length: {len}\r\n"));
    }
    head.push_str("Connection: close\r\n\r\n");
    let body_too = req.method != "HEAD";
    let sent = out
        .write_all(head.as_bytes())
        .and_then(|_| match resp.body {
            _ if !body_too => Ok(()),
            Body::Empty => Ok(()),
            Body::Bytes(b) => out.write_all(&b),
            Body::File(file, _) => send_file(file, out),
        });
    if sent.is_ok() {
        let _ = out.flush();
    }
    let _ = req.stream.shutdown(std::net::Shutdown::Both);
}

fn send_file(mut file: File, mut out: &TcpStream) -> std::io::Result<()> {
    let deadline = std::time::Instant::now() + SEND_DEADLINE;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        out.write_all(&buf[..n])?;
        if std::time::Instant::now() > deadline {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
    }
}

/// Answer one request on one of the preview's worker threads; an event
/// stream is handed to [`Streams`] and the worker is free again.
pub(crate) fn handle(req: Request, shared: &Shared, hosts: &[String], streams: &Streams) {
    let host_ok = req
        .header("Host")
        .is_some_and(|h| hosts.iter().any(|a| a.eq_ignore_ascii_case(h)));
    if !host_ok {
        let resp = Response::text(421, "this preview answers only its own address\n");
        return send(req, resp);
    }
    if req.method != "GET" && req.method != "HEAD" {
        let resp = Response::text(405, "method not allowed\n").with("Allow", "GET, HEAD");
        return send(req, resp);
    }
    let url = req.target.clone();
    let path = url.split('?').next().unwrap_or("");
    if path == EVENTS {
        return events(req, &url, shared, streams);
    }
    if path == SCRIPT {
        let resp = Response::new(200, Body::Bytes(LIVE_JS.as_bytes().to_vec()))
            .with("Content-Type", "text/javascript; charset=utf-8")
            .with("Cache-Control", "no-cache");
        return send(req, resp);
    }
    let mut status = shared.status();
    if status.finishing && written_last(&url) {
        status = shared.wait_finished(FINISHING_AT_MOST);
    }
    let resp = match resolve(&status.site, &url) {
        Resolved::Redirect(to) => Response::new(301, Body::Empty).with("Location", &to),
        // Browsers ask for an icon the site does not have; an error in the
        // console for it would only be noise.
        Resolved::NotFound if path == "/favicon.ico" => Response::new(204, Body::Empty),
        Resolved::NotFound => not_found(&status),
        Resolved::File(file) => {
            serve_file(&req, &file, &status).unwrap_or_else(|_| not_found(&status))
        }
    };
    send(req, resp);
}

/// How long a request for a file a build writes last waits for it.
const FINISHING_AT_MOST: Duration = Duration::from_secs(60);

/// `url` names a file a build writes last ([`crate::layout::written_last`]):
/// while a build writes those, its pages are already served.
/// Read as [`resolve`] reads it: empty segments and a trailing `/`
/// dropped, and names compared as a case-insensitive disk would.
fn written_last(url: &str) -> bool {
    let path = url.split(['?', '#']).next().unwrap_or("");
    let decoded = percent_encoding::percent_decode_str(path).decode_utf8_lossy();
    let segments: Vec<&str> = decoded.split('/').filter(|s| !s.is_empty()).collect();
    crate::layout::written_last(&segments.join("/"))
}

fn serve_file(req: &Request, file: &Path, status: &Status) -> std::io::Result<Response> {
    let meta = std::fs::metadata(file)?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .unwrap_or_default();
    let kind = content_type(file);
    let html = kind.starts_with("text/html");
    // HTML carries the banner and the script, so its validator also
    // depends on the preview state.
    let etag = if html {
        format!(
            "\"{:x}-{:x}-g{}\"",
            meta.len(),
            mtime.as_nanos(),
            status.generation
        )
    } else {
        format!("\"{:x}-{:x}\"", meta.len(), mtime.as_nanos())
    };
    let matches = req
        .header("If-None-Match")
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let common = |r: Response| {
        r.with("ETag", &etag)
            .with("Cache-Control", "no-cache")
            .with("X-Content-Type-Options", "nosniff")
    };
    if matches {
        return Ok(common(Response::new(304, Body::Empty)));
    }
    let body = if html {
        let text = std::fs::read_to_string(file)?;
        Body::Bytes(inject(&text, status).into_bytes())
    } else {
        let f = File::open(file)?;
        let len = f.metadata()?.len();
        Body::File(f, len)
    };
    Ok(common(Response::new(200, body).with("Content-Type", kind)))
}

fn not_found(status: &Status) -> Response {
    let page = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Not found</title></head>\n<body><main style=\"font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto\"><h1>Not found</h1><p>No page of this preview has that address. <a href=\"/\">All campaigns</a></p></main></body></html>\n";
    Response::new(404, Body::Bytes(inject(page, status).into_bytes()))
        .with("Content-Type", "text/html; charset=utf-8")
        .with("Cache-Control", "no-cache")
}

/// Add the preview banner (files that differ from the manifest), the error
/// overlay of a failed build, and the reload script to an HTML page. Built
/// files on disk never carry them.
pub(super) fn inject(html: &str, status: &Status) -> String {
    let mut top = String::new();
    if let Some(err) = &status.error {
        top.push_str(&format!(
            "<div id=\"exhibit-error\" role=\"alert\" style=\"position:fixed;inset:0;z-index:2147483647;overflow:auto;background:rgba(20,20,24,.94);color:#fff;padding:2rem;font:14px/1.5 ui-monospace,monospace\"><p style=\"font:600 18px system-ui,sans-serif;color:#ff8a80;margin:0 0 1rem\">The last edit does not build; this is the last good build.</p><pre style=\"white-space:pre-wrap;margin:0\">{}</pre></div>",
            crate::html::escape(err)
        ));
    }
    if !status.unverified.is_empty() {
        let list: String = status
            .unverified
            .iter()
            .map(|u| format!("<li><code>{}</code></li>", crate::html::escape(u)))
            .collect();
        top.push_str(&format!(
            "<div id=\"exhibit-unverified\" role=\"status\" style=\"background:#fff3cd;color:#3d2c00;border-bottom:2px solid #c99a00;padding:.6rem 1rem;font:15px/1.45 system-ui,sans-serif\"><strong>Preview: unverified.</strong> {} from the manifest, shown as they are now. <code>exhibit build</code> refuses unsealed files until you run <code>exhibit seal --update</code> on the campaign.<ul style=\"margin:.3rem 0 0;padding-left:1.4rem\">{list}</ul></div>",
            match status.unverified.len() {
                1 => "1 file differs".to_string(),
                n => format!("{} differ", super::files(n)),
            },
        ));
    }
    let script = format!(
        "<script src=\"{SCRIPT}\" data-generation=\"{}\"></script>",
        status.generation
    );
    let mut out = String::with_capacity(html.len() + top.len() + script.len());
    let body_open = html
        .find("<body")
        .and_then(|i| html[i..].find('>').map(|j| i + j + 1));
    match body_open {
        Some(at) => {
            out.push_str(&html[..at]);
            out.push_str(&top);
            out.push_str(&html[at..]);
        }
        None => {
            out.push_str(&top);
            out.push_str(html);
        }
    }
    match out.rfind("</body>") {
        Some(at) => out.insert_str(at, &script),
        None => out.push_str(&script),
    }
    out
}

/// A server-sent-event stream: `reload` when a build newer than the
/// page's finishes (good or bad), a comment every 15 s to notice closed
/// connections. The page says which build it shows (`?since=N`). Beyond
/// [`MAX_STREAMS`] the stream is refused (the page retries later).
fn events(req: Request, url: &str, shared: &Shared, streams: &Streams) {
    let since: u64 = url
        .split_once("since=")
        .and_then(|(_, v)| v.split('&').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut open = streams.lock();
    if open.len() >= MAX_STREAMS {
        // Pages closed or reloaded since the last ping free their place now.
        open.retain(|s| !closed(s));
    }
    if open.len() >= MAX_STREAMS {
        drop(open);
        let resp = Response::text(503, "too many reload streams\n").with("Retry-After", "5");
        return send(req, resp);
    }
    let mut first = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n".to_string();
    // Under the lock, so no build can finish between this check and the
    // stream joining the list.
    let generation = shared.status().generation;
    if generation != since {
        first.push_str(&format!("event: reload\ndata: {generation}\n\n"));
    }
    let stream = req.stream;
    if (&stream).write_all(first.as_bytes()).is_ok() && stream.set_nonblocking(true).is_ok() {
        open.push(stream);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("exhibit-http-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("c/artifacts")).unwrap();
        std::fs::create_dir_all(dir.join("empty")).unwrap();
        std::fs::write(dir.join("index.html"), "<body>root</body>").unwrap();
        std::fs::write(dir.join("c/index.html"), "<body>c</body>").unwrap();
        std::fs::write(dir.join("c/artifacts/run log.txt"), "x").unwrap();
        std::fs::write(dir.join(".exhibit-site"), "").unwrap();
        dir.canonicalize().unwrap()
    }

    #[test]
    fn only_files_inside_the_site_resolve() {
        let s = site("resolve");
        assert_eq!(resolve(&s, "/"), Resolved::File(s.join("index.html")));
        assert_eq!(resolve(&s, "/c/"), Resolved::File(s.join("c/index.html")));
        assert_eq!(resolve(&s, "/c"), Resolved::Redirect("/c/".into()));
        assert_eq!(
            resolve(&s, "/c/?x=1"),
            Resolved::File(s.join("c/index.html"))
        );
        assert_eq!(
            resolve(&s, "/c/artifacts/run%20log.txt"),
            Resolved::File(s.join("c/artifacts/run log.txt"))
        );
        for bad in [
            "/../etc/passwd",
            "/c/../../etc/passwd",
            "/%2e%2e/%2e%2e/etc/passwd",
            "/c/%2E%2E/%2e%2e/etc/passwd",
            "/c%2findex.html",
            "/c%2Findex.html",
            "/c\\index.html",
            "/c%5cindex.html",
            "/.exhibit-site",
            "/empty/",
            "/nothing.html",
            "/index.html%00.txt",
            "/%ff",
            "//etc/passwd",
            "etc/passwd",
            "/C:/Windows",
        ] {
            let got = resolve(&s, bad);
            assert!(
                !matches!(&got, Resolved::File(p) if !p.starts_with(&s)),
                "{bad} escaped: {got:?}"
            );
            if bad != "//etc/passwd" {
                assert_eq!(got, Resolved::NotFound, "{bad}");
            }
        }
        std::fs::remove_dir_all(&s).unwrap();
    }

    #[test]
    fn symlinks_out_of_the_site_are_not_followed() {
        let s = site("symlinks");
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc", s.join("etc")).unwrap();
            std::os::unix::fs::symlink("/etc/hostname", s.join("host.txt")).unwrap();
            std::os::unix::fs::symlink(s.join("c/index.html"), s.join("inside.html")).unwrap();
            assert_eq!(resolve(&s, "/etc/passwd"), Resolved::NotFound);
            assert_eq!(resolve(&s, "/host.txt"), Resolved::NotFound);
            assert_eq!(
                resolve(&s, "/inside.html"),
                Resolved::File(s.join("c/index.html"))
            );
        }
        std::fs::remove_dir_all(&s).unwrap();
    }

    #[test]
    fn hosts_are_the_listening_address_with_its_port() {
        let lo = allowed_hosts("127.0.0.1".parse().unwrap(), 8000);
        assert_eq!(lo, ["127.0.0.1:8000", "localhost:8000", "[::1]:8000"]);
        let lan = allowed_hosts("192.168.1.7".parse().unwrap(), 8001);
        assert_eq!(lan, ["192.168.1.7:8001"]);
        let v6 = allowed_hosts("fe80::1".parse().unwrap(), 9);
        assert_eq!(v6, ["[fe80::1]:9"]);
    }

    #[test]
    fn content_types() {
        for (name, kind) in [
            ("a.html", "text/html; charset=utf-8"),
            ("a.css", "text/css; charset=utf-8"),
            ("a.svg", "image/svg+xml"),
            ("audit.json", "application/json"),
            ("run.log", "text/plain; charset=utf-8"),
            ("SHA256SUMS", "text/plain; charset=utf-8"),
            ("weights.bin", "application/octet-stream"),
            ("noext", "application/octet-stream"),
            ("r.jsonl", "text/plain; charset=utf-8"),
            ("cells.csv", "text/plain; charset=utf-8"),
            ("p.PNG", "image/png"),
            ("logs.tar.gz", "application/gzip"),
            // What a browser may run is never sent as itself.
            ("a.shtml", "text/plain; charset=utf-8"),
            ("a.xhtml", "text/plain; charset=utf-8"),
            ("a.svgz", "text/plain; charset=utf-8"),
            ("a.xml", "text/plain; charset=utf-8"),
            ("a.xsl", "text/plain; charset=utf-8"),
            ("a.js", "text/plain; charset=utf-8"),
            ("a.mjs", "text/plain; charset=utf-8"),
            ("a.mht", "text/plain; charset=utf-8"),
            ("a.swf", "text/plain; charset=utf-8"),
        ] {
            assert_eq!(content_type(Path::new(name)), kind, "{name}");
        }
    }

    #[test]
    fn injection_adds_banner_overlay_and_script() {
        let status = Status {
            site: PathBuf::new(),
            error: Some("bad <json>".into()),
            unverified: vec!["c/data/x.json: modified".into()],
            generation: 7,
            finishing: false,
        };
        let out = inject("<html><body class=\"x\"><p>hi</p></body></html>", &status);
        let body = out.find("<body class=\"x\">").unwrap();
        assert!(out.find("exhibit-error").unwrap() > body);
        assert!(out.contains("bad &lt;json&gt;"));
        assert!(out.contains("exhibit seal --update"));
        assert!(out.contains("c/data/x.json: modified"));
        assert!(out.contains("data-generation=\"7\"></script></body>"));
    }
}
