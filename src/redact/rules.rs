//! The built-in detectors: one byte-oriented regex holding every rule as a
//! named alternative, and the checks a regex cannot express (address ranges,
//! the context of a match). A candidate the checks reject is not a finding.

use super::Category;
use regex::bytes::{Captures, Regex, RegexBuilder};
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;

/// A secret value: not a placeholder (`[x]`, `<x>`, `$X`, `***`), at least
/// six bytes, ending before quotes, separators or brackets.
const VAL: &str = r#"[^\s"'`,;&<>\[\]{}()$*%\\][^\s"'`,;&<>\[\]{}()\\]{5,}"#;
/// One path component of a user name.
const NAME: &str = r#"[^\s/\\"'`<>|:;,()\[\]{}*?]+"#;
/// The rest of a path, up to whitespace, quotes or brackets.
const REST: &str = r#"[^\s"'`<>|;,()\[\]{}*?]*"#;
pub(super) const KEYS: &str = "password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|signing[_-]?key|credentials?";

/// The source of the built-in pattern (also printed by `exhibit scan
/// --print-pattern`, so a benchmark can hand ripgrep the same rules).
pub fn pattern() -> String {
    let alternatives = [
        // PEM private keys: the whole block, or the header and its base64
        // lines when the end marker is missing.
        r"(?P<pem>-----BEGIN[A-Z ]{0,24}PRIVATE KEY-----(?:(?s:.)*?-----END[A-Z ]{0,24}PRIVATE KEY-----|(?:\r?\n[A-Za-z0-9+/=]+)*))".to_string(),
        format!(r#"(?P<auth>(?i:authorization|x-api-key|x-auth-token)["']?\s*[:=]\s*["']?(?:(?i:bearer|basic|token|digest)\s+)?(?P<authv>{VAL}))"#),
        format!(r"(?P<bearer>\b(?i:bearer)\s+(?P<bearerv>{VAL}))"),
        format!(r#"(?P<flag>--(?i:[a-z0-9-]*(?:password|passwd|secret|token|api-key|apikey|access-key|secret-key))(?:\s+|=)(?P<flagv>{VAL}))"#),
        format!(r#"(?P<kv>(?P<kvk>\b(?i:[a-z0-9_.-]*(?:{KEYS})))["']?\s*[:=]\s*["']?(?P<kvv>{VAL}))"#),
        r"(?P<tok>\b(?:sk-(?:proj-|ant-|live-|test-|svcacct-)?[A-Za-z0-9_-]{20,}|hf_[A-Za-z0-9]{30,}|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}|(?:AKIA|ASIA)[A-Z0-9]{16}|xox[abposr]-[A-Za-z0-9-]{10,}|eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})\b)".to_string(),
        r"(?P<gpu>\b(?i:mig-gpu-|mig-|gpu-)[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{1,12}){0,4}(?:/[0-9]{1,2}/[0-9]{1,2})?\b)".to_string(),
        // file://server/share/... and file://wsl.localhost/...: UNC paths
        // as URLs (file:///home/... is left to the path rules below).
        format!(r"(?P<fileunc>\b(?i:file)://(?P<fuhost>[A-Za-z0-9_-]+(?:[.$][A-Za-z0-9_-]*)*)/{NAME}{REST})"),
        // URLs with userinfo, and URLs whose host is a single label
        // (`http://gpu-node-07:8000/`). Addresses and private names in other
        // URLs are found by the rules below, so public URLs never match.
        r#"(?P<url>\b[A-Za-z][A-Za-z0-9+.-]{1,15}://(?:(?P<urluser>[^\s/@"'`<>\[\]:]+:[^\s/@"'`<>\[\]]*)@(?P<urlhost>\[[0-9A-Fa-f:.]+(?:%[A-Za-z0-9]+)?\]|[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?)(?::(?P<urlport>[0-9]{1,5}))?|(?P<ulabel>[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?)(?::(?P<uport>[0-9]{1,5}))?(?:[/?#"'`<>()\[\]\s,;!]|\.(?:[^A-Za-z0-9_-]|\z)|\z)))"#.to_string(),
        format!(r"(?P<upath>(?:/(?:home|Users)/{NAME}|/root\b|/mnt/[A-Za-z]/(?i:users)/{NAME})(?:[/\\]{REST})?)"),
        format!(r"(?P<wpath>\b[A-Za-z]:(?:\\\\?|/)(?i:users)(?:\\\\?|/){NAME}{REST})"),
        format!(r"(?P<unc>\\\\(?:\\\\)?[A-Za-z0-9$._-]+\\\\?{NAME}{REST})"),
        r"(?P<ip6>\[?(?:\b(?i:f[cd][0-9a-f]{2}|fe[89ab][0-9a-f]):[0-9A-Fa-f:.]*[0-9A-Fa-f]|::(?i:ffff):[0-9A-Fa-f.:]*[0-9A-Fa-f]|\b(?:0{1,4}:){5}(?i:ffff):[0-9A-Fa-f.:]*[0-9A-Fa-f])(?:%[A-Za-z0-9]+)?\]?(?::[0-9]{1,5}\b)?)".to_string(),
        // Only the private ranges: public addresses and most version
        // numbers never become candidates.
        r"(?P<ip4>\b(?:10\.[0-9]{1,3}|172\.(?:1[6-9]|2[0-9]|3[01])|192\.168|169\.254|100\.(?:6[4-9]|[7-9][0-9]|1[01][0-9]|12[0-7]))\.[0-9]{1,3}\.[0-9]{1,3}\b(?::[0-9]{1,5}\b)?)".to_string(),
        r"(?P<host>\b(?i:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*\.(?:internal|local|lan|home\.arpa|corp|intranet))\b(?::[0-9]{1,5}\b)?)".to_string(),
        r"(?P<hp>\b(?i:[a-z][a-z0-9]*[0-9][a-z0-9]*(?:-[a-z0-9]+)*|[a-z][a-z0-9]*(?:-[a-z0-9]+)+):[1-9][0-9]{1,4}\b)".to_string(),
    ];
    format!("(?-u){}", alternatives.join("|"))
}

pub fn builtin() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        RegexBuilder::new(&pattern())
            .size_limit(64 << 20)
            .dfa_size_limit(64 << 20)
            .build()
            .expect("the built-in redaction pattern compiles")
    })
}

