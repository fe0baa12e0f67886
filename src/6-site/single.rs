//! `exhibit build --single-file`: one self-contained HTML file per campaign
//! for e-mail and archives. Every page becomes a section of one document
//! (ids scoped per page), the stylesheet is inlined, data downloads and
//! images become `data:` URLs saved under their own names, and links to
//! artifacts point at the file list, which gives each file's size and
//! SHA-256 and carries the file itself as a `data:` URL, up to
//! [`EMBED_LIMIT`] in all. The ledger is shown once, where the pages show
//! it. Every embedded byte is read from the published copy (redacted and
//! scanned), and the single file is scanned and gated like any page.

use crate::page::Page;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use regex::{Captures, Regex};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::OnceLock;

/// What a `data:` URL keeps as it is; everything else is percent-encoded.
const DATA_URL: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~')
    .remove(b',')
    .remove(b'/')
    .remove(b':');

/// The most the single file embeds of a campaign's files (as published,
/// before encoding): 8 MiB. Files go in file-list order; one that would
/// pass the limit is left out (and named), a later smaller one may still
/// go in.
pub(crate) const EMBED_LIMIT: u64 = 8 << 20;

/// `data:` types that never render script, which the output gate lets
/// through ([`crate::gate`]): anything else is embedded as plain text or
/// as bytes to save.
const EMBED_TYPES: &[&str] = &[
    "text/plain",
    "text/csv",
    "application/json",
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
];

/// A file of the campaign embedded in the single file.
#[derive(Serialize)]
pub(crate) struct Embedded {
    /// The file as a `data:` URL.
    pub(crate) data: String,
    /// The name it saves under: its published name.
    pub(crate) download: String,
}

/// Which of `files` (published path, published size) the single file
/// embeds, and the paths of those left out. `read` gives a published
/// copy's bytes.
pub(crate) fn embed(
    files: &[(&str, u64)],
    read: &dyn Fn(&str) -> Option<Vec<u8>>,
) -> (Vec<Option<Embedded>>, Vec<String>) {
    let (mut total, mut left_out) = (0u64, Vec::new());
    let embedded = files
        .iter()
        .map(|&(path, bytes)| {
            let fits = total + bytes <= EMBED_LIMIT;
            let got = fits.then(|| read(path)).flatten();
            match got {
                Some(b) => {
                    total += bytes;
                    let text = std::str::from_utf8(&b).is_ok();
                    let m = mime(path);
                    let m = match () {
                        _ if EMBED_TYPES.contains(&m) => m,
                        _ if text => "text/plain",
                        _ => "application/octet-stream",
                    };
                    Some(Embedded {
                        data: data_url(m, &b),
                        download: file_name(path).to_string(),
                    })
                }
                None => {
                    left_out.push(path.to_string());
                    None
                }
            }
        })
        .collect();
    (embedded, left_out)
}

/// The last component of a published path: what a download saves as.
fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// One page as a section of the single file.
#[derive(Serialize)]
pub(crate) struct Section {
    pub(crate) id: String,
    pub(crate) title: String,
    pub(crate) html: String,
}

/// A file of the campaign as the single file lists it.
pub(crate) struct Listed<'a> {
    /// Published path (what links in pages name).
    pub(crate) href: &'a str,
    /// Anchor of its row in the file list.
    pub(crate) anchor: String,
}

/// Section id of a page: the main page is `page-index`.
pub(crate) fn section_id(output: &str) -> String {
    format!("page-{}", output.trim_end_matches(".html"))
}

/// Prefix for ids inside a page's section; the main page keeps its own.
fn scope(output: &str) -> String {
    if output == "index.html" {
        String::new()
    } else {
        format!("{}--", output.trim_end_matches(".html"))
    }
}

/// Maps the links of the published site onto the single file.
pub(crate) struct Linker<'a> {
    /// Page output name -> id prefix of its section.
    outputs: HashMap<&'a str, String>,
    /// Published path -> anchor of its row in the file list.
    files: HashMap<&'a str, &'a str>,
    /// The pages, to find where a ledger entry is shown.
    pages: &'a [Page],
    /// Where the ledger is: the first page that shows ledger entries, or
    /// the single file's own "no failures" note.
    ledger: String,
}

