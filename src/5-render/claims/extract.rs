//! Typed figures in a run of prose: the numbers a reader takes for claims,
//! with the precision they are written at. What is not a claim (dates,
//! times, versions, identifiers, numbers inside names, URLs, the
//! `[~…]` marker) is cut out before numbers are looked for.

use crate::error::Lines;
use regex::Regex;
use std::borrow::Cow;
use std::sync::OnceLock;

/// A number typed in a page, as written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Figure {
    /// Byte offset in the page.
    pub(crate) offset: usize,
    pub(crate) line: usize,
    pub(crate) col: usize,
    /// The figure as written (`+33.0%`, `1,324`).
    pub(crate) text: String,
    /// Its digits as an integer at its precision: `149.02` is 14902.
    pub(crate) scaled: u64,
    /// Digits after the decimal point.
    pub(crate) decimals: u32,
    /// Written with `%` (or the first end of a `20.5–26.4%` range).
    pub(crate) percent: bool,
    /// `+`, `-` or none: a signed figure matches only values of its sign.
    pub(crate) sign: Option<char>,
    /// The published name of the file it is typed in, when that is not
    /// the page showing it (campaign.json, a data file).
    pub(crate) file: Option<String>,
}

impl Figure {
    /// The figure's magnitude.
    pub(crate) fn magnitude(&self) -> f64 {
        self.scaled as f64 / 10f64.powi(self.decimals as i32)
    }
}

/// Words after which a number is a version (`CUDA 12.4`, `driver 550`).
const VERSION_WORDS: &str = "CUDA|cuDNN|NCCL|ROCm|Python|PyTorch|torch|Rust|rustc|Ubuntu|Debian|Fedora|kernel|driver|version|release|glibc|GCC|gcc|LLVM|clang|Node|Node\\.js|Go|Java|JDK";

/// Product names after which a number is a model (`RTX 4090`).
const MODEL_WORDS: &str =
    "RTX|GTX|Quadro|Tesla|Radeon|Instinct|Arc|Xeon|EPYC|Ryzen|Threadripper|Snapdragon";

/// Month names, for dates written in words.
const MONTHS: &str = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\\.?";

fn not_claims() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        let pattern = [
            // The marker: `[~149.02]` is quoted, not claimed.
            r"\[~[^\[\]\n]{1,80}\]".to_string(),
            // Link targets written out, autolinks.
            r"[A-Za-z][A-Za-z0-9+.-]*://\S+".to_string(),
            // ISO dates and timestamps, slashed dates.
            r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?".to_string(),
            r"\b\d{4}/\d{1,2}/\d{1,2}\b".to_string(),
            format!(r"\b\d{{1,2}}\s+{MONTHS}(?:\s+\d{{4}})?"),
            format!(r"\b{MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"),
            format!(r"\b{MONTHS}\s+\d{{4}}"),
            // Times of day.
            r"\b\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:\s?[AaPp]\.?[Mm]\.?)?(?:\s?UTC)?".to_string(),
            // Versions: three parts or more, `v1.2`, a product's version.
            r"\bv?\d+(?:\.\d+){2,}(?:[-+][0-9A-Za-z.]+)?".to_string(),
            r"\bv\d+(?:\.\d+)*".to_string(),
            format!(r"\b(?:{VERSION_WORDS})\s+v?\d+(?:\.\d+)*"),
            // Product models: `RTX PRO 6000`, `EPYC 9654`, `Xeon 8480`.
            format!(r"\b(?:{MODEL_WORDS})\s+(?:(?:PRO|Pro|Max|Ultra)\s+)?\d+[A-Za-z]*\b"),
            // Identifiers: `#123`, long digit runs, hex with a letter.
            r"#\d+".to_string(),
            r"\b\d{12,}\b".to_string(),
        ]
        .join("|");
        Regex::new(&pattern).expect("valid not-a-claim pattern")
    })
}

fn number() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"[+\-\x{2212}]?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?:\s?%)?")
            .expect("valid number pattern")
    })
}

