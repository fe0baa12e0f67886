//! The built-in detectors: every rule a byte-oriented pattern with a named
//! group, searched as one alternation (the first rule to match where a
//! match begins wins), each candidate's groups taken by the rule that
//! matched; and the checks a regex cannot express (address ranges, the
//! context of a match). A candidate the checks reject is not a finding.

use super::Category;
use regex::bytes::{Captures, Match, Regex, RegexBuilder};
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
/// --print-pattern`, so a benchmark can hand ripgrep the same rules): every
/// rule of [`alternatives`], in order, as one alternation.
pub(crate) fn pattern() -> String {
    format!("(?-u){}", alternatives().join("|"))
}

/// How many rules [`alternatives`] holds.
const RULES: usize = 22;

/// The rules, each a pattern of its own, in the order the built-in
/// pattern tries them (the first that matches where a match begins wins).
fn alternatives() -> [String; RULES] {
    [
        // PEM private keys: the whole block, or the header and its base64
        // lines when the end marker is missing.
        r"(?P<pem>-----BEGIN[A-Z ]{0,24}PRIVATE KEY-----(?:(?s:.)*?-----END[A-Z ]{0,24}PRIVATE KEY-----|(?:\r?\n[A-Za-z0-9+/=]+)*))".to_string(),
        format!(r#"(?P<auth>(?i:authorization|x-api-key|x-auth-token)["']?\s*[:=]\s*["']?(?:(?i:bearer|basic|token|digest)\s+)?(?P<authv>{VAL}))"#),
        format!(r"(?P<bearer>\b(?i:bearer)\s+(?P<bearerv>{VAL}))"),
        format!(r#"(?P<flag>--(?i:[a-z0-9-]*(?:password|passwd|secret|token|api-key|apikey|access-key|secret-key))(?:\s+|=)(?P<flagv>{VAL}))"#),
        format!(r#"(?P<kv>(?P<kvk>\b(?i:[a-z0-9_.-]*(?:{KEYS})))["']?\s*[:=]\s*["']?(?P<kvv>{VAL}))"#),
        // Token formats as their issuers document them (gitleaks' rule
        // list is the index): GitLab, npm, Google, Stripe secret and
        // restricted keys (not the publishable `pk_`), Slack webhooks.
        r"(?P<tok>\b(?:sk-(?:proj-|ant-|live-|test-|svcacct-)?[A-Za-z0-9_-]{20,}|glpat-[A-Za-z0-9_-]{20,}(?:\.[0-9a-z]{2}\.[0-9a-z]{9})?|npm_[A-Za-z0-9]{36}|AIza[0-9A-Za-z_-]{35}|[sr]k_(?:live|test)_[0-9A-Za-z]{10,}|hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}|hf_[A-Za-z0-9]{30,}|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}|(?:AKIA|ASIA)[A-Z0-9]{16}|xox[abposr]-[A-Za-z0-9-]{10,}|eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})\b)".to_string(),
        r"(?P<gpu>\b(?i:mig-gpu-|mig-|gpu-)[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{1,12}){0,4}(?:/[0-9]{1,2}/[0-9]{1,2})?\b)".to_string(),
        // A plain UUID where a GPU's is printed: CUDA's `uuid=...`,
        // `GPU UUID: ...`, `NVIDIA_VISIBLE_DEVICES=...`.
        r#"(?P<uuidk>\b(?i:(?:gpu|device|cuda|nvidia)[ _-]?)?(?i:uuid|visible_devices)["']?\s*[:=]\s*["']?(?P<uuidv>[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12})\b)"#.to_string(),
        // `curl -u user:password`, `--user user:password`.
        r#"(?P<curlu>(?:\s|\A)(?:-u|--user)(?:\s+|=)["']?(?P<curluv>[^\s"'`:]*:[^\s"'`]+))"#.to_string(),
        // known_hosts lines: the hashed host field, or the plain names and
        // addresses before the key type.
        r"(?P<kh>(?m:^)(?P<khhost>\|1\|[A-Za-z0-9+/=]+\|[A-Za-z0-9+/=]+|[^\s#|@][^\s]*)[ \t]+(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp(?:256|384|521)|sk-ssh-ed25519@openssh\.com|sk-ecdsa-sha2-nistp256@openssh\.com)[ \t]+AAAA[A-Za-z0-9+/]+=*)".to_string(),
        r"(?P<mac>\b[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){5}\b|\b[0-9A-Fa-f]{2}(?:-[0-9A-Fa-f]{2}){5}\b)".to_string(),
        r"(?P<email>\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b)".to_string(),
        // An address written with dashes in a host name (`ip-10-0-0-27`,
        // `10-0-0-27.ns.pod.cluster.local`).
        r"(?P<ipdash>\b(?:ip-)?[0-9]{1,3}-[0-9]{1,3}-[0-9]{1,3}-[0-9]{1,3}\b)".to_string(),
        // file://server/share/... and file://wsl.localhost/...: UNC paths
        // as URLs (file:///home/... is left to the path rules below).
        format!(r"(?P<fileunc>\b(?i:file)://(?P<fuhost>[A-Za-z0-9_-]+(?:[.$][A-Za-z0-9_-]*)*)/{NAME}{REST})"),
        // URLs with userinfo, and URLs whose host is a single label
        // (`http://gpu-node-07:8000/`). Addresses and private names in other
        // URLs are found by the rules below, so public URLs never match.
        r#"(?P<url>\b[A-Za-z][A-Za-z0-9+.-]{1,15}://(?:(?P<urluser>[^\s/@"'`<>\[\]:]*:[^\s/@"'`<>\[\]]*|[A-Za-z0-9_.~-]+)@(?P<urlhost>\[[0-9A-Fa-f:.]+(?:%[A-Za-z0-9]+)?\]|[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?)(?::(?P<urlport>[0-9]{1,5}))?|(?P<ulabel>[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?)(?::(?P<uport>[0-9]{1,5}))?(?:[/?#"'`<>()\[\]\s,;!]|\.(?:[^A-Za-z0-9_-]|\z)|\z)))"#.to_string(),
        format!(r"(?P<upath>(?:(?:/(?:var|data|export|nfs|srv|scratch))?/(?:home|Users)/{NAME}|/tmp/pytest-of-{NAME}|~[A-Za-z_][A-Za-z0-9_.-]*/{NAME}|/root\b|/mnt/[A-Za-z]/(?i:users)/{NAME})(?:[/\\]{REST})?)"),
        format!(r"(?P<wpath>\b[A-Za-z]:(?:\\\\?|/)(?i:users)(?:\\\\?|/){NAME}{REST})"),
        format!(r"(?P<unc>\\\\(?:\\\\)?[A-Za-z0-9$._-]+\\\\?{NAME}{REST})"),
        r"(?P<ip6>\[?(?:\b(?i:f[cd][0-9a-f]{2}|fe[89ab][0-9a-f]):[0-9A-Fa-f:.]*[0-9A-Fa-f]|::(?i:ffff):[0-9A-Fa-f.:]*[0-9A-Fa-f]|\b(?:0{1,4}:){5}(?i:ffff):[0-9A-Fa-f.:]*[0-9A-Fa-f])(?:%[A-Za-z0-9]+)?\]?(?::[0-9]{1,5}\b)?)".to_string(),
        // Only the private ranges: public addresses and most version
        // numbers never become candidates.
        r"(?P<ip4>(?:\b|_)(?:0{0,2}10\.[0-9]{1,3}|0?172\.0?(?:1[6-9]|2[0-9]|3[01])|0?192\.168|0?169\.254|0?100\.0?(?:6[4-9]|[7-9][0-9]|1[01][0-9]|12[0-7]))\.[0-9]{1,3}\.[0-9]{1,3}(?::[0-9]{1,5}\b)?)".to_string(),
        r"(?P<host>(?:\b|_)(?i:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*\.(?:internal|local|lan|home\.arpa|corp|intranet))\b(?::[0-9]{1,5}\b)?)".to_string(),
        r"(?P<hp>\b(?i:[a-z][a-z0-9]*[0-9][a-z0-9]*(?:-[a-z0-9]+)*|[a-z][a-z0-9]*(?:-[a-z0-9]+)+):[1-9][0-9]{1,4}\b)".to_string(),
    ]
}

/// The built-in pattern's rules as one search that says which of them
/// matched, and each rule as a regex of its own: a candidate's groups are
/// those of the rule that matched, taken by that rule's regex alone (the
/// whole pattern's captures tried every rule at each byte of the match,
/// four times the cost of a candidate). The search is the built-in
/// pattern's: the leftmost match, and where several rules match there,
/// the first rule, as the alternation would.
struct Rules {
    /// Which rule matched where (no groups but the whole match's).
    which: regex_automata::meta::Regex,
    /// Each rule's pattern, and its regex once a candidate needed it.
    sources: [String; RULES],
    each: [OnceLock<Regex>; RULES],
}

fn rules() -> &'static Rules {
    static RULES: OnceLock<Rules> = OnceLock::new();
    RULES.get_or_init(|| {
        let sources = alternatives().map(|a| format!("(?-u){a}"));
        // As `regex::bytes::RegexBuilder` configures the same engine.
        let which = regex_automata::meta::Regex::builder()
            .configure(
                regex_automata::meta::Config::new()
                    .utf8_empty(false)
                    .which_captures(regex_automata::nfa::thompson::WhichCaptures::Implicit)
                    .nfa_size_limit(Some(64 << 20))
                    .hybrid_cache_capacity(64 << 20),
            )
            .syntax(regex_automata::util::syntax::Config::new().utf8(false))
            .build_many(&sources)
            .expect("the built-in redaction rules compile");
        Rules {
            which,
            sources,
            each: Default::default(),
        }
    })
}

impl Rules {
    /// The first match at or after `from` with its groups, as the
    /// built-in pattern's `captures_at` gives them.
    fn captures_at<'t>(&self, text: &'t [u8], from: usize) -> Option<Captures<'t>> {
        match self.rule_captures_at(text, from)? {
            Ok(caps) => Some(caps),
            // Never met (the test below asks from every byte); a search
            // that stopped here would leave the rest of the text unread.
            Err(()) => builtin().captures_at(text, from),
        }
    }

    /// The first match at or after `from`, with its groups as the rule
    /// that matched takes them; `Err` if that rule's own regex does not
    /// give the same match.
    fn rule_captures_at<'t>(
        &self,
        text: &'t [u8],
        from: usize,
    ) -> Option<Result<Captures<'t>, ()>> {
        let m = self
            .which
            .search(&regex_automata::Input::new(text).range(from..))?;
        let rule = m.pattern().as_usize();
        let re = self.each[rule].get_or_init(|| {
            RegexBuilder::new(&self.sources[rule])
                .size_limit(64 << 20)
                .dfa_size_limit(64 << 20)
                .build()
                .expect("a built-in redaction rule compiles")
        });
        // No rule matches before `m`, and this one matches at its start.
        let caps = re.captures_at(text, m.start());
        Some(
            caps.filter(|c| c.get(0).is_some_and(|g| g.range() == m.range()))
                .ok_or(()),
        )
    }
}

