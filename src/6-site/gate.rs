//! The output gate: the last look at every published HTML and SVG file,
//! after the site is written and before it is swapped in. Whatever wrote
//! the markup (a page, a block, the built-in theme or a `--theme DIR`
//! override), no construct that can run script may be published: the file
//! is tokenized as a browser would (html5gum, the WHATWG tokenizer) and
//! each refused construct is named by file:line:col and a fixed
//! description, never by the value it held. CSS is read too (`style`
//! attributes, `<style>` text, published stylesheets): a style can load a
//! script URL or, in older browsers, run script itself.

use crate::error::EvidenceFailed;
use crate::error::Result;
use crate::redact::scan::{self, CleanChunks};
use html5gum::emitters::callback::{Callback, CallbackEmitter, CallbackEvent};
use html5gum::{Span, Tokenizer};
use rayon::prelude::*;
use std::borrow::Cow;
use std::ops::Range;
use std::path::Path;

/// Extensions the gate reads as markup: what a browser would render as a
/// document. Every other published file is inert by its name
/// ([`crate::campaign::published_name`]) or is the stylesheet.
const MARKUP: &[&str] = &["html", "htm", "xhtml", "xht", "svg", "xml"];

/// Elements that load or run active content whatever their attributes.
const ELEMENTS: &[(&str, &str)] = &[
    ("script", "a <script> element"),
    ("iframe", "an <iframe> element"),
    ("frame", "a <frame> element"),
    ("frameset", "a <frameset> element"),
    ("object", "an <object> element"),
    ("embed", "an <embed> element"),
    ("applet", "an <applet> element"),
    ("portal", "a <portal> element"),
    ("base", "a <base> element"),
    ("foreignobject", "an SVG <foreignObject> element"),
];

/// Attributes holding a URL a browser may navigate to or load.
const URL_ATTRS: &[&str] = &[
    "href",
    "xlink:href",
    "src",
    "action",
    "formaction",
    "data",
    "poster",
    "background",
    "codebase",
    "cite",
    "longdesc",
    "ping",
    "srcset",
    "manifest",
    "icon",
    "lowsrc",
    "dynsrc",
];

/// `data:` types that render inert: images (SVG only where an image is
/// loaded, never navigated to) and the data downloads of the single file.
const DATA_TYPES: &[&str] = &[
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "text/csv",
    "text/plain",
    "application/json",
    // The single file's embedded binaries: saved, never rendered.
    "application/octet-stream",
];

/// A refused construct: file, line, column and what it is.
type Refused = (String, usize, usize, &'static str);

/// Check every markup file and stylesheet under `root`: exit 1 listing
/// each refused construct, or `Ok`. `memo`: the preview's pieces of
/// markup found clean by earlier builds ([`check_remembered`]), for
/// pages of [`scan::REMEMBER_FROM`] bytes or more.
pub(crate) fn check_tree(root: &Path, memo: Option<&CleanChunks>) -> Result<()> {
    // A file or folder that cannot be read fails the gate: it is never
    // taken as empty.
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(root).to_path_buf();
            crate::error::Error::failed("list", &path, e)
        })?;
        if entry.file_type().is_file() && (is_markup(entry.path()) || is_css(entry.path())) {
            files.push(entry);
        }
    }
    let found: Vec<Vec<Refused>> = files
        .par_iter()
        .map(|e| {
            let rel = e.path().strip_prefix(root).unwrap_or(e.path());
            let rel = rel.to_string_lossy().replace('\\', "/");
            // UTF-8 as written (no copy); anything else read as a
            // browser would, invalid bytes replaced.
            let text = String::from_utf8(crate::fsx::read(e.path())?)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            let found = if is_css(e.path()) {
                css_found(&text, 0)
            } else if let Some(memo) = memo.filter(|_| text.len() as u64 >= scan::REMEMBER_FROM) {
                check_remembered(&text, memo)
            } else {
                check(&text)
            };
            Ok(found
                .into_iter()
                .map(|(offset, why)| {
                    let (line, col) = crate::error::line_col(&text, offset);
                    (rel.clone(), line, col, why)
                })
                .collect())
        })
        .collect::<Result<_>>()?;
    // Sorted by file, then position in it: a stable report.
    let mut found: Vec<Refused> = found.into_iter().flatten().collect();
    if found.is_empty() {
        return Ok(());
    }
    found.sort();
    Err(EvidenceFailed {
        report: format!(
            "refusing to publish: the written site holds markup that can run script (the previous site is unchanged)\n{}",
            found
                .iter()
                .map(|(rel, line, col, why)| format!("  {rel}:{line}:{col}: {why}"))
                .collect::<Vec<_>>()
                .join("\n")
        ),
    }
    .into())
}