/// A unit written against its number (`12ms`, `1.5x`): the number is still
/// a figure. Any other letter makes it part of a name (`4K`, `H100`).
const UNITS: &[&str] = &[
    "x", "ms", "s", "us", "µs", "ns", "GB", "MB", "KB", "kB", "TB", "GiB", "MiB", "KiB", "TiB", "W",
];

/// The figures typed in `s`, a run of a page's source starting at byte
/// `base`. `heading`: `s` opens a heading, whose numbering (`2.`, `3.1`)
/// is not a claim.
pub(crate) fn figures(page: &Lines, s: &str, base: usize, heading: bool) -> Vec<Figure> {
    if !s.bytes().any(|b| b.is_ascii_digit()) {
        return Vec::new();
    }
    // Cut out what is not a claim (blanked with spaces, so offsets hold).
    let mut cut: Vec<_> = not_claims().find_iter(s).map(|m| m.range()).collect();
    if heading {
        static NUMBERING: OnceLock<Regex> = OnceLock::new();
        let re = NUMBERING
            .get_or_init(|| Regex::new(r"^\s*\d+(?:\.\d+)*[.)]?\s").expect("valid pattern"));
        cut.extend(re.find(s).map(|m| m.range()));
    }
    let s = blanked(s, &cut);
    let mut out: Vec<Figure> = Vec::new();
    for whole in number().find_iter(&s) {
        // The match split as the pattern's groups would (found without
        // captures, which cost a slower engine): sign, digits, percent.
        let signed = whole
            .as_str()
            .chars()
            .next()
            .filter(|c| matches!(c, '+' | '-' | '\u{2212}'));
        let num_start = whole.start() + signed.map_or(0, char::len_utf8);
        let pct = whole.as_str().ends_with('%');
        let num_end = if pct {
            num_start + s[num_start..whole.end() - 1].trim_end().len()
        } else {
            whole.end()
        };
        let num = &s[num_start..num_end];
        let mut sign = signed.map(|c| (whole.start(), if c == '+' { '+' } else { '-' }));
        let mut before = s[..whole.start()].chars().next_back();
        if signed == Some('-') && before.is_some_and(|b| b.is_ascii_digit()) {
            // `5-10` is a range, not a negative ten.
            (sign, before) = (None, Some(' '));
        }
        let after = &s[whole.end()..];
        if before.is_some_and(|b| b.is_alphanumeric() || b == '_' || b == '.' || b == '\\') {
            // Inside a name (`GLM-5.3`, `x86_64`) or an escape.
            continue;
        }
        if !ends_cleanly(after)
            || after.starts_with(',') && after[1..].starts_with(char::is_numeric)
        {
            continue;
        }
        let Some((scaled, decimals)) = at_precision(num) else {
            continue;
        };
        let start = sign.map_or(num_start, |(at, _)| at);
        let (line, col) = page.line_col(base + start);
        out.push(Figure {
            offset: base + start,
            line,
            col,
            text: s[start..whole.end()].to_string(),
            scaled,
            decimals,
            percent: pct || range_into_percent(after),
            sign: sign.map(|(_, c)| c),
            file: None,
        });
    }
    out
}

/// The figures typed in a string of a file (`file`): `value` as the file
/// holds it, `typed` the same text with what is not typed (inline
/// references) blanked, written at byte `at` of the file, JSON-quoted
/// (`json`: `at` is the opening quote) or as it is (a CSV field).
pub(crate) fn in_string(
    file: &Lines,
    value: &str,
    typed: &str,
    at: usize,
    json: bool,
) -> Vec<Figure> {
    if !json {
        return figures(file, typed, at, false);
    }
    let text = file.text();
    if text.get(at + 1..at + 1 + value.len()) == Some(value)
        && text[at + 1 + value.len()..].starts_with('"')
    {
        // No escapes: the value's bytes are the file's.
        return figures(file, typed, at + 1, false);
    }
    // Escapes move the figures: each placed where the file spells it,
    // whichever escapes the file chose (`\u00e9` or `é`).
    let Some(spelled_at) = literal_offsets(text, at).filter(|m| m.len() == value.len() + 1) else {
        return Vec::new();
    };
    let mut found = figures(&Lines::new(typed), typed, 0, false);
    for f in &mut found {
        f.offset = spelled_at[f.offset.min(value.len())];
        (f.line, f.col) = file.line_col(f.offset);
    }
    found
}