/// A span to replace, found by a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub start: usize,
    pub end: usize,
    pub category: Category,
    /// The value as it identifies itself: same key, same placeholder.
    pub key: String,
}

/// Could [`find`] report anything in `text`? `false` is certain; `true`
/// means a rule's pattern matches somewhere (its checks may still refuse).
pub fn any_candidate(text: &[u8]) -> bool {
    builtin().is_match(text)
}

/// Every hit of the built-in rules in `text`, in order.
pub fn find(text: &[u8], out: &mut Vec<Hit>) {
    let re = builtin();
    let mut at = 0;
    while at <= text.len() {
        let Some(caps) = re.captures_at(text, at) else {
            break;
        };
        let m = caps.get(0).expect("group 0 always matches");
        let before = out.len();
        classify(text, &caps, out);
        at = if out.len() > before {
            // Go on after the last value taken: a rule may consume a
            // terminator (the `/` after `http://gpu-node-07`).
            out.last().map_or(m.end(), |h| h.end).max(m.start() + 1)
        } else if m.end() == m.start() {
            m.start() + 1
        } else {
            // Rejected: look again from the next byte, so a rule that
            // matched inside this candidate is not shadowed by it.
            m.start() + 1
        };
    }
}

fn classify(text: &[u8], caps: &Captures, out: &mut Vec<Hit>) {
    let m = caps.get(0).expect("group 0 always matches");
    let (start, end) = (m.start(), m.end());
    let s = |a: usize, b: usize| String::from_utf8_lossy(&text[a..b]).into_owned();
    let mut push = |start: usize, end: usize, category: Category, key: String| {
        out.push(Hit {
            start,
            end,
            category,
            key,
        })
    };
    if caps.name("pem").is_some() || caps.name("tok").is_some() {
        push(start, end, Category::Credential, s(start, end));
    } else if let Some(v) = ["authv", "bearerv", "flagv", "kvv"]
        .iter()
        .find_map(|g| caps.name(g))
    {
        if caps
            .name("kvk")
            .is_some_and(|k| not_a_secret_key(k.as_bytes()))
            || not_a_secret_value(v.as_bytes())
        {
            return;
        }
        push(
            v.start(),
            v.end(),
            Category::Credential,
            s(v.start(), v.end()),
        );
    } else if caps.name("gpu").is_some() {
        push(
            start,
            end,
            Category::GpuUuid,
            s(start, end).to_ascii_lowercase(),
        );
    } else if let Some(label) = caps.name("ulabel") {
        let stop = caps.name("uport").map_or(label.end(), |p| p.end());
        if !label.as_bytes().eq_ignore_ascii_case(b"localhost") {
            push(
                label.start(),
                stop,
                Category::Endpoint,
                s(label.start(), stop).to_ascii_lowercase(),
            );
        }
    } else if let Some(host) = caps.name("urlhost") {
        if let Some(user) = caps.name("urluser") {
            if user.as_bytes().contains(&b':') {
                let u = s(user.start(), user.end());
                push(user.start(), user.end(), Category::Credential, u);
            }
        }
        let h = s(host.start(), host.end());
        let bare = h.trim_start_matches('[').trim_end_matches(']');
        let single_label = !bare.contains(['.', ':']) && !bare.eq_ignore_ascii_case("localhost");
        if single_label || private_host(bare) {
            let stop = caps.name("urlport").map_or(host.end(), |p| p.end());
            push(
                host.start(),
                stop,
                Category::Endpoint,
                s(host.start(), stop).to_ascii_lowercase(),
            );
        }
    } else if let Some(host) = caps.name("fuhost") {
        let path = &text[host.end()..end];
        let user_path = [&b"/home/"[..], b"/Users/", b"/root", b"/mnt/"]
            .iter()
            .any(|p| path.starts_with(p))
            || path
                .get(2..10)
                .is_some_and(|p| p.eq_ignore_ascii_case(b":/users/"));
        if !host.as_bytes().eq_ignore_ascii_case(b"localhost") || user_path {
            let end = trim_path_end(text, start, end);
            push(start, end, Category::HostPath, s(start, end));
        }
    } else if caps.name("upath").is_some()
        || caps.name("wpath").is_some()
        || caps.name("unc").is_some()
    {
        // `\\?\C:\Users\...` (an extended-length path) is still a path.
        let extended = text[..start].ends_with(br"?\");
        if caps.name("upath").is_none()
            && !extended
            && start > 0
            && matches!(text[start - 1], b':' | b'\\')
        {
            return;
        }
        if start > 0
            && !extended
            && (text[start - 1].is_ascii_alphanumeric() || b"_.~-".contains(&text[start - 1]))
        {
            return;
        }
        let end = trim_path_end(text, start, end);
        push(
            start,
            end,
            Category::HostPath,
            s(start, end).replace("\\\\", "\\"),
        );
    } else if caps.name("ip6").is_some() {
        if private_ipv6_text(&s(start, end)) {
            push(
                start,
                end,
                Category::Endpoint,
                s(start, end).to_ascii_lowercase(),
            );
        }
    } else if caps.name("ip4").is_some() {
        let t = s(start, end);
        let addr = t.split(':').next().unwrap_or("");
        let dotted_on = end < text.len() - 1 && text[end] == b'.' && text[end + 1].is_ascii_digit();
        let after_dot = start > 0 && text[start - 1] == b'.';
        if dotted_on || after_dot || version_context(&text[..start]) {
            return;
        }
        if addr.parse::<Ipv4Addr>().is_ok_and(private_v4) {
            push(start, end, Category::Endpoint, t);
        }
    } else if caps.name("host").is_some() {
        let t = s(start, end);
        let lower = t.to_ascii_lowercase();
        let name = lower.split(':').next().unwrap_or("");
        let ambiguous = name.ends_with(".local") || name.ends_with(".lan");
        let prev = start.checked_sub(1).map(|i| text[i]);
        let in_url = text[..start].ends_with(b"://") || prev == Some(b'@');
        // `foo.corp.example.com` is a public name with `corp` inside it.
        let after = start + name.len();
        if text.get(after) == Some(&b'.')
            && text.get(after + 1).is_some_and(u8::is_ascii_alphanumeric)
        {
            return;
        }
        if ambiguous
            && !in_url
            && (continues(text, start + name.len()) || matches!(prev, Some(b'.' | b'/' | b'\\')))
        {
            return;
        }
        push(start, end, Category::Endpoint, lower);
    } else if caps.name("hp").is_some() {
        let t = s(start, end);
        let (label, port) = t.split_once(':').unwrap_or((&t, ""));
        let hostish = label.contains('-') || label.bytes().any(|b| b.is_ascii_digit());
        let prev = start.checked_sub(1).map(|i| text[i]);
        let port_ok = port.parse::<u32>().is_ok_and(|p| p <= 65535);
        if !hostish
            || !port_ok
            || label.eq_ignore_ascii_case("localhost")
            || matches!(prev, Some(b'/' | b'.' | b'@' | b':' | b'-' | b'_' | b'\\'))
            || continues(text, end)
            || text.get(end) == Some(&b':')
        {
            return;
        }
        push(start, end, Category::Endpoint, t.to_ascii_lowercase());
    }
}

/// Does a name go on past `at` (`.json`, `-v2`)?
fn continues(text: &[u8], at: usize) -> bool {
    matches!(text.get(at), Some(b'.' | b'-' | b'_'))
        && text.get(at + 1).is_some_and(|b| b.is_ascii_alphanumeric())
}

/// Drop trailing sentence punctuation from a path, and a lone backslash
/// that escapes a closing quote (`"C:\\Users\\x\""` stays valid JSON).
fn trim_path_end(text: &[u8], start: usize, mut end: usize) -> usize {
    while end > start + 1 && b".,:;!?".contains(&text[end - 1]) {
        end -= 1;
    }
    let slashes = text[start..end]
        .iter()
        .rev()
        .take_while(|&&b| b == b'\\')
        .count();
    if slashes % 2 == 1 && text.get(end) == Some(&b'"') {
        end -= 1;
    }
    end
}

/// Keys that end in `token` but name no secret (`max_tokens` never matches;
/// these do: `eos_token`, `pad_token`...).
fn not_a_secret_key(key: &[u8]) -> bool {
    let k = String::from_utf8_lossy(key).to_ascii_lowercase();
    let k = k.trim_start_matches(['_', '.', '-']);
    [
        "eos",
        "bos",
        "pad",
        "unk",
        "sep",
        "cls",
        "mask",
        "special",
        "max",
        "num",
        "total",
        "prompt",
        "completion",
    ]
    .iter()
    .any(|p| k.starts_with(p) && k.ends_with("token"))
}

/// Values that are plainly not secrets: numbers, booleans, words that stand
/// in for a secret.
fn not_a_secret_value(v: &[u8]) -> bool {
    let v = String::from_utf8_lossy(v).to_ascii_lowercase();
    v.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        || v.bytes().all(|b| b == b'x' || b == b'*' || b == b'.')
        || [
            "required", "optional", "redacted", "removed", "hidden", "masked", "none", "null",
            "true", "false", "unset", "example", "bearer", "basic", "digest", "token",
        ]
        .contains(&v.trim_end_matches(['.', ')']))
}

/// `version 10.0.0.1`, `driver: 10.2.0.1`, `TensorRT 10.3.0.26`,
/// `tensorrt==10.3.0.26`, `v10.0.0.1`: a version, not an address.
fn version_context(before: &[u8]) -> bool {
    const WORDS: &[&str] = &[
        "version",
        "ver",
        "driver",
        "build",
        "release",
        "rev",
        "revision",
        "firmware",
        "vbios",
        "v",
        "cuda",
        "cudnn",
        "tensorrt",
        "trt",
        "nccl",
        "cublas",
        "rocm",
        "triton",
        "torch",
        "pytorch",
        "python",
        "kernel",
        "linux",
        "windows",
        "win",
        "ubuntu",
        "debian",
        "onnxruntime",
        "openvino",
        "jdk",
        "java",
        "llvm",
        "clang",
    ];
    let tail = &before[before.len().saturating_sub(32)..];
    let t = String::from_utf8_lossy(tail).to_ascii_lowercase();
    if ["==", ">=", "<=", "~=", "!="]
        .iter()
        .any(|op| t.ends_with(op))
    {
        return true;
    }
    let t = t.trim_end_matches([' ', ':', '=', '"', '\'', '\t', '-', '_']);
    let word = t
        .rsplit(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap_or("");
    WORDS.contains(&word)
}

fn private_v4(a: Ipv4Addr) -> bool {
    let [x, y, ..] = a.octets();
    x == 10
        || (x == 172 && (16..=31).contains(&y))
        || (x == 192 && y == 168)
        || (x == 169 && y == 254)
        || (x == 100 && (64..=127).contains(&y))
}

fn private_v6(a: Ipv6Addr) -> bool {
    if let Some(v4) = a.to_ipv4_mapped() {
        return private_v4(v4);
    }
    let s0 = a.segments()[0];
    (s0 & 0xfe00) == 0xfc00 || (s0 & 0xffc0) == 0xfe80
}

/// `[fd00::1]:8000`, `fe80::1%eth0`, `::ffff:10.0.0.1` as matched.
fn private_ipv6_text(t: &str) -> bool {
    let mut a = t.trim_start_matches('[');
    if let Some(close) = a.find(']') {
        a = &a[..close];
    }
    let a = a.split('%').next().unwrap_or("");
    a.parse::<Ipv6Addr>().is_ok_and(private_v6)
}

/// A host name or address (no port) that names something private.
pub fn private_host(h: &str) -> bool {
    if let Ok(a) = h.parse::<Ipv4Addr>() {
        return private_v4(a);
    }
    if h.contains(':') {
        return private_ipv6_text(h);
    }
    let l = h.to_ascii_lowercase();
    [
        ".internal",
        ".local",
        ".lan",
        ".home.arpa",
        ".corp",
        ".intranet",
    ]
    .iter()
    .any(|s| l.ends_with(s))
}