fn is_markup(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| MARKUP.contains(&e.to_ascii_lowercase().as_str()))
}

fn is_css(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("css"))
}

/// The start tag being read: its lowercased name and attributes (name,
/// decoded value, where the name starts), their bytes in one buffer kept
/// from tag to tag, so reading a tag allocates nothing. Bytes as the
/// tokenizer hands them on: it reads text (UTF-8), so they are whole
/// characters, compared with ASCII names as they are, and a value read
/// as a URL or CSS is taken as text only then.
#[derive(Default)]
struct Tag {
    name: Vec<u8>,
    /// Where the name ends; [`tag_start`] finds its `<`.
    name_end: usize,
    text: Vec<u8>,
    attrs: Vec<(Range<usize>, Range<usize>, usize)>,
}

impl Tag {
    fn attr(&self, key: &[u8]) -> Option<Cow<'_, str>> {
        self.attrs()
            .find(|(k, _, _)| *k == key)
            .map(|(_, v, _)| String::from_utf8_lossy(v))
    }

    /// (name, value, where the name starts) of each attribute.
    fn attrs(&self) -> impl Iterator<Item = (&[u8], &[u8], usize)> {
        self.attrs
            .iter()
            .map(|(k, v, at)| (&self.text[k.clone()], &self.text[v.clone()], *at))
    }
}

/// What the tokenizer yields to the gate's loops: each start tag (where
/// it starts, and whether it is `<style>` or the [`SENTINEL`]) and each
/// `</style>`. What the gate refuses is gathered by the [`Collector`].
enum Token {
    Start {
        at: usize,
        style: bool,
        sentinel: bool,
    },
    StyleEnd,
}

/// Reads start tags from html5gum's callback emitter as they end, and the
/// text of `<style>` elements, and keeps what they hold that can run
/// script: other text, the bulk of a page, is never copied.
struct Collector<'h> {
    html: &'h str,
    tag: Tag,
    in_tag: bool,
    /// Inside `<style>`: its text so far and where it starts.
    style: Option<(String, usize)>,
    found: Vec<(usize, &'static str)>,
}

impl<'h> Collector<'h> {
    fn new(html: &'h str) -> Self {
        Collector {
            html,
            tag: Tag::default(),
            in_tag: false,
            style: None,
            found: Vec::new(),
        }
    }

    fn handle_event(&mut self, event: CallbackEvent<'_>, span: Span<usize>) -> Option<Token> {
        let tag = &mut self.tag;
        match event {
            CallbackEvent::OpenStartTag { name } => {
                self.in_tag = true;
                tag.name.clear();
                tag.name.extend_from_slice(name);
                tag.name.make_ascii_lowercase();
                tag.name_end = span.end;
                tag.text.clear();
                tag.attrs.clear();
            }
            CallbackEvent::AttributeName { name } if self.in_tag => {
                let start = tag.text.len();
                tag.text.extend_from_slice(name);
                tag.text[start..].make_ascii_lowercase();
                let end = tag.text.len();
                tag.attrs.push((start..end, end..end, span.start));
            }
            CallbackEvent::AttributeValue { value } if self.in_tag => {
                if let Some((_, v, _)) = tag.attrs.last_mut() {
                    // The value joins the last attribute's, as before. If
                    // other text came after that value in the buffer, the
                    // value is moved to the end first, so it stays in one
                    // piece.
                    if v.end != tag.text.len() {
                        let moved = tag.text[v.clone()].to_vec();
                        *v = tag.text.len()..tag.text.len();
                        tag.text.extend_from_slice(&moved);
                    }
                    tag.text.extend_from_slice(value);
                    v.end = tag.text.len();
                }
            }
            CallbackEvent::CloseStartTag { .. } if self.in_tag => {
                self.in_tag = false;
                let at = tag_start(self.html, tag.name_end);
                check_tag(tag, at, &mut self.found);
                let style = tag.name == b"style";
                if style {
                    self.style = Some((String::new(), span.end));
                }
                let sentinel = tag.name == SENTINEL.as_bytes()[1..SENTINEL.len() - 1];
                return Some(Token::Start {
                    at,
                    style,
                    sentinel,
                });
            }
            CallbackEvent::String { value } => {
                if let Some((text, _)) = &mut self.style {
                    text.push_str(&String::from_utf8_lossy(value));
                }
            }
            // The tokenizer is not told that style text is raw (inside SVG
            // it is markup): anything tag-like in it is checked as a tag,
            // and the text around it as CSS, up to the closing tag.
            CallbackEvent::EndTag { name } if name.eq_ignore_ascii_case(b"style") => {
                let (css, at) = self.style.take()?;
                self.found.extend(css_found(&css, at));
                return Some(Token::StyleEnd);
            }
            _ => {}
        }
        None
    }
}