/// Where each byte of the JSON string literal whose opening quote is at
/// byte `quote` of `text` is spelled: for each byte of its value, the
/// offset of the character or escape it came from, then the closing
/// quote's. `None` if no literal starts there.
pub(crate) fn literal_offsets(text: &str, quote: usize) -> Option<Vec<usize>> {
    let bytes = text.as_bytes();
    if bytes.get(quote) != Some(&b'"') {
        return None;
    }
    let mut out = Vec::new();
    let mut i = quote + 1;
    loop {
        match *bytes.get(i)? {
            b'"' => {
                out.push(i);
                return Some(out);
            }
            b'\\' => {
                let (c, len) = escape(&text[i..])?;
                out.extend(std::iter::repeat_n(i, c.len_utf8()));
                i += len;
            }
            _ => {
                let c = text[i..].chars().next()?;
                out.extend(std::iter::repeat_n(i, c.len_utf8()));
                i += c.len_utf8();
            }
        }
    }
}

/// The character a JSON escape at the start of `s` stands for, and the
/// escape's length (`\n` 2, `\u00e9` 6, a surrogate pair 12).
fn escape(s: &str) -> Option<(char, usize)> {
    let b = s.as_bytes();
    let simple = match *b.get(1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let unit = |at: usize| u32::from_str_radix(s.get(at..at + 4)?, 16).ok();
            let hi = unit(2)?;
            if (0xD800..0xDC00).contains(&hi) && s.get(6..8) == Some("\\u") {
                let lo = unit(8)?;
                let c =
                    char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo.checked_sub(0xDC00)?))?;
                return Some((c, 12));
            }
            return Some((char::from_u32(hi)?, 6));
        }
        _ => return None,
    };
    Some((simple, 2))
}

/// The opening quote of the string value `value` of a `"key":` at or after
/// byte `from` of the JSON `text`, whichever escapes spell it.
pub(crate) fn literal_of(text: &str, key: &str, value: &str, from: usize) -> Option<usize> {
    let name = format!("\"{key}\"");
    let mut at = from;
    while let Some(i) = text.get(at..)?.find(&name) {
        let after = at + i + name.len();
        at = after;
        let rest = text[after..].trim_start();
        let Some(rest) = rest.strip_prefix(':') else {
            continue;
        };
        let quote = text.len() - rest.trim_start().len();
        let Some(end) = literal_offsets(text, quote).and_then(|m| m.last().copied()) else {
            continue;
        };
        if serde_json::from_str::<String>(&text[quote..=end])
            .ok()
            .as_deref()
            == Some(value)
        {
            return Some(quote);
        }
    }
    None
}

/// `s` spelled as a JSON string the way writers that keep to ASCII spell
/// it (Python's `json.dump`): every character beyond ASCII as `\uXXXX`.
pub(crate) fn ascii_json(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let quoted = serde_json::to_string(s).unwrap_or_default();
    for c in quoted.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    out
}

/// `s` with each of the `cut` ranges (on character boundaries) blanked
/// with spaces, in one pass.
fn blanked<'s>(s: &'s str, cut: &[std::ops::Range<usize>]) -> Cow<'s, str> {
    if cut.is_empty() {
        return Cow::Borrowed(s);
    }
    let mut bytes = s.as_bytes().to_vec();
    for r in cut {
        bytes[r.clone()].fill(b' ');
    }
    // Whole characters became ASCII spaces: still UTF-8.
    Cow::Owned(
        String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
    )
}

