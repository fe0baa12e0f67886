//! The preview's HTTP side: refuse any Host but the preview's own, map a
//! request to a file of the built site (and nothing else), answer with the right content type and cache validators,
//! inject the live-reload script and the preview banner into HTML, and keep
//! server-sent-event streams open for reloads.

use super::{Shared, Status};
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tiny_http::{Header, Method, Request, Response, StatusCode};

/// The path the reload stream is served under; no site file can take it.
pub const EVENTS: &str = "/__exhibit/events";
pub const SCRIPT: &str = "/__exhibit/live.js";
const LIVE_JS: &str = include_str!("live.js");

/// What a request path names in the site.
#[derive(Debug, PartialEq, Eq)]
pub enum Resolved {
    File(PathBuf),
    /// A folder asked for without its trailing slash.
    Redirect(String),
    NotFound,
}

/// Resolve the path part of a request URL under `site` (canonical). Only
/// regular files inside the site are ever returned: `..`, `.` and hidden
/// segments, encoded slashes or backslashes, NUL bytes, and symlinks that
/// lead out are all not found; so are folders without an index.html.
pub fn resolve(site: &Path, url: &str) -> Resolved {
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

pub fn content_type(path: &Path) -> &'static str {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    match ext.as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "json" => "application/json",
        "js" => "text/javascript; charset=utf-8",
        "txt" | "log" | "md" | "jsonl" | "csv" | "tsv" => "text/plain; charset=utf-8",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        _ if path.file_name().is_some_and(|n| n == "SHA256SUMS") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("static header is valid")
}

/// The most reload streams open at once; one more is refused with 503.
/// Each holds a connection (and tiny_http's thread reading it), none of ours.
pub const MAX_STREAMS: usize = 32;

/// The open reload streams; one thread writes to all of them.
#[derive(Default)]
pub struct Streams {
    open: std::sync::Mutex<Vec<Box<dyn Write + Send>>>,
}

impl Streams {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Box<dyn Write + Send>>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Send `reload` to every stream when a build finishes, a comment every
    /// 15 s otherwise; a stream that cannot be written to is dropped.
    pub fn broadcast(&self, shared: &Shared) -> ! {
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
                .retain_mut(|w| w.write_all(msg.as_bytes()).and_then(|_| w.flush()).is_ok());
        }
    }
}

/// The Host values the preview answers: the address it listens on, by
/// the loopback names when it is loopback, with the exact port. A page of
/// another site that rebinds its own name to 127.0.0.1 sends its own name,
/// so it is refused and cannot read the preview.
pub fn allowed_hosts(bind: std::net::IpAddr, port: u16) -> Vec<String> {
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

/// Answer one request on one of the preview's worker threads; an event
/// stream is handed to [`Streams`] and the worker is free again.
pub fn handle(req: Request, shared: &Shared, hosts: &[String], streams: &Streams) {
    let host_ok = req
        .headers()
        .iter()
        .find(|h| h.field.equiv("Host"))
        .is_some_and(|h| {
            hosts
                .iter()
                .any(|a| a.eq_ignore_ascii_case(h.value.as_str()))
        });
    if !host_ok {
        let resp = Response::from_string("this preview answers only its own address\n")
            .with_status_code(421);
        let _ = req.respond(resp);
        return;
    }
    let url = req.url().to_string();
    let method = req.method().clone();
    if method != Method::Get && method != Method::Head {
        let resp = Response::from_string("method not allowed\n")
            .with_status_code(405)
            .with_header(header("Allow", "GET, HEAD"));
        let _ = req.respond(resp);
        return;
    }
    let path = url.split('?').next().unwrap_or("");
    if path == EVENTS {
        return events(req, &url, shared, streams);
    }
    if path == SCRIPT {
        let resp = Response::from_string(LIVE_JS)
            .with_header(header("Content-Type", "text/javascript; charset=utf-8"))
            .with_header(header("Cache-Control", "no-cache"));
        let _ = req.respond(resp);
        return;
    }
    let status = shared.status();
    let resp = match resolve(&status.site, &url) {
        Resolved::Redirect(to) => {
            let r = Response::empty(StatusCode(301)).with_header(header("Location", &to));
            let _ = req.respond(r);
            return;
        }
        // Browsers ask for an icon the site does not have; an error in the
        // console for it would only be noise.
        Resolved::NotFound if path == "/favicon.ico" => boxed(Response::empty(StatusCode(204))),
        Resolved::NotFound => not_found(&status),
        Resolved::File(file) => match serve_file(&req, &file, &status) {
            Ok(r) => r,
            Err(_) => not_found(&status),
        },
    };
    let _ = req.respond(resp);
}

type Boxed = Response<Box<dyn Read + Send>>;

fn boxed<R: Read + Send + 'static>(r: Response<R>) -> Boxed {
    r.boxed()
}

fn serve_file(req: &Request, file: &Path, status: &Status) -> std::io::Result<Boxed> {
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
        .headers()
        .iter()
        .find(|h| h.field.equiv("If-None-Match"))
        .is_some_and(|h| {
            h.value
                .as_str()
                .split(',')
                .any(|t| t.trim() == etag || t.trim() == "*")
        });
    let common = |r: Boxed| {
        r.with_header(header("ETag", &etag))
            .with_header(header("Cache-Control", "no-cache"))
            .with_header(header("X-Content-Type-Options", "nosniff"))
    };
    if matches {
        return Ok(common(boxed(Response::empty(StatusCode(304)))));
    }
    let r = if html {
        let text = std::fs::read_to_string(file)?;
        boxed(Response::from_string(inject(&text, status)))
    } else {
        boxed(Response::from_file(File::open(file)?))
    };
    Ok(common(r.with_header(header("Content-Type", kind))))
}

fn not_found(status: &Status) -> Boxed {
    let page = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Not found</title></head>\n<body><main style=\"font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto\"><h1>Not found</h1><p>No page of this preview has that address. <a href=\"/\">All campaigns</a></p></main></body></html>\n";
    boxed(
        Response::from_string(inject(page, status))
            .with_status_code(404)
            .with_header(header("Content-Type", "text/html; charset=utf-8"))
            .with_header(header("Cache-Control", "no-cache")),
    )
}

/// Add the preview banner (files that differ from the manifest), the error
/// overlay of a failed build, and the reload script to an HTML page. Built
/// files on disk never carry them.
pub fn inject(html: &str, status: &Status) -> String {
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
        drop(open);
        let resp = Response::from_string("too many reload streams\n")
            .with_status_code(503)
            .with_header(header("Retry-After", "5"));
        let _ = req.respond(resp);
        return;
    }
    let mut w = req.into_writer();
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n";
    let mut first = head.to_string();
    // Under the lock, so no build can finish between this check and the
    // stream joining the list.
    let generation = shared.status().generation;
    if generation != since {
        first.push_str(&format!("event: reload\ndata: {generation}\n\n"));
    }
    if w.write_all(first.as_bytes())
        .and_then(|_| w.flush())
        .is_ok()
    {
        open.push(w);
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