/// The callback emitter, telling the tokenizer that parse errors are not
/// wanted: the collector drops them, and asked for them the tokenizer
/// checks every character it reads for the WHATWG's character errors.
/// Tokens are the same either way.
struct Quiet<F: Callback<Token, usize>>(CallbackEmitter<F, Token, usize>);

impl<F: Callback<Token, usize>> html5gum::ForwardingEmitter for Quiet<F> {
    type Token = Token;

    fn inner(&mut self) -> &mut impl html5gum::Emitter<Token = Token> {
        &mut self.0
    }

    fn should_emit_errors(&mut self) -> bool {
        false
    }
}

/// The tokens of `html`, read by `collector` (which gathers what it
/// refuses as the tokens go by).
fn tokens<'c, 'h>(
    html: &'c str,
    collector: &'c mut Collector<'h>,
) -> impl Iterator<Item = Token> + use<'c, 'h> {
    let emitter = Quiet(CallbackEmitter::new(
        move |event: CallbackEvent<'_>, span: Span<usize>| collector.handle_event(event, span),
    ));
    Tokenizer::new_with_emitter(html, emitter).flatten()
}

/// Each script-capable construct in `html`: its byte offset and what it is.
pub(crate) fn check(html: &str) -> Vec<(usize, &'static str)> {
    let mut collector = Collector::new(html);
    tokens(html, &mut collector).for_each(drop);
    collector.found
}

/// How large the pieces [`check_remembered`] cuts a page into aim to be.
const PIECE: usize = 32 << 10;

/// The tag read after a piece to learn whether the piece ended between
/// tokens (see [`check_piece`]).
const SENTINEL: &str = "<x-exhibit-gate-end>";

/// [`check`], a piece at a time, not reading again the pieces `memo`
/// holds. A page is cut after lines its own bytes mark
/// ([`scan::content_cut`]), so an edit changes the piece it is in and
/// leaves the others as they were. A piece read on its own gives the
/// tokens the whole page gives there when the tokenizer is between tokens
/// where it starts: true of the page's start, and of the end of each
/// piece [`check_piece`] saw end so. Only such pieces, refusing nothing,
/// are kept in `memo`; from a piece that did not end so, the rest of the
/// page is read in one.
fn check_remembered(html: &str, memo: &CleanChunks) -> Vec<(usize, &'static str)> {
    static WHAT: std::sync::OnceLock<std::sync::Arc<str>> = std::sync::OnceLock::new();
    let what = WHAT.get_or_init(|| "exhibit output gate, html5gum".into());
    let view = scan::View::Markup;
    let mut found = Vec::new();
    let mut start = 0;
    while start < html.len() {
        let rest = &html.as_bytes()[start..];
        let end = match (rest.len() >= 2 * PIECE).then(|| scan::content_cut(rest, PIECE)) {
            Some(Some(cut)) => start + cut,
            // The last piece, and a page with no cut: read to the end.
            _ => html.len(),
        };
        let piece = &html[start..end];
        if memo.knows(what, view, piece.as_bytes()) {
            start = end;
            continue;
        }
        match check_piece(piece) {
            Some(here) => {
                if here.is_empty() {
                    memo.remember(what, view, piece.as_bytes());
                }
                found.extend(here.into_iter().map(|(at, why)| (start + at, why)));
            }
            None => {
                found.extend(
                    check(&html[start..])
                        .into_iter()
                        .map(|(at, why)| (start + at, why)),
                );
                return found;
            }
        }
        start = end;
    }
    found
}