impl<'a> Linker<'a> {
    pub(crate) fn new(pages: &'a [Page], files: &'a [Listed]) -> Self {
        Linker {
            outputs: pages
                .iter()
                .map(|p| (p.output.as_str(), scope(&p.output)))
                .collect(),
            files: files.iter().map(|f| (f.href, f.anchor.as_str())).collect(),
            pages,
            ledger: pages.iter().find(|p| !p.ledger.is_empty()).map_or_else(
                || "#ledger".to_string(),
                |p| format!("#{}", section_id(&p.output)),
            ),
        }
    }

    /// Where links to the ledger page lead: the pages' own ledger blocks
    /// (the single file does not repeat them), or its "no failures" note.
    pub(crate) fn ledger_href(&self) -> &str {
        &self.ledger
    }

    /// `ledger.html#ID`: the entry on the first page that shows it.
    fn ledger_entry(&self, frag: &str) -> String {
        let id = format!("id=\"{}\"", crate::html::escape(frag));
        self.pages
            .iter()
            .find(|p| p.html.contains(&id))
            .map_or_else(
                || self.ledger.clone(),
                |p| format!("#{}{frag}", scope(&p.output)),
            )
    }

    /// Where a link written in a page (ids scoped by `own`) leads in the
    /// single file; `downloads` are inlined as `data:` URLs.
    fn href(&self, value: &str, own: &str, downloads: &HashMap<&str, &[u8]>) -> String {
        if let Some(id) = value.strip_prefix('#') {
            return format!("#{own}{id}");
        }
        if value.contains("://") || value.starts_with("mailto:") || value.contains('@') {
            return value.to_string();
        }
        let (path, frag) = match value.find('#') {
            Some(i) => (&value[..i], &value[i + 1..]),
            None => (value, ""),
        };
        if let Some(prefix) = self.outputs.get(path) {
            return if frag.is_empty() {
                format!("#{}", section_id(path))
            } else {
                format!("#{prefix}{frag}")
            };
        }
        match path {
            "ledger.html" if frag.is_empty() => return self.ledger.clone(),
            "ledger.html" => return self.ledger_entry(frag),
            "manifest.html" | "SHA256SUMS" | "audit.json" => return "#files".into(),
            _ => {}
        }
        if let Some(bytes) = downloads.get(path) {
            return data_url(mime(path), bytes);
        }
        self.files
            .get(path)
            .map_or_else(|| "#files".to_string(), |a| format!("#{a}"))
    }

    /// Every page body as a section, in page order: ids scoped per page,
    /// headings one level down, downloads and images inlined.
    pub(crate) fn sections(
        &self,
        pages: &[Page],
        images: &dyn Fn(&str) -> Option<Vec<u8>>,
    ) -> Vec<Section> {
        pages
            .iter()
            .map(|p| {
                let downloads: HashMap<&str, &[u8]> = p
                    .downloads
                    .iter()
                    .map(|d| (d.path.as_str(), d.bytes.as_slice()))
                    .collect();
                let own = scope(&p.output);
                let html = rewrite(&name_downloads(&p.html), &|attr, value| match attr {
                    "id" => format!("{own}{value}"),
                    "aria-labelledby" | "aria-describedby" => value
                        .split_whitespace()
                        .map(|v| format!("{own}{v}"))
                        .collect::<Vec<_>>()
                        .join(" "),
                    "src" if !value.contains("://") && !value.starts_with("data:") => {
                        let path = value.split('#').next().unwrap_or(value);
                        images(path).map_or_else(|| value.to_string(), |b| data_url(mime(path), &b))
                    }
                    "href" => self.href(value, &own, &downloads),
                    _ => value.to_string(),
                });
                Section {
                    id: section_id(&p.output),
                    title: p.title.clone(),
                    html: demote_headings(&html),
                }
            })
            .collect()
    }
}