/// A number as the pattern matched it (digits, thousands commas, one
/// decimal point) as an integer at its precision, and its decimals:
/// `1,324.50` is (132450, 2). `None` past `u64`, or with a digit other
/// than ASCII.
fn at_precision(num: &str) -> Option<(u64, u32)> {
    let (mut scaled, mut decimals, mut point) = (0u64, 0u32, false);
    for b in num.bytes() {
        match b {
            b'0'..=b'9' => {
                scaled = scaled.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
                decimals += u32::from(point);
            }
            b'.' => point = true,
            b',' => {}
            // A digit of another script (`\d` matches them): not read.
            _ => return None,
        }
    }
    Some((scaled, decimals))
}

/// What follows a number leaves it a figure: no letter or digit stuck to
/// it, save a unit.
fn ends_cleanly(after: &str) -> bool {
    let mut chars = after.chars();
    match chars.next() {
        None => true,
        Some('.') => !chars.next().is_some_and(|c| c.is_alphanumeric()),
        Some(c) if c.is_alphanumeric() || c == '_' => {
            let word: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            UNITS.contains(&word.as_str())
        }
        Some(_) => true,
    }
}

/// `20.5–26.4%`: the range's first end is a percent too.
fn range_into_percent(after: &str) -> bool {
    // What the pattern starts with, after one optional white space: most
    // figures are followed by none of it.
    let mut chars = after.chars();
    let first = chars.next();
    let second = first.filter(|c| c.is_whitespace()).and(chars.next());
    let starts = |c: Option<char>| matches!(c, Some('-' | '\u{2013}' | '\u{2014}' | 't' | 'a'));
    (starts(first) || starts(second)) && range_pattern().is_match(after)
}

fn range_pattern() -> &'static Regex {
    static RANGE: OnceLock<Regex> = OnceLock::new();
    RANGE.get_or_init(|| {
        Regex::new(r"^\s?(?:[\-\x{2013}\x{2014}]|to|and)\s?[+\-\x{2212}]?\d[\d,]*(?:\.\d+)?\s?%")
            .expect("valid range pattern")
    })
}

/// A template's text with its `{…}` placeholders blanked (offsets kept),
/// so only what was typed around them is looked into.
pub(crate) fn typed_text(template: &str) -> String {
    static SLOT: OnceLock<Regex> = OnceLock::new();
    let re = SLOT.get_or_init(|| Regex::new(r"\{[^{}]*\}").expect("valid slot pattern"));
    re.replace_all(template, |c: &regex::Captures| " ".repeat(c[0].len()))
        .into_owned()
}

/// The white-space-delimited word of `page` around byte `offset`.
/// A word longer than [`WORD_REACH`] bytes either side is cut there (so a
/// page with no white space costs no more than one with some): the output
/// gate still scans every published byte.
pub(crate) fn word_at(page: &str, offset: usize) -> &str {
    let from = floor_boundary(page, offset.saturating_sub(WORD_REACH));
    let to = floor_boundary(page, (offset + WORD_REACH).min(page.len()));
    let start = page[from..offset]
        .rfind(char::is_whitespace)
        .map_or(from, |i| from + i + 1);
    let end = page[offset..to]
        .find(char::is_whitespace)
        .map_or(to, |i| offset + i);
    &page[start..end]
}