/// [`check`] of `piece` read from a tokenizer between tokens, with
/// [`SENTINEL`] after it: `None` unless the sentinel is read as a tag
/// starting where the piece ends, outside any `<style>`, so the piece
/// ended between tokens. Without a tree builder the tokenizer never
/// switches to raw text, so that is the one state a tag can start in.
fn check_piece(piece: &str) -> Option<Vec<(usize, &'static str)>> {
    let text = format!("{piece}{SENTINEL}");
    let mut collector = Collector::new(&text);
    let mut in_style = false;
    let mut ended = None;
    let mut tokens = tokens(&text, &mut collector);
    for token in tokens.by_ref() {
        match token {
            Token::StyleEnd => in_style = false,
            Token::Start { at, sentinel, .. } if at == piece.len() => {
                ended = Some(sentinel && !in_style);
                break;
            }
            Token::Start { style, .. } => in_style |= style,
        }
    }
    let ends = ended? && tokens.next().is_none();
    drop(tokens);
    // The sentinel refuses nothing: what was found is the piece's.
    ends.then_some(collector.found)
}

/// Where the tag whose name ends at `name_end` starts: its `<`.
fn tag_start(html: &str, name_end: usize) -> usize {
    let end = name_end.min(html.len());
    html.as_bytes()[..end]
        .iter()
        .rposition(|&b| b == b'<')
        .unwrap_or(end)
}

/// What `tag`, starting at `at`, holds that can run script.
fn check_tag(tag: &Tag, at: usize, found: &mut Vec<(usize, &'static str)>) {
    let name = tag.name.as_slice();
    if let Some((_, why)) = ELEMENTS.iter().find(|(n, _)| n.as_bytes() == name) {
        found.push((at, why));
    }
    if name == b"meta"
        && tag
            .attr(b"http-equiv")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("refresh"))
    {
        found.push((at, "a <meta http-equiv=\"refresh\"> redirect"));
    }
    // SVG animation can set an `href` to a script URL after load.
    if matches!(
        name,
        b"animate" | b"set" | b"animatemotion" | b"animatetransform"
    ) && tag
        .attr(b"attributename")
        .is_some_and(|v| v.to_ascii_lowercase().contains("href"))
    {
        found.push((at, "an SVG animation that sets a link"));
    }
    for (key, value, at) in tag.attrs() {
        if key.starts_with(b"on") {
            found.push((at, "an event-handler attribute (on...)"));
        } else if key == b"srcdoc" {
            found.push((at, "a srcdoc attribute"));
        } else if key == b"style" {
            let css = String::from_utf8_lossy(value);
            found.extend(check_css(&css).into_iter().map(|why| (at, why)));
        } else if URL_ATTRS.iter().any(|a| a.as_bytes() == key)
            || matches!(key, b"values" | b"to" | b"from") && name != b"animatetransform"
        {
            let image = name == b"img" && key == b"src";
            if let Some(why) = script_url(&String::from_utf8_lossy(value), image) {
                found.push((at, why));
            }
        }
    }
}

/// Why a URL may run script, read as a browser does (ASCII white space and
/// control characters ignored, scheme case-insensitive).
fn script_url(value: &str, image: bool) -> Option<&'static str> {
    // `srcset` and animation `values` hold several URLs.
    value
        .split([',', ';'])
        .find_map(|part| one_url(part, image))
        .or_else(|| one_url(value, image))
}

/// `value` as a browser reads a URL's scheme: without ASCII white space
/// and control characters, ASCII lowercased.
fn compact(value: &str) -> impl Iterator<Item = char> + '_ {
    value
        .chars()
        .filter(|c| !c.is_ascii_whitespace() && !c.is_ascii_control())
        .map(|c| c.to_ascii_lowercase())
}

