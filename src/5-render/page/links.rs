//! Links and images of a page: every target checked (a scheme the format
//! does not define, a private value, an absolute or broken path drops the
//! link or fails the page) and campaign paths rewritten to what is
//! published; links to anchors remembered for [`super::check_anchors`].

use super::{Anchor, Renderer};
use crate::error::Result;

impl Renderer<'_> {
    /// Would this link target be published as written? A target holding a
    /// private value is dropped, link text kept.
    pub(super) fn unredacted(&self, dest: &str) -> bool {
        // What a browser will make of it: percent-decoded, with the dots
        // it accepts in host names, and the URL as the URL Standard parses
        // it (the url crate: `http://0x0a.0.0.5/`, `http://167772165/` and
        // `http://10.5/` all lead to 10.0.0.5, and are written so).
        let decoded = percent_encoding::percent_decode_str(dest).decode_utf8_lossy();
        let dotted = decoded.replace(['\u{3002}', '\u{FF0E}', '\u{FF61}'], ".");
        let url = url::Url::parse(dest).ok();
        let parsed = url.as_ref().map_or("", url::Url::as_str);
        let det = &self.store.redactor.detector;
        [dest, &decoded, &dotted, parsed]
            .iter()
            .all(|t| det.find(t.as_bytes()).is_empty())
            && !url.as_ref().is_some_and(|u| odd_numeric_host(dest, u))
    }

    /// Remember a link to `page#id` for [`check_anchors`].
    pub(super) fn anchor(&mut self, page: &str, frag: &str, dest: &str, at: usize) {
        let Some(id) = frag.strip_prefix('#').filter(|id| !id.is_empty()) else {
            return;
        };
        let (line, col) = self.lines.line_col(at);
        self.anchors.push(Anchor {
            page: page.to_string(),
            id: id.to_string(),
            written: dest.to_string(),
            path: self.path.clone(),
            line,
            col,
        });
    }

    /// Check and rewrite a link target; `None` drops the link.
    pub(super) fn link(&mut self, dest: &str, at: usize) -> Result<Option<String>> {
        // Every target passes the one filter: a scheme the format does not
        // define (`javascript:`, `data:`, `vbscript:`) drops the link.
        if !crate::html::allowed_target(dest) {
            return Ok(None);
        }
        if crate::html::scheme(dest.trim()).is_some() {
            return Ok(Some(dest.to_string()).filter(|d| self.unredacted(d)));
        }
        // An e-mail autolink (`<ops@example.com>`) names no file.
        if dest.contains('@') && !dest.contains('/') {
            return Ok(Some(dest.to_string()).filter(|d| self.unredacted(d)));
        }
        if dest.starts_with('#') && self.unredacted(dest) {
            let own = self.stem.clone() + ".html";
            self.anchor(&own, dest, dest, at);
        }
        if dest.is_empty()
            || dest.starts_with('#')
            || dest.starts_with("//")
            || dest.starts_with("../")
        {
            return Ok(Some(dest.to_string()).filter(|d| self.unredacted(d)));
        }
        if dest.starts_with('/') {
            return Err(self.err(
                at,
                format!("link `{dest}` is absolute; link to campaign files with relative paths"),
            ));
        }
        let (path, frag) = match dest.find(['#', '?']) {
            Some(i) => (&dest[..i], &dest[i..]),
            None => (dest, ""),
        };
        let path = path.strip_prefix("./").unwrap_or(path);
        if let Some(out) = self.store.public.output_of_page(path) {
            let frag = self.store.redactor.redact(frag).into_owned();
            self.anchor(&out, &frag, dest, at);
            return Ok(Some(format!("{out}{frag}")));
        }
        if self.evidence.verified_sha256(path).is_some() {
            let frag = self.store.redactor.redact(frag);
            let href = crate::html::file_href(&self.store.public.published(path));
            return Ok(Some(format!("{href}{frag}")));
        }
        let generated = crate::layout::GENERATED;
        if self.store.public.page_with_output(path).is_some() {
            let frag = frag.to_string();
            self.anchor(path, &frag, dest, at);
            return Ok(Some(dest.to_string()));
        }
        if generated.contains(&path) {
            return Ok(Some(dest.to_string()));
        }
        Err(self.err(
            at,
            format!("broken link `{dest}`: no page or file of the campaign has that path"),
        ))
    }
}

/// A host the URL Standard reads as an IPv4 address but that is not
/// written as one (`10.5`, `0x0a.0.0.5`, `012.0.0.5`, `167772165`): the
/// text hides where the link leads, so it is dropped whatever the address.
fn odd_numeric_host(dest: &str, url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => {
            let written = dest.to_ascii_lowercase();
            !written.contains(&format!("//{ip}")) && !written.contains(&format!("@{ip}"))
        }
        _ => false,
    }
}
