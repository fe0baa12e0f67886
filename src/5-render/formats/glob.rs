//! A block `source` naming many files: a glob (`runs/*/result.json`,
//! `target/criterion/**/new/estimates.json`) matched with globset's
//! semantics (`*` and `?` stay within one path segment, `**` spans
//! segments, `[ab]`, `{a,b}`), with what each `*` and `**` matched
//! captured, in order, for the records (`source_1`, `source_2`, ...).

use regex::Regex;

/// Does a block's `source` name a glob rather than one file?
pub(crate) fn is_glob(source: &str) -> bool {
    source.contains(['*', '?', '[', '{'])
}

pub(crate) struct Glob {
    matcher: globset::GlobMatcher,
    captures: Option<Regex>,
}

impl Glob {
    pub(crate) fn new(pattern: &str) -> Result<Glob, String> {
        let matcher = globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| format!("source `{pattern}` is not a valid glob: {}", e.kind()))?
            .compile_matcher();
        // globset matches but does not capture; the same pattern as a
        // regex with a group per wildcard gives what each one matched.
        let captures = Regex::new(&capturing_regex(pattern)).ok();
        Ok(Glob { matcher, captures })
    }

    /// What the wildcards matched, if `path` matches.
    pub(crate) fn captures(&self, path: &str) -> Option<Vec<String>> {
        if !self.matcher.is_match(path) {
            return None;
        }
        let caps = self.captures.as_ref().and_then(|r| r.captures(path));
        Some(caps.map_or_else(Vec::new, |c| {
            c.iter()
                .skip(1)
                .map(|m| {
                    m.map_or("", |m| m.as_str())
                        .trim_end_matches('/')
                        .to_string()
                })
                .collect()
        }))
    }
}

/// The glob as an anchored regex, one group per `*` or `**`.
fn capturing_regex(pattern: &str) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let mut re = String::from("^");
    let (mut i, mut braces) = (0, 0);
    while i < chars.len() {
        let c = chars[i];
        match c {
            '*' if chars.get(i + 1) == Some(&'*') => {
                let segment_start = i == 0 || chars[i - 1] == '/';
                if segment_start && chars.get(i + 2) == Some(&'/') {
                    re.push_str("((?:[^/]*/)*)");
                    i += 3;
                    continue;
                }
                re.push_str("(.*)");
                i += 2;
                continue;
            }
            '*' => re.push_str("([^/]*)"),
            '?' => re.push_str("[^/]"),
            '[' => {
                let end = chars[i + 1..]
                    .iter()
                    .position(|&c| c == ']')
                    .map(|p| p + i + 1);
                match end {
                    Some(end) if end > i + 1 => {
                        re.push('[');
                        let mut j = i + 1;
                        if chars[j] == '!' {
                            re.push('^');
                            j += 1;
                        }
                        for &c in &chars[j..end] {
                            if matches!(c, '\\' | '[' | '&' | '~') {
                                re.push('\\');
                            }
                            re.push(c);
                        }
                        re.push(']');
                        i = end + 1;
                        continue;
                    }
                    _ => re.push_str(r"\["),
                }
            }
            '{' => {
                braces += 1;
                re.push_str("(?:");
            }
            '}' if braces > 0 => {
                braces -= 1;
                re.push(')');
            }
            ',' if braces > 0 => re.push('|'),
            c => re.push_str(&regex::escape(&c.to_string())),
        }
        i += 1;
    }
    re.push('$');
    re
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_each_wildcard() {
        let g = Glob::new("runs/*/result-*.json").unwrap();
        assert_eq!(
            g.captures("runs/a1/result-x.json"),
            Some(vec!["a1".to_string(), "x".to_string()])
        );
        assert_eq!(g.captures("runs/a/b/result-x.json"), None);
        let g = Glob::new("target/criterion/**/new/estimates.json").unwrap();
        assert_eq!(
            g.captures("target/criterion/grp/b1/new/estimates.json"),
            Some(vec!["grp/b1".to_string()])
        );
    }
}
