//! File and folder names, read the way a reader of the published name would:
//! as written, each tail of the path as an absolute path
//! (`artifacts/home/alice/run.log` holds `/home/alice`), and each component
//! without its extensions (`db01.internal.log` names the host
//! `db01.internal`). In running text the context switches such readings off
//! (`.log` continues a name, a letter before `/home`); in a name it must not.

use super::{Detector, Hit, Redactor};
use std::borrow::Cow;

/// Every finding in a campaign-relative `path`, overlaps resolved (the
/// earlier, then the longer, wins).
pub(crate) fn find(det: &Detector, path: &str) -> Vec<Hit> {
    let mut hits = det.find(path.as_bytes());
    let starts = std::iter::once(0).chain(path.match_indices('/').map(|(i, _)| i + 1));
    for at in starts.filter(|&at| at < path.len()) {
        let tail = &path[at..];
        for h in det.find(format!("/{tail}").as_bytes()) {
            // The probe's leading `/` stands for the start of this component.
            let (start, end) = (at + h.start.saturating_sub(1), at + h.end - 1);
            if end > start {
                let (stop, key) = shortest_prefix(det, tail, start - at, end - at, &h);
                hits.push(Hit {
                    start,
                    end: at + stop,
                    key,
                    ..h
                });
            }
        }
    }
    let mut at = 0;
    for comp in path.split('/') {
        let mut stem = comp;
        while let Some((s, _)) = stem.rsplit_once('.').filter(|(s, _)| !s.is_empty()) {
            stem = s;
            hits.extend(det.find(stem.as_bytes()).into_iter().map(|h| Hit {
                start: at + h.start,
                end: at + h.end,
                ..h
            }));
        }
        at += comp.len() + 1;
    }
    hits.sort_by_key(|h| (h.start, std::cmp::Reverse(h.end)));
    let mut kept: Vec<Hit> = Vec::with_capacity(hits.len());
    for h in hits {
        if kept.last().is_none_or(|k| h.start >= k.end) {
            kept.push(h);
        }
    }
    kept
}

/// A path rule takes the rest of the path (`/home/alice/runs/x.log`); in a
/// name only the components that make it private are replaced
/// (`home/alice`), so the file keeps its name and extension. Returns the
/// end (in `tail`) of the fewest whole components, from `start`, in which
/// the detector still finds a value of the same kind, and that value's key.
fn shortest_prefix(
    det: &Detector,
    tail: &str,
    start: usize,
    end: usize,
    hit: &Hit,
) -> (usize, String) {
    let span = &tail[start..end];
    let mut cut = 0;
    for (i, _) in span
        .match_indices('/')
        .chain(std::iter::once((span.len(), "")))
    {
        if i <= cut {
            continue;
        }
        cut = i;
        let probe = format!("/{}", &span[..i]);
        let found = det.find(probe.as_bytes());
        if let Some(h) = found
            .iter()
            .find(|h| h.category == hit.category && h.start <= 1 && h.end == probe.len())
        {
            return (start + i, h.key.clone());
        }
    }
    (end, hit.key.clone())
}

/// `path` as a report may show it: each value replaced by its category
/// (`artifacts/[host-path]/run.log`), numbered by nothing, so a report
/// says where without saying what.
pub(crate) fn mask(det: &Detector, path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut at = 0;
    for h in find(det, path) {
        out.push_str(&path[at..h.start]);
        out.push_str(&format!("[{}]", h.category.as_str()));
        at = h.end;
    }
    out.push_str(&path[at..]);
    out
}

/// A line of text with each value the built-in rules find replaced by
/// its category, and where column `col` (1-based, in characters) lands.
pub(crate) fn mask_line(line: &str, col: usize) -> (String, usize) {
    let hits = Detector::builtin().find(line.as_bytes());
    if hits.is_empty() {
        return (line.to_string(), col);
    }
    let at_byte = line
        .char_indices()
        .nth(col.saturating_sub(1))
        .map_or(line.len(), |(i, _)| i);
    let (mut out, mut new_col, mut at) = (String::new(), None, 0);
    for h in hits {
        if new_col.is_none() && at_byte < h.end {
            let upto = at_byte.clamp(at, h.start.max(at));
            out.push_str(&line[at..upto]);
            new_col = Some(out.chars().count() + 1);
            out.push_str(&line[upto..h.start.max(upto)]);
        } else {
            out.push_str(&line[at..h.start]);
        }
        out.push_str(&format!("[{}]", h.category.as_str()));
        at = h.end;
    }
    if new_col.is_none() {
        let rest = at_byte.saturating_sub(at).min(line.len() - at);
        new_col = Some(out.chars().count() + line[at..at + rest].chars().count() + 1);
    }
    out.push_str(&line[at..]);
    (out, new_col.unwrap_or(col))
}

impl Redactor {
    /// A campaign-relative path with every value [`find`] sees in it
    /// replaced by its placeholder.
    pub(crate) fn redact_name<'p>(&self, path: &'p str) -> Cow<'p, str> {
        let hits = find(&self.detector, path);
        if hits.is_empty() {
            return Cow::Borrowed(path);
        }
        let mut out = String::with_capacity(path.len());
        let mut at = 0;
        for h in &hits {
            out.push_str(&path[at..h.start]);
            out.push_str(&self.placeholder(h));
            at = h.end;
        }
        out.push_str(&path[at..]);
        Cow::Owned(out)
    }

    /// Number the values in a name, as [`Redactor::redact_name`] will see them.
    pub(crate) fn register_name(&self, path: &str) {
        let hits = find(&self.detector, path);
        self.register(&hits);
        let mut names = self.names.lock().unwrap_or_else(|e| e.into_inner());
        for h in hits.iter().filter(|h| h.end - h.start >= 4) {
            names.insert(
                path[h.start..h.end].to_string(),
                (h.category, h.key.clone()),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redact(path: &str) -> String {
        Redactor::new(Detector::builtin())
            .redact_name(path)
            .into_owned()
    }

    #[test]
    fn names_are_read_as_paths_and_without_extensions() {
        assert_eq!(
            redact("artifacts/db01.internal.log"),
            "artifacts/[private-endpoint-1].log"
        );
        assert_eq!(
            redact("artifacts/home/alice/run.log"),
            "artifacts/[host-path-1]/run.log"
        );
        assert_eq!(redact("home/bob/x.txt"), "[host-path-1]/x.txt");
        assert!(!redact("ip-10-0-0-27.ec2.internal.log").contains("internal"));
    }

    #[test]
    fn lines_are_masked_and_the_caret_follows() {
        let (line, col) = mask_line("host = \"10.0.0.5\" bad", 19);
        assert_eq!(line, "host = \"[private-endpoint]\" bad");
        assert_eq!(line.chars().nth(col - 1), Some('b'));
        let (_, col) = mask_line("x 10.0.0.5 y", 5);
        assert_eq!(col, 3, "a caret inside a value points at its placeholder");
        assert_eq!(mask_line("plain", 3), ("plain".to_string(), 3));
    }

    #[test]
    fn public_names_stay() {
        for name in [
            "artifacts/run-2026-09-08.log",
            "data/decode.json",
            "artifacts/homepage/index.txt",
            "artifacts/users.csv",
            "docs/v10.3.5/notes.md",
        ] {
            assert_eq!(redact(name), name);
        }
    }
}