/// How far [`word_at`] looks for the ends of a word.
const WORD_REACH: usize = 256;

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The page text as shown: each `[~FIGURE]` marker becomes `FIGURE`.
pub(crate) fn unmark(s: &str) -> std::borrow::Cow<'_, str> {
    static MARK: OnceLock<Regex> = OnceLock::new();
    // Most text holds no marker: not worth a regex search each.
    if !s.contains("[~") {
        return std::borrow::Cow::Borrowed(s);
    }
    let re = MARK.get_or_init(|| Regex::new(r"\[~([^\[\]\n]{1,80})\]").expect("valid marker"));
    re.replace_all(s, "$1")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(s: &str) -> Vec<String> {
        figures(&Lines::new(s), s, 0, false)
            .into_iter()
            .map(|f| f.text)
            .collect()
    }

    #[test]
    fn claims_and_not_claims() {
        assert_eq!(texts("rose by 33.0% to 149.02 tok/s"), ["33.0%", "149.02"]);
        assert_eq!(
            texts("passed 128/150, 1,324 tokens"),
            ["128", "150", "1,324"]
        );
        assert_eq!(texts("on 2026-05-14 at 14:30 UTC"), Vec::<String>::new());
        assert_eq!(texts("v1.2.3, 0.22.1 and CUDA 12.4"), Vec::<String>::new());
        assert_eq!(texts("2x RTX PRO 6000, an RTX 4090 and EPYC 9654"), ["2"]);
        assert_eq!(
            texts("GLM-5.3 on an H100, x86_64, 4K"),
            Vec::<String>::new()
        );
        assert_eq!(texts("a quoted [~149.02] figure"), Vec::<String>::new());
        assert_eq!(
            texts("see https://x.org/1/2 and #123"),
            Vec::<String>::new()
        );
        assert_eq!(texts("-9.4% and +0.0%, 12ms"), ["-9.4%", "+0.0%", "12"]);
    }

    /// Digits as an integer at their precision, as parsing the text
    /// without its commas and point did.
    #[test]
    fn numbers_scaled() {
        assert_eq!(at_precision("1,324.50"), Some((132450, 2)));
        assert_eq!(at_precision("0.0"), Some((0, 1)));
        assert_eq!(at_precision("18446744073709551615"), Some((u64::MAX, 0)));
        assert_eq!(at_precision("18446744073709551616"), None);
        assert_eq!(at_precision("\u{661}\u{662}"), None);
        // A number in other digits is no figure.
        assert_eq!(texts("\u{661}\u{662} and 3"), ["3"]);
    }

    /// The quick look at what follows a figure agrees with the pattern.
    #[test]
    fn range_ends_told_as_the_pattern_tells_them() {
        let afters = [
            "",
            "%",
            "–26.4%",
            " – 26.4 %",
            "-5%",
            " -5%",
            "  -5%",
            "to 30%",
            " to 30%",
            "and 1,000.5%",
            "\u{a0}to 3%",
            "\u{2003}\u{2014}3%",
            "\t—3%",
            "tons",
            " apples",
            "x",
            "–",
            " to x%",
            "—\u{2212}3%",
        ];
        for after in afters {
            assert_eq!(
                range_into_percent(after),
                range_pattern().is_match(after),
                "{after:?}"
            );
        }
        assert!(range_into_percent(" to 30%") && range_into_percent("\u{a0}to 3%"));
    }

    #[test]
    fn precision_and_ranges() {
        let f = figures(&Lines::new("20.5–26.4%"), "20.5–26.4%", 0, false);
        assert!(f[0].percent && f[1].percent);
        assert_eq!((f[0].scaled, f[0].decimals), (205, 1));
        let h = figures(
            &Lines::new("2. Setup of 3 runs"),
            "2. Setup of 3 runs",
            0,
            true,
        );
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].text, "3");
    }

    #[test]
    fn unmarked_for_the_page() {
        assert_eq!(unmark("quoted [~149.02] here"), "quoted 149.02 here");
    }

    #[test]
    fn figures_in_strings_are_placed_whatever_the_escapes() {
        let value = "a \u{e9} \"quoted\" 12.5 and \u{1f600} 7.25";
        for spelled in [serde_json::to_string(value).unwrap(), ascii_json(value)] {
            let text = format!("{{\n  \"summary\": {spelled}\n}}");
            let lines = Lines::new(&text);
            let at = literal_of(&text, "summary", value, 0).unwrap();
            assert_eq!(&text[at..at + 1], "\"");
            let found = in_string(&lines, value, value, at, true);
            let texts: Vec<&str> = found.iter().map(|f| f.text.as_str()).collect();
            assert_eq!(texts, ["12.5", "7.25"]);
            for f in &found {
                assert!(text[f.offset..].starts_with(&f.text), "{spelled}: {f:?}");
                assert_eq!((f.line, f.col), crate::error::line_col(&text, f.offset));
            }
        }
        assert_eq!(ascii_json("\u{e9}\u{1f600}"), "\"\\u00e9\\ud83d\\ude00\"");
    }
}
