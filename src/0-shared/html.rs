//! Small HTML helpers shared by the block renderers: escaping and the
//! "source: file · sha256" note every data-backed block carries.

use std::fmt::Write;

/// Escape text for HTML element content and quoted attribute values.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The one link filter: may `dest`, an author's link or image target or a
/// campaign file's published path, stand in an `href` or `src`? Relative
/// targets may; of absolute ones only `http`, `https` and `mailto`. The
/// scheme is read as a browser does, ignoring ASCII white space and control
/// characters (`java\tscript:` is `javascript:`).
pub(crate) fn allowed_target(dest: &str) -> bool {
    let compact: String = dest
        .chars()
        .filter(|c| !c.is_ascii_whitespace() && !c.is_ascii_control())
        .collect();
    match scheme(&compact) {
        Some(s) => matches!(s.to_ascii_lowercase().as_str(), "http" | "https" | "mailto"),
        None => true,
    }
}

/// The scheme of an absolute URL: what stands before a `:` that comes
/// before any `/`, `?` or `#`.
pub(crate) fn scheme(url: &str) -> Option<&str> {
    let colon = url.find(':')?;
    let s = &url[..colon];
    (!s.contains(['/', '?', '#'])).then_some(s)
}

/// The `href` of a campaign file published at `path`: a name such as
/// `javascript:x` or `data:y` is a relative path, so it is written
/// `./javascript:x` and no browser reads a scheme in it.
pub(crate) fn file_href(path: &str) -> String {
    if scheme(path).is_some() {
        format!("./{path}")
    } else {
        path.to_string()
    }
}

/// `<p class="source">` naming the data file and its short hash, linked.
pub(crate) fn source_note(path: &str, href: &str, sha256: &str) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<p class=\"source\">Source: <a href=\"{}\">{}</a> · <span class=\"hash\" title=\"sha256 {}\">sha256 {}</span></p>",
        escape(&file_href(href)),
        escape(path),
        escape(sha256),
        escape(&sha256[..sha256.len().min(12)])
    );
    s
}

/// A URL-safe slug of heading text: lowercase alphanumerics joined by `-`.
pub(crate) fn slug(text: &str) -> String {
    let mut out = String::new();
    let mut dash = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if dash && !out.is_empty() {
                out.push('-');
            }
            dash = false;
            out.extend(c.to_lowercase());
        } else {
            dash = true;
        }
    }
    if out.is_empty() {
        out.push_str("section");
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_markup() {
        assert_eq!(
            super::escape("<a href='x'>&</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt;"
        );
    }

    #[test]
    fn slugs() {
        assert_eq!(
            super::slug("Failures and routed limits"),
            "failures-and-routed-limits"
        );
        assert_eq!(super::slug("4K-target decode!"), "4k-target-decode");
    }
}