/// A download link (`href="downloads/t.csv" download`) names the file it
/// saves, since a `data:` URL has no name of its own.
fn name_downloads(html: &str) -> String {
    static LINK: OnceLock<Regex> = OnceLock::new();
    let re = LINK.get_or_init(|| {
        Regex::new(r#"href="([^"]*)" download([\s>])"#).expect("valid download pattern")
    });
    re.replace_all(html, |c: &Captures| {
        let name = crate::html::escape(file_name(&unescape(&c[1])));
        format!("href=\"{}\" download=\"{name}\"{}", &c[1], &c[2])
    })
    .into_owned()
}

/// Page titles become the `h2`s of the single file: every heading inside
/// a page moves one level down (`h6` stays).
fn demote_headings(html: &str) -> String {
    static TAG: OnceLock<Regex> = OnceLock::new();
    let re =
        TAG.get_or_init(|| Regex::new(r"<(/?)h([1-5])([\s>])").expect("valid heading pattern"));
    re.replace_all(html, |c: &Captures| {
        let level: u8 = c[2].parse().unwrap_or(5);
        format!("<{}h{}{}", &c[1], level + 1, &c[3])
    })
    .into_owned()
}

/// Apply `f(attribute, value)` to the attributes that name ids or URLs in
/// HTML that exhibit wrote itself (values always double-quoted, escaped).
fn rewrite(html: &str, f: &dyn Fn(&str, &str) -> String) -> String {
    static ATTR: OnceLock<Regex> = OnceLock::new();
    let re = ATTR.get_or_init(|| {
        Regex::new(r#"(\s)(id|href|src|aria-labelledby|aria-describedby)="([^"]*)""#)
            .expect("valid attribute pattern")
    });
    re.replace_all(html, |c: &Captures| {
        let value = unescape(&c[3]);
        format!(
            "{}{}=\"{}\"",
            &c[1],
            &c[2],
            crate::html::escape(&f(&c[2], &value))
        )
    })
    .into_owned()
}

/// Undo [`crate::html::escape`] (and pulldown-cmark's attribute escaping).
pub(crate) fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

fn data_url(mime: &str, bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => format!(
            "data:{mime};charset=utf-8,{}",
            utf8_percent_encode(text, DATA_URL)
        ),
        Err(_) => format!("data:{mime};base64,{}", base64(bytes)),
    }
}

/// Standard base64 with padding (RFC 4648), for binary images.
fn base64(bytes: &[u8]) -> String {
    use ::base64::Engine as _;
    ::base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The media type a `data:` URL declares, by file extension; text when
/// the extension is unknown.
fn mime(path: &str) -> &'static str {
    mime_guess::from_path(path)
        .first_raw()
        .unwrap_or("text/plain")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_links_are_scoped_per_page() {
        let html = r##"<h2 id="setup">Setup</h2><a href="#setup">up</a><a href="index.html#results">r</a><a href="notes.html">n</a><a href="artifacts/run.log">log</a><a href="https://example.com/?a=1&amp;b=2">x</a><svg aria-labelledby="chart-1-title chart-1-desc">"##;
        let out = rewrite(html, &|attr, v| match attr {
            "href" if v.starts_with('#') => format!("#notes--{}", &v[1..]),
            "id" => format!("notes--{v}"),
            "aria-labelledby" => v
                .split(' ')
                .map(|x| format!("notes--{x}"))
                .collect::<Vec<_>>()
                .join(" "),
            _ => v.to_string(),
        });
        assert!(out.contains(r#"<h2 id="notes--setup">"#), "{out}");
        assert!(out.contains(r##"href="#notes--setup""##), "{out}");
        assert!(
            out.contains("notes--chart-1-title notes--chart-1-desc"),
            "{out}"
        );
        assert!(out.contains("a=1&amp;b=2"), "escaping survives: {out}");
        assert_eq!(
            demote_headings("<h2 id=\"a\">A</h2><h6>x</h6><hr>"),
            "<h3 id=\"a\">A</h3><h6>x</h6><hr>"
        );
    }

    #[test]
    fn data_urls_escape_what_html_and_urls_need() {
        let u = data_url("text/csv", b"a,b\r\n\"x y\",#1%\r\n");
        assert_eq!(
            u,
            "data:text/csv;charset=utf-8,a,b%0D%0A%22x%20y%22,%231%25%0D%0A"
        );
        assert_eq!(base64(b"\xff\x00"), "/wA=");
        assert_eq!(base64(b"any carnal pleas"), "YW55IGNhcm5hbCBwbGVhcw==");
        assert_eq!(
            data_url("image/png", b"\x89PNG\xff"),
            "data:image/png;base64,iVBOR/8="
        );
        for (path, want) in [
            ("downloads/t.csv", "text/csv"),
            ("downloads/t.json", "application/json"),
            ("a/chart.svg", "image/svg+xml"),
            ("a/logo.PNG", "image/png"),
            ("a/photo.jpeg", "image/jpeg"),
            ("a/no-extension", "text/plain"),
            ("a/run.unknownext", "text/plain"),
        ] {
            assert_eq!(mime(path), want, "{path}");
        }
    }
}