pub(super) fn builtin() -> &'static Regex {
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
pub(crate) struct Hit {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) category: Category,
    /// The value as it identifies itself: same key, same placeholder.
    pub(crate) key: String,
}

/// Could [`find`] report anything in `text`? `false` is certain; `true`
/// means a rule's pattern matches somewhere (its checks may still refuse).
pub(super) fn any_candidate(text: &[u8]) -> bool {
    super::lanes::any_match(text)
}

/// What [`find`] remembers between candidates so that checks looking
/// back over earlier lines stay linear: the start of the last line judged
/// to be a row of a package table, and the verdict.
#[derive(Default)]
struct Memo {
    table_row: Option<(usize, bool)>,
}

/// Every hit of the built-in rules in `text`, in order.
pub(super) fn find(text: &[u8], out: &mut Vec<Hit>) {
    find_walking(text, out, true);
}

/// [`find`]; with `walks`, each search starts where the four walks of
/// [`super::map`] found that the next match begins (in a text too short
/// for them, one search of their DFAs), rather than where the last one
/// left off, so the stretches between matches are passed over four places
/// at a time, and only the rule that matched is asked for its groups
/// ([`Rules`]). Without, the `regex` search of the whole pattern alone,
/// its groups taken by the whole pattern: what the tests compare with.
pub(super) fn find_walking(text: &[u8], out: &mut Vec<Hit>, walks: bool) {
    let mut memo = Memo::default();
    let mut starts = super::map::Starts::new(text, walks);
    let mut at = 0;
    while at <= text.len() {
        let Some(from) = starts.next(at) else {
            break;
        };
        let caps = if walks {
            rules().captures_at(text, from)
        } else {
            builtin().captures_at(text, from)
        };
        let Some(caps) = caps else {
            break;
        };
        let m = caps.get(0).expect("group 0 always matches");
        let before = out.len();
        classify(text, &caps, out, &mut memo);
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

/// Judge one match of the built-in pattern: which rule matched, and
/// whether what it found is a private value (pushed to `out`) or a near
/// miss (a version, a public name, a placeholder).
fn classify(text: &[u8], caps: &Captures, out: &mut Vec<Hit>, memo: &mut Memo) {
    let m = caps.get(0).expect("group 0 always matches");
    let f = Found {
        text,
        caps,
        start: m.start(),
        end: m.end(),
    };
    if caps.name("pem").is_some() || caps.name("tok").is_some() {
        f.push(
            out,
            f.start,
            f.end,
            Category::Credential,
            f.s(f.start, f.end),
        );
    } else if let Some(v) = ["authv", "bearerv", "flagv", "kvv"]
        .iter()
        .find_map(|g| caps.name(g))
    {
        credential_value(&f, v, out);
    } else if let Some(v) = caps.name("uuidv") {
        gpu_uuid(&f, v, out);
    } else if let Some(v) = caps.name("curluv") {
        curl_user(&f, v, out);
    } else if let Some(h) = caps.name("khhost") {
        known_host(&f, h, out);
    } else if caps.name("mac").is_some() {
        mac_address(&f, out);
    } else if caps.name("email").is_some() {
        email(&f, out);
    } else if caps.name("ipdash").is_some() {
        dashed_ip(&f, out);
    } else if caps.name("gpu").is_some() {
        gpu_name(&f, out);
    } else if let Some(label) = caps.name("ulabel") {
        url_label(&f, label, out);
    } else if let Some(host) = caps.name("urlhost") {
        url_host(&f, host, out);
    } else if let Some(host) = caps.name("fuhost") {
        file_url(&f, host, out);
    } else if caps.name("upath").is_some()
        || caps.name("wpath").is_some()
        || caps.name("unc").is_some()
    {
        host_path(&f, out);
    } else if caps.name("ip6").is_some() {
        ipv6(&f, out);
    } else if caps.name("ip4").is_some() {
        ipv4(&f, out, memo);
    } else if caps.name("host").is_some() {
        host_name(&f, out);
    } else if caps.name("hp").is_some() {
        host_port(&f, out);
    }
}

/// One match of the built-in pattern, in the text it was found in.
#[derive(Clone, Copy)]
struct Found<'t, 'c> {
    text: &'t [u8],
    caps: &'c Captures<'t>,
    /// The whole match.
    start: usize,
    end: usize,
}

impl Found<'_, '_> {
    fn s(&self, a: usize, b: usize) -> String {
        String::from_utf8_lossy(&self.text[a..b]).into_owned()
    }

    /// A group's span as a hit, keyed as written.
    fn push_group(&self, out: &mut Vec<Hit>, m: Match, category: Category) {
        self.push(
            out,
            m.start(),
            m.end(),
            category,
            self.s(m.start(), m.end()),
        );
    }

    /// A group's span as a hit, keyed in lower case (names and addresses
    /// are the same whatever their case).
    fn push_lower(&self, out: &mut Vec<Hit>, m: Match, category: Category) {
        let key = self.s(m.start(), m.end()).to_ascii_lowercase();
        self.push(out, m.start(), m.end(), category, key);
    }

    fn push(&self, out: &mut Vec<Hit>, start: usize, end: usize, category: Category, key: String) {
        out.push(Hit {
            start,
            end,
            category,
            key,
        })
    }
}

/// A `key: value`, `Authorization:` or `--token` secret.
fn credential_value(f: &Found, v: Match, out: &mut Vec<Hit>) {
    let Found { caps, .. } = *f;
    if caps
        .name("kvk")
        .is_some_and(|k| not_a_secret_key(k.as_bytes()))
        || not_a_secret_value(v.as_bytes())
    {
        return;
    }
    f.push_group(out, v, Category::Credential);
}

/// A GPU UUID, keyed in lower case.
fn gpu_uuid(f: &Found, v: Match, out: &mut Vec<Hit>) {
    f.push_lower(out, v, Category::GpuUuid);
}

/// `curl -u user:password`: the credential.
fn curl_user(f: &Found, v: Match, out: &mut Vec<Hit>) {
    // `-u 1000:1000` is a user and group id, `-u $USER:$PASS` a shell
    // variable: neither is the secret itself.
    let b = v.as_bytes();
    if b.iter().all(|c| c.is_ascii_digit() || *c == b':') || b.starts_with(b"$") {
        return;
    }
    f.push_group(out, v, Category::Credential);
}

/// A known_hosts line: which machines the operator logs in to.
fn known_host(f: &Found, h: Match, out: &mut Vec<Hit>) {
    // Which machines the operator logs in to: the whole host field
    // (unless a build already replaced it).
    let field = f.s(h.start(), h.end());
    if field.split(',').all(super::is_placeholder) {
        return;
    }
    f.push_lower(out, h, Category::Endpoint);
}

/// A MAC address on its own.
fn mac_address(f: &Found, out: &mut Vec<Hit>) {
    let Found {
        text, start, end, ..
    } = *f;
    let t = f.s(start, end).to_ascii_lowercase().replace('-', ":");
    let hex_at = |i: usize| text.get(i).is_some_and(u8::is_ascii_hexdigit);
    // Part of a longer colon-separated run (a key fingerprint, an
    // IPv6 address), or the all-zero and broadcast addresses.
    let longer = (matches!(text.get(end), Some(b':' | b'-')) && hex_at(end + 1))
        || (start > 1 && matches!(text[start - 1], b':' | b'-') && hex_at(start - 2));
    if longer || t == "00:00:00:00:00:00" || t == "ff:ff:ff:ff:ff:ff" {
        return;
    }
    f.push(out, start, end, Category::Endpoint, t);
}

/// A mailbox that is not a public one.
fn email(f: &Found, out: &mut Vec<Hit>) {
    let Found {
        text, start, end, ..
    } = *f;
    let t = f.s(start, end).to_ascii_lowercase();
    // `https://user@host` is a URL's user name, not a mailbox.
    if public_mail(&t) || text[..start].ends_with(b"://") {
        return;
    }
    f.push(out, start, end, Category::Endpoint, t);
}

/// `ip-10-0-0-5`: a private address written with dashes.
fn dashed_ip(f: &Found, out: &mut Vec<Hit>) {
    let Found { start, end, .. } = *f;
    let t = f.s(start, end);
    let digits = t.strip_prefix("ip-").unwrap_or(&t);
    let Some(addr) = parse_v4(&digits.replace('-', ".")) else {
        return;
    };
    if private_v4(addr) {
        let from = end - digits.len();
        f.push(out, from, end, Category::Endpoint, addr.to_string());
    }
}

/// `gpu-...`: a GPU or node name.
fn gpu_name(f: &Found, out: &mut Vec<Hit>) {
    let Found {
        text, start, end, ..
    } = *f;
    // `gpu-20260908-1412`: a run folder named by its date.
    if dated(&text[start + 4..end]) {
        return;
    }
    f.push(
        out,
        start,
        end,
        Category::GpuUuid,
        f.s(start, end).to_ascii_lowercase(),
    );
}

/// A single-label URL host (`http://gpu-node-07/`).
fn url_label(f: &Found, label: Match, out: &mut Vec<Hit>) {
    let Found {
        text, caps, start, ..
    } = *f;
    let stop = caps.name("uport").map_or(label.end(), |p| p.end());
    // `s3://bucket/...`, `gs://bucket/...`: the label is a bucket,
    // named in one public namespace, not a machine.
    let scheme = &text[start..label.start().saturating_sub(3)];
    let bucket = [
        &b"s3"[..],
        b"s3a",
        b"gs",
        b"gcs",
        b"r2",
        b"az",
        b"abfs",
        b"abfss",
        b"hf",
    ]
    .iter()
    .any(|b| scheme.eq_ignore_ascii_case(b));
    if !bucket && !label.as_bytes().eq_ignore_ascii_case(b"localhost") {
        f.push(
            out,
            label.start(),
            stop,
            Category::Endpoint,
            f.s(label.start(), stop).to_ascii_lowercase(),
        );
    }
}

/// A URL's password or token, and its host when private.
fn url_host(f: &Found, host: Match, out: &mut Vec<Hit>) {
    let Found { caps, .. } = *f;
    if let Some(user) = caps.name("urluser") {
        let u = user.as_bytes();
        // `user:pw@`, `:pw@`, or a token on its own (`TOKEN@`); a bare
        // user name (`git@`) is not a secret.
        let password = u
            .iter()
            .position(|&b| b == b':')
            .is_some_and(|i| i + 1 < u.len());
        if password || token_like(u) {
            let u = f.s(user.start(), user.end());
            f.push(out, user.start(), user.end(), Category::Credential, u);
        }
    }
    let h = f.s(host.start(), host.end());
    let bare = h.trim_start_matches('[').trim_end_matches(']');
    let single_label = !bare.contains(['.', ':']) && !bare.eq_ignore_ascii_case("localhost");
    if single_label || private_host(bare) {
        let stop = caps.name("urlport").map_or(host.end(), |p| p.end());
        f.push(
            out,
            host.start(),
            stop,
            Category::Endpoint,
            f.s(host.start(), stop).to_ascii_lowercase(),
        );
    }
}

/// `file://host/...`: a path on a named machine.
fn file_url(f: &Found, host: Match, out: &mut Vec<Hit>) {
    let Found {
        text, start, end, ..
    } = *f;
    let path = &text[host.end()..end];
    let user_path = [&b"/home/"[..], b"/Users/", b"/root", b"/mnt/"]
        .iter()
        .any(|p| path.starts_with(p))
        || path
            .get(2..10)
            .is_some_and(|p| p.eq_ignore_ascii_case(b":/users/"));
    if !host.as_bytes().eq_ignore_ascii_case(b"localhost") || user_path {
        let end = trim_path_end(text, start, end);
        f.push(out, start, end, Category::HostPath, f.s(start, end));
    }
}

/// A home, mount or UNC path.
fn host_path(f: &Found, out: &mut Vec<Hit>) {
    let Found {
        text,
        caps,
        start,
        end,
        ..
    } = *f;
    // `\\?\C:\Users\...` (an extended-length path) is still a path.
    let extended = text[..start].ends_with(br"?\");
    if caps.name("unc").is_some() && !unc_escaping_agrees(&text[start..end]) {
        return;
    }
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
    f.push(
        out,
        start,
        end,
        Category::HostPath,
        f.s(start, end).replace("\\\\", "\\"),
    );
}

/// A private IPv6 address.
fn ipv6(f: &Found, out: &mut Vec<Hit>) {
    let Found { start, end, .. } = *f;
    if private_ipv6_text(&f.s(start, end)) {
        f.push(
            out,
            start,
            end,
            Category::Endpoint,
            f.s(start, end).to_ascii_lowercase(),
        );
    }
}

/// A private IPv4 address (with its port), unless it is part of a version or a longer number.
fn ipv4(f: &Found, out: &mut Vec<Hit>, memo: &mut Memo) {
    let Found {
        text, start, end, ..
    } = *f;
    // `host_10.0.0.5`: the rule takes the `_` (a word boundary would
    // refuse it), the value starts after it.
    let start = start + usize::from(text[start] == b'_');
    let t = f.s(start, end);
    let (addr, port) = t
        .split_once(':')
        .map_or((&t[..], None), |(a, p)| (a, Some(p)));
    let prev = start.checked_sub(1).map(|i| text[i]);
    // Part of a longer number or dotted run (`110.0.0.5`, `1.10.0.0.5`,
    // `10.0.0.5.1`, `10.0.0.1234`), or `v10.0.0.1`: not an address.
    // Any other neighbour (`_`, a word, a quote) leaves it one.
    let version_prefix = matches!(prev, Some(b'v' | b'V'))
        && !(start > 1 && text[start - 2].is_ascii_alphanumeric());
    let dotted_on =
        text.get(end) == Some(&b'.') && text.get(end + 1).is_some_and(u8::is_ascii_digit);
    if matches!(prev, Some(b'0'..=b'9' | b'.'))
        || (port.is_none() && text.get(end).is_some_and(u8::is_ascii_digit))
        || version_prefix
        || dotted_on
        || version_layout(text, start, end, memo)
    {
        return;
    }
    if let Some(a) = parse_v4(addr).filter(|a| private_v4(*a)) {
        let key = port.map_or(a.to_string(), |p| format!("{a}:{p}"));
        f.push(out, start, end, Category::Endpoint, key);
    }
}

/// A private host name (`.internal`, `.local`, ...).
fn host_name(f: &Found, out: &mut Vec<Hit>) {
    let Found {
        text, start, end, ..
    } = *f;
    // `host_gpu-node.internal`: as for addresses, the `_` is not part
    // of the name, and does not hide it.
    let start = start + usize::from(text[start] == b'_');
    let t = f.s(start, end);
    let lower = t.to_ascii_lowercase();
    let name = lower.split(':').next().unwrap_or("");
    let ambiguous = name.ends_with(".local") || name.ends_with(".lan");
    let prev = start.checked_sub(1).map(|i| text[i]);
    let in_url = text[..start].ends_with(b"://") || prev == Some(b'@');
    // `foo.corp.example.com` is a public name with `corp` inside it.
    let after = start + name.len();
    if text.get(after) == Some(&b'.') && text.get(after + 1).is_some_and(u8::is_ascii_alphanumeric)
    {
        return;
    }
    if ambiguous
        && !in_url
        && (continues(text, start + name.len()) || matches!(prev, Some(b'.' | b'/' | b'\\')))
    {
        return;
    }
    f.push(out, start, end, Category::Endpoint, lower);
}

/// `name-7:8000`: a host-like label with a port.
fn host_port(f: &Found, out: &mut Vec<Hit>) {
    let Found {
        text, start, end, ..
    } = *f;
    let t = f.s(start, end);
    let (label, port) = t.split_once(':').unwrap_or((&t, ""));
    let hostish = label.contains('-') || label.bytes().any(|b| b.is_ascii_digit());
    let prev = start.checked_sub(1).map(|i| text[i]);
    let port_ok = port.parse::<u32>().is_ok_and(|p| p <= 65535);
    if !hostish
        || setting(label)
        || !port_ok
        || label.eq_ignore_ascii_case("localhost")
        || matches!(prev, Some(b'/' | b'.' | b'@' | b':' | b'-' | b'_' | b'\\'))
        || continues(text, end)
        || text.get(end) == Some(&b':')
    {
        return;
    }
    f.push(out, start, end, Category::Endpoint, t.to_ascii_lowercase());
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

/// Is the private-looking address at `start..end` a version by the layout
/// around it (never by a word before it)? A comparison operator
/// (`tensorrt==10.3.0.26`), a wheel or source archive name
/// (`..._cu12-10.3.5.147-py3-none-...`), a Debian revision or local
/// version after it (`10.3.0.26-1+cuda12.5`, `10.1.0.5+cu121`), or the
/// version column of a `pip list` or `conda list` table.
fn version_layout(text: &[u8], start: usize, end: usize, memo: &mut Memo) -> bool {
    let before = &text[..start];
    let trimmed = before.trim_ascii_end();
    if [&b"=="[..], b">=", b"<=", b"~=", b"!=", b"==="]
        .iter()
        .any(|op| trimmed.ends_with(op))
    {
        return true;
    }
    let after = &text[end..];
    let starts = |p: &[u8]| after.len() >= p.len() && after[..p.len()].eq_ignore_ascii_case(p);
    if matches!(after.first(), Some(b'+' | b'~')) {
        return true;
    }
    if after.first() == Some(&b'-') {
        let digits = after[1..].iter().take_while(|b| b.is_ascii_digit()).count();
        if digits > 0 && matches!(after.get(1 + digits), Some(b'+' | b'~')) {
            return true;
        }
    }
    if before.last() == Some(&b'-') {
        let wheel_tag = [
            &b"-py"[..],
            b"-cp",
            b"-pp",
            b"-none",
            b".tar.",
            b".whl",
            b".zip",
        ];
        if wheel_tag.iter().any(|t| starts(t)) {
            return true;
        }
        // A build tag: `-10.3.0.26-1-py3-none-any.whl`.
        let digits = after
            .iter()
            .skip(1)
            .take_while(|b| b.is_ascii_digit())
            .count();
        if after.first() == Some(&b'-') && digits > 0 && after[1 + digits..].starts_with(b"-py") {
            return true;
        }
    }
    version_column(text, start, memo)
}

/// `name   10.3.0.75` (pip list) or `name  9.1.0.70  h1234_0  conda-forge`
/// (conda list): the second column of a row of a table that goes up, row
/// by row, to pip's dashed rule or conda's `# Name  Version` header.
fn version_column(text: &[u8], start: usize, memo: &mut Memo) -> bool {
    // Back over the gap and the first column only (each candidate looks
    // at the bytes since the one before it: linear on a long line).
    let gap = text[..start]
        .iter()
        .rev()
        .take_while(|b| **b == b' ')
        .count();
    let first_end = start - gap;
    let first = text[..first_end]
        .iter()
        .rev()
        .take_while(|b| !b.is_ascii_whitespace())
        .count();
    let line_start = first_end - first;
    if gap == 0 || first == 0 || (line_start > 0 && text[line_start - 1] != b'\n') {
        return false;
    }
    // Walk up while the rows look like rows; remember the verdict per row
    // so a long table is walked once, not once per row.
    let mut at = line_start;
    let verdict = loop {
        if memo.table_row.is_some_and(|(s, _)| s == at) {
            break memo.table_row.is_some_and(|(_, v)| v);
        }
        if at == 0 {
            break false;
        }
        let prev_start = text[..at - 1]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let prev = text[prev_start..at - 1].trim_ascii_end();
        let rule = !prev.is_empty()
            && prev.starts_with(b"-")
            && prev.iter().all(|b| *b == b'-' || *b == b' ');
        let conda_header = prev.starts_with(b"#")
            && memchr::memmem::find(&prev.to_ascii_lowercase(), b"version").is_some();
        if rule || conda_header {
            break true;
        }
        let cols: Vec<&[u8]> = prev
            .split(|b| *b == b' ')
            .filter(|c| !c.is_empty())
            .collect();
        let rowlike = !prev.first().is_some_and(u8::is_ascii_whitespace)
            && cols.len() >= 2
            && cols[1].first().is_some_and(u8::is_ascii_digit);
        if !rowlike {
            break false;
        }
        at = prev_start;
    };
    memo.table_row = Some((line_start, verdict));
    verdict
}

/// `top_k:40`, `max-tokens:512`: a sampling or run setting, not a host
/// and port. Every word of the label is a setting's word.
fn setting(label: &str) -> bool {
    const WORDS: &[&str] = &[
        "top",
        "k",
        "p",
        "min",
        "max",
        "temperature",
        "temp",
        "tokens",
        "token",
        "new",
        "penalty",
        "repetition",
        "repeat",
        "presence",
        "frequency",
        "seed",
        "ctx",
        "num",
        "batch",
        "size",
        "beam",
        "beams",
        "n",
        "length",
        "len",
        "context",
        "predict",
        "gpu",
        "layers",
        "threads",
        "steps",
        "epochs",
        "warmup",
        "lr",
        "workers",
        "keep",
        "last",
        "mirostat",
        "eta",
        "tau",
    ];
    label
        .to_ascii_lowercase()
        .split(['-', '_'])
        .all(|w| WORDS.contains(&w))
}

/// An IPv4 address, leading zeros allowed (`010.000.000.005`).
fn parse_v4(t: &str) -> Option<Ipv4Addr> {
    let mut octets = [0u8; 4];
    let mut parts = t.split('.');
    for o in &mut octets {
        let p = parts.next()?;
        if p.is_empty() || p.len() > 3 {
            return None;
        }
        *o = p.parse().ok()?;
    }
    parts.next().is_none().then(|| Ipv4Addr::from(octets))
}

/// `20260908...`: eight digits that read as a date.
fn dated(after_prefix: &[u8]) -> bool {
    let d = &after_prefix[..after_prefix.len().min(8)];
    let n = |r: std::ops::Range<usize>| {
        std::str::from_utf8(&d[r])
            .ok()
            .and_then(|t| t.parse::<u32>().ok())
    };
    d.len() == 8
        && d.iter().all(u8::is_ascii_digit)
        && n(0..4).is_some_and(|y| (1990..=2099).contains(&y))
        && n(4..6).is_some_and(|m| (1..=12).contains(&m))
        && n(6..8).is_some_and(|d| (1..=31).contains(&d))
}

/// A URL's user part that is a token on its own: long, letters and digits.
fn token_like(u: &[u8]) -> bool {
    u.len() >= 16 && u.iter().any(u8::is_ascii_digit) && u.iter().any(u8::is_ascii_alphabetic)
}

/// Addresses no operator owns: documentation domains, bot and no-reply
/// senders, `git@host` remotes, and `name@file.ext` that is no address.
fn public_mail(t: &str) -> bool {
    let (local, domain) = t.split_once('@').unwrap_or((t, ""));
    let tld = domain.rsplit('.').next().unwrap_or("");
    ["git", "noreply", "no-reply", "donotreply"].contains(&local)
        || ["example.com", "example.org", "example.net"].contains(&domain)
        || domain.ends_with(".example.com")
        || domain.ends_with("noreply.github.com")
        || [
            "json",
            "py",
            "txt",
            "log",
            "md",
            "csv",
            "html",
            "gguf",
            "bin",
            "safetensors",
            "whl",
            "gz",
            "tar",
            "zip",
            "yaml",
            "yml",
            "toml",
            "sh",
            "rs",
            "onnx",
            "pt",
            "png",
            "jpg",
        ]
        .contains(&tld)
}

/// A UNC path written at one escaping level: `\\server\share` or, JSON
/// escaped, `\\\\server\\share`. `\\alpha\\beta` (LaTeX or a regex in a
/// JSON string) mixes the two and is no path.
fn unc_escaping_agrees(span: &[u8]) -> bool {
    let lead = span.iter().take_while(|b| **b == b'\\').count();
    let server = span[lead..].iter().take_while(|b| **b != b'\\').count();
    let sep = span[lead + server..]
        .iter()
        .take_while(|b| **b == b'\\')
        .count();
    let starts_alnum = span.get(lead).is_some_and(u8::is_ascii_alphanumeric);
    starts_alnum && sep * 2 == lead
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
pub(super) fn private_host(h: &str) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A match of every rule, and near misses where several rules could
    /// begin at the same byte (a URL, an e-mail address, a host name).
    const SAMPLES: &[&str] = &[
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEabc+/=\n-----END RSA PRIVATE KEY-----",
        "-----BEGIN PRIVATE KEY-----\nMIIEabc\nQUJD",
        "Authorization: Bearer abcdef123456",
        "x-api-key='k3y-v4lue-here'",
        "bearer abcdef123456",
        "--db-password hunter2hunter2",
        "api_key=sk12345678 secret: \"p4ssw0rd!\"",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "AKIAABCDEFGHIJKLMNOP sk-proj-abcdefghij0123456789xyz",
        "GPU-12345678-abcd-ef01-2345-6789abcdef01 MIG-GPU-12345678/1/0",
        "uuid=12345678-abcd-ef01-2345-6789abcdef01",
        "curl -u alice:secretpw https://example.org",
        "db.example.com,10.0.0.5 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI",
        "aa:bb:cc:dd:ee:ff 00-11-22-33-44-55",
        "ops@example-corp.com, alice@db-7.internal",
        "ip-10-0-0-27 10-0-0-27.ns.pod.cluster.local",
        "file://server/share/alice/x.log",
        "http://user:pw@10.0.0.9:8080/ https://gpu-node-07:8000/metrics http://example.org/",
        "/home/alice/run.log /data/home/bob/x ~carol/notes /root/.cache",
        "C:\\Users\\alice\\run.log \\\\server\\share\\alice",
        "fd12:3456::1 [fe80::1%eth0]:8080 ::ffff:10.1.2.3",
        "peer=10.7.3.4:8080 172.16.0.1 192.168.1.1 100.64.0.1 169.254.0.1",
        "db-7.internal:8080 build.corp printer.local",
        "gpu-node-7:8080 node12:22",
        "v1.2.3.4 torch==10.1.2.3 decode=75.94 tok/s",
    ];

    /// Each rule asked for its own groups, after the search of all of
    /// them said which matched, gives the candidate the whole pattern's
    /// captures give, from every byte of texts mixing every rule's
    /// matches and near misses, next to bytes past ASCII (UTF-8 and not).
    #[test]
    fn the_rule_that_matched_gives_the_whole_patterns_groups() {
        let whole = builtin();
        let names: Vec<&str> = whole.capture_names().flatten().collect();
        let (mut candidates, mut rules_met) = (0, std::collections::BTreeSet::new());
        let mut seed = 7u64;
        for round in 0..40 {
            let mut text: Vec<u8> = Vec::new();
            for _ in 0..12 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let sample = SAMPLES[(seed >> 33) as usize % SAMPLES.len()];
                let seps: [&[u8]; 9] = [
                    b" ",
                    b"\n",
                    b"\t",
                    b"=",
                    b"(",
                    b"'",
                    b"",
                    "é".as_bytes(),
                    b"\xff",
                ];
                text.extend_from_slice(sample.as_bytes());
                text.extend_from_slice(seps[(seed >> 20) as usize % seps.len()]);
            }
            let text = &text[..];
            for from in 0..=text.len() {
                let (a, b) = (
                    whole.captures_at(text, from),
                    rules()
                        .rule_captures_at(text, from)
                        .map(|c| c.expect("the rule that matched gives the match")),
                );
                let span = |c: &Option<Captures>| c.as_ref().map(|c| c.get(0).unwrap().range());
                assert_eq!(span(&a), span(&b), "round {round}, from {from}");
                let (Some(a), Some(b)) = (a, b) else {
                    continue;
                };
                for n in &names {
                    let g = |c: &Captures| c.name(n).map(|m| m.range());
                    assert_eq!(g(&a), g(&b), "group {n}, round {round}, from {from}");
                    if g(&a).is_some() {
                        rules_met.insert(*n);
                    }
                }
                candidates += 1;
            }
        }
        assert!(candidates > 10_000, "{candidates}");
        // Every rule's own group was met.
        for rule in alternatives() {
            let name = &rule[4..rule.find('>').unwrap()];
            assert!(rules_met.contains(name), "{name} never matched");
        }
    }
}