fn one_url(value: &str, image: bool) -> Option<&'static str> {
    // Most URLs start with none of the schemes: told without a copy.
    let starts = |scheme: &str| {
        let mut chars = compact(value);
        scheme.chars().all(|s| chars.next() == Some(s))
    };
    if starts("javascript:") {
        Some("a javascript: URL")
    } else if starts("vbscript:") {
        Some("a vbscript: URL")
    } else if starts("data:") {
        let rest: String = compact(value).skip("data:".len()).collect();
        let mime = rest.split([';', ',']).next().unwrap_or("");
        let inert = DATA_TYPES.contains(&mime) || (image && mime == "image/svg+xml");
        (!inert).then_some("a data: URL of a type that can run script")
    } else {
        None
    }
}

/// Each script-capable construct in a piece of CSS (a stylesheet, a
/// `style` attribute or element), read after what a browser would undo:
/// comments dropped, escapes (`\6a`, `\j`) decoded, case and white space
/// ignored. Refused: a script URL in `url(...)` or `@import "..."`, and
/// the old ways CSS ran script itself (`expression(...)`, `behavior:`,
/// `-moz-binding:`).
fn check_css(css: &str) -> Vec<&'static str> {
    let css = css_plain(css);
    let mut found = Vec::new();
    // Each construct holds one of these bytes: most CSS (a page's print
    // rules) is told clean without looking for the constructs that need
    // the others.
    let has = |b: u8| memchr::memchr(b, css.as_bytes()).is_some();
    let (paren, colon, at) = (has(b'('), has(b':'), has(b'@'));
    if paren && css.contains("expression(") {
        found.push("a CSS expression()");
    }
    for property in ["behavior:", "-moz-binding:"] {
        let starts = colon
            && css.match_indices(property).any(|(i, _)| {
                !css[..i]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            });
        if starts {
            found.push("a CSS behavior or binding (runs script in old browsers)");
        }
    }
    if paren {
        for (i, _) in css.match_indices("url(") {
            let rest = &css[i + 4..];
            let target = rest[..rest.find(')').unwrap_or(rest.len())].trim_matches(['"', '\'']);
            if let Some(why) = one_url(target, true) {
                found.push(why);
            }
        }
    }
    if at {
        for (i, _) in css.match_indices("@import") {
            let rest = css[i + 7..].trim_start_matches(['"', '\'']);
            if let Some(why) = one_url(rest, true) {
                found.push(why);
            }
        }
    }
    found.dedup();
    found
}

/// [`check_css`] of `css` (which starts at byte `base` of its file), each
/// construct placed at the start of its line; one spread over lines is
/// placed where the CSS starts.
fn css_found(css: &str, base: usize) -> Vec<(usize, &'static str)> {
    let mut found = Vec::new();
    let mut at = base;
    for line in css.split_inclusive('\n') {
        let start = at + (line.len() - line.trim_start().len());
        found.extend(check_css(line).into_iter().map(|why| (start, why)));
        at += line.len();
    }
    for why in check_css(css) {
        if !found.iter().any(|(_, w)| *w == why) {
            found.push((base, why));
        }
    }
    found
}

/// CSS as its tokens mean it, lowercased and without white space: the
/// text the patterns of [`check_css`] are looked for in.
fn css_plain(css: &str) -> String {
    let mut out = String::with_capacity(css.len());
    let mut chars = css.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            '\\' => {
                let hex: String = std::iter::from_fn(|| chars.next_if(char::is_ascii_hexdigit))
                    .take(6)
                    .collect();
                if hex.is_empty() {
                    // `\j` is `j`; a backslash before a newline is nothing.
                    if let Some(c) = chars.next().filter(|c| *c != '\n') {
                        out.push(c);
                    }
                } else {
                    // One white space after a hex escape belongs to it.
                    chars.next_if(char::is_ascii_whitespace);
                    let code = u32::from_str_radix(&hex, 16).unwrap_or(0xfffd);
                    out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                }
            }
            c if c.is_ascii_whitespace() || c.is_ascii_control() => {}
            c => out.push(c.to_ascii_lowercase()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{check, check_css, check_remembered, one_url, CleanChunks, PIECE};

    fn whys(html: &str) -> Vec<&'static str> {
        check(html).into_iter().map(|(_, w)| w).collect()
    }

    #[test]
    fn refuses_script_constructs() {
        assert_eq!(whys("<p>x</p><SCRIPT>1</SCRIPT>"), ["a <script> element"]);
        assert_eq!(
            whys("<h2 id=t ONFOCUS=alert(1)>"),
            ["an event-handler attribute (on...)"]
        );
        assert_eq!(whys("<a href=' JaVa\tScript:x'>"), ["a javascript: URL"]);
        assert_eq!(
            whys("<a href=\"data:text/html,x\">"),
            ["a data: URL of a type that can run script"]
        );
        assert_eq!(
            whys("<svg><a xlink:href=\"javascript:x\"></a></svg>"),
            ["a javascript: URL"]
        );
        assert_eq!(
            whys("<set attributeName=href to=javascript:x>"),
            ["an SVG animation that sets a link", "a javascript: URL"]
        );
        assert_eq!(
            whys("<meta http-equiv=Refresh content=0>"),
            ["a <meta http-equiv=\"refresh\"> redirect"]
        );
    }

    #[test]
    fn refuses_script_in_css() {
        assert_eq!(
            whys("<p style=\"background:url(javascript:alert(1))\">"),
            ["a javascript: URL"]
        );
        assert_eq!(
            whys("<div style='width:expression(alert(1))'>"),
            ["a CSS expression()"]
        );
        assert_eq!(
            whys("<style>p{background:url( \"data:text/html,x\" )}</style>"),
            ["a data: URL of a type that can run script"]
        );
        assert_eq!(
            whys("<svg><style>a{x:u\\72l(JAVA\\53 cript:x)}</style></svg>"),
            ["a javascript: URL"]
        );
        // Entities are decoded in attributes, comments dropped in CSS.
        assert_eq!(
            whys("<b style=\"x:expr/**/ession(1)\">"),
            ["a CSS expression()"]
        );
        assert_eq!(
            whys("<b style=\"background:url(&#106;avascript:x)\">"),
            ["a javascript: URL"]
        );
        assert_eq!(
            check_css("@import 'vbscript:x'; a{behavior:url(x.htc)} b{-moz-binding:url(x)}"),
            [
                "a CSS behavior or binding (runs script in old browsers)",
                "a vbscript: URL"
            ]
        );
        // A construct's `(`, `:` or `@` written as an escape is read too.
        assert_eq!(check_css("a{x:expression\\28 1)}"), ["a CSS expression()"]);
        assert_eq!(
            check_css("\\40 import 'javascript:x';"),
            ["a javascript: URL"]
        );
        assert_eq!(
            check_css("a{behavior\\3a url(x.htc)}"),
            ["a CSS behavior or binding (runs script in old browsers)"]
        );
        // Placed on its line, or where the style text starts.
        let html = "<p>\n<style>\n  a{b:expression(1)}</style>";
        assert_eq!(check(html), [(14, "a CSS expression()")]);
        let html = "<style>a{b:url(java\nscript:x)}</style>";
        assert_eq!(check(html), [(7, "a javascript: URL")]);
    }

    #[test]
    fn passes_what_exhibit_writes() {
        assert!(check_css("html{scroll-behavior:smooth} i{background:url(data:image/svg+xml,%3Csvg%3E) url(\"a.png\")} @import url(t.css);").is_empty());
        assert!(whys("<span style=\"width:42%\">x</span><style>p{color:red}</style><p>url(javascript:x) in text</p>").is_empty());
        assert!(whys("<a href=\"https://x/\">x</a><img src=\"data:image/svg+xml,x\"><a href=\"data:text/csv;charset=utf-8,a\" download>c</a><a href=\"./javascript:x\">f</a>").is_empty());
    }

    /// A scheme is told without copying the URL, as it was told from the
    /// URL copied without white space and lowercased: every split and
    /// case of the schemes, with spaces, tabs, controls and non-ASCII
    /// letters around and inside them.
    #[test]
    fn schemes_are_read_as_from_the_compacted_url() {
        let copied = |value: &str, image: bool| {
            let compact: String = value
                .chars()
                .filter(|c| !c.is_ascii_whitespace() && !c.is_ascii_control())
                .collect::<String>()
                .to_ascii_lowercase();
            if compact.starts_with("javascript:") {
                Some("a javascript: URL")
            } else if compact.starts_with("vbscript:") {
                Some("a vbscript: URL")
            } else if let Some(rest) = compact.strip_prefix("data:") {
                let mime = rest.split([';', ',']).next().unwrap_or("");
                let inert = super::DATA_TYPES.contains(&mime) || (image && mime == "image/svg+xml");
                (!inert).then_some("a data: URL of a type that can run script")
            } else {
                None
            }
        };
        let bits = ["", " ", "\t", "\u{1}", "\n", "É", "ſ", "K"];
        let schemes = [
            "javascript:x",
            "vbscript:y",
            "data:text/html,z",
            "data:image/svg+xml,w",
            "data:image/png;base64,v",
            "https://a/",
            "java",
        ];
        let mut tried = 0;
        for scheme in schemes {
            for split in 0..=scheme.len() {
                for (i, bit) in bits.iter().enumerate() {
                    let (head, tail) = scheme.split_at(split);
                    let cased = if i % 2 == 0 {
                        head.to_ascii_uppercase()
                    } else {
                        head.to_string()
                    };
                    let value = format!("{bit}{cased}{bit}{tail}");
                    for image in [false, true] {
                        assert_eq!(one_url(&value, image), copied(&value, image), "{value:?}");
                        tried += 1;
                    }
                }
            }
        }
        assert!(tried > 500);
        assert_eq!(
            one_url(" J\tAVA\u{1}script:x", false),
            Some("a javascript: URL")
        );
        assert_eq!(one_url("ſcript:x", false), None);
    }

    /// Lines of a page, most of them manifest rows, some opening or
    /// closing what a cut must not fall inside (a comment, a quoted
    /// attribute, a tag, a `<style>`, a doctype), some refused.
    const LINES: &[&str] = &[
        "<!-- a comment running on\n",
        "-->\n",
        "<a title=\"a quote left open\n",
        "\">\n",
        "<p\n",
        "class=x>\n",
        "<style>\n",
        "a{background:url(javascript:x)}\n",
        "p{color:red}\n",
        "</style>\n",
        "<!DOCTYPE\n",
        ">\n",
        "<script>1</script>\n",
        "<img src=x onerror=y>\n",
        "<a href=\"javascript:x\">x</a>\n",
        "&amp\n",
        "<x-exhibit-gate-end>\n",
    ];

    /// A row, or one of [`LINES`] about once in `one_in` lines.
    fn line(next: &mut impl FnMut() -> u64, one_in: u64) -> String {
        let n = next();
        if n % (one_in * LINES.len() as u64) < LINES.len() as u64 {
            return LINES[(n % LINES.len() as u64) as usize].to_string();
        }
        format!(
            "<tr><td><a href=\"f{0}.log\">f{0}.log</a></td><td class=\"num\">{1}</td></tr>\n",
            n % 100_000,
            n % 977
        )
    }

    /// The gate a piece at a time, with and without the preview's memory
    /// of pieces, refuses what it refuses read whole: on random pages of
    /// 3 to 6 pieces holding constructs that a cut must not split, then
    /// after edits (a line changed, added, removed) with the memory of the
    /// page before. Pages with those lines close together test reading on
    /// from a piece that ends inside one; pages with few, the memory.
    #[test]
    fn pieces_read_on_their_own_refuse_what_the_whole_page_does() {
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut kept_some = false;
        for page in 0..60 {
            let mut lines: Vec<String> = Vec::new();
            let size = (3 + page % 4) * PIECE;
            let one_in = [2, 40, 3000][page % 3];
            while lines.iter().map(String::len).sum::<usize>() < size {
                lines.push(line(&mut next, one_in));
            }
            let memo = CleanChunks::default();
            for edit in 0..4 {
                if edit > 0 {
                    memo.next_build();
                    let at = (next() % lines.len() as u64) as usize;
                    match edit {
                        1 => lines[at] = line(&mut next, one_in),
                        2 => lines.insert(at, line(&mut next, one_in)),
                        _ => drop(lines.remove(at)),
                    }
                }
                let html: String = lines.concat();
                assert_eq!(
                    check_remembered(&html, &memo),
                    check(&html),
                    "page {page}, edit {edit}"
                );
                kept_some |= memo.known() > 0;
            }
        }
        assert!(kept_some, "no piece was ever kept");
    }
}
