//! Where the built-in pattern can match in a text, asked of four places
//! of the text at once. A lazy DFA steps one byte at a time, each step
//! waiting on the one before (about 0.5 GB/s on one core here, what the
//! `regex` crate's search of this pattern runs at); four walks through
//! four parts of a window of the text, interleaved, overlap those waits,
//! and a clean stretch (most of what a build searches) is passed over in
//! about half the time. [`any_match`] is exactly `builtin().is_match`;
//! [`first_part`] says where no match can begin before ([`super::map`]
//! builds on the same [`Walk`] to go on past matches, for `rules::find`):
//!
//! - each walk starts where a search of the whole text would start at its
//!   part's first byte (the same look-behind), so it finds every match
//!   that begins in its part;
//! - a walk that reaches the end of its part with a match still under way
//!   goes on into the next parts until it is back in the state a search
//!   freshly started there would be in (nothing under way is left that the
//!   next walk does not also follow), it matches, or the text ends;
//! - the text's end is walked as a search's end is (a match is reported
//!   one byte late);
//! - if the DFA's cache is cleared on the way (every state it names is
//!   then stale), it gives up, or a walk goes on far past its part's end
//!   (one long run of letters and digits), the text is searched the usual
//!   way.

use regex_automata::hybrid::dfa::DFA;
use regex_automata::hybrid::regex::{Cache, Regex};
use regex_automata::hybrid::LazyStateID;
use regex_automata::util::pool::Pool;
use regex_automata::util::start;
use std::sync::OnceLock;

/// Walks at once. The stepping loops ([`Walk::first`] and the map's
/// `Mapping::in_step`) are written out for four, so the count is fixed
/// here (six or eight walks measured no faster on this pattern).
pub(super) const LANES: usize = 4;
const _: () = assert!(LANES == 4, "the stepping loops are written for four walks");
/// How far a walk goes on past its part's end before the text is searched
/// the usual way instead: a match under way ends within a token or two,
/// but a run of letters and digits as long as the text (base64) keeps one
/// going, and four walks each finishing it alone would cost more than one
/// search.
pub(super) const MAX_FINISH: usize = 16 << 10;
/// Shorter texts (and a text's shorter rest) are not walked: setting four
/// walks up costs more than it saves. One search of the same DFAs finds
/// where their matches begin ([`super::map`]).
pub(super) const MIN_LEN: usize = 4096;

/// The built-in pattern as a lazy DFA, forward (what the walks step
/// through) and reverse (where [`super::map`] finds where a match that a
/// walk saw end begins), built as the `regex` crate builds its own.
pub(super) fn regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::builder()
            .dfa(DFA::config().cache_capacity(64 << 20))
            .syntax(regex_automata::util::syntax::Config::new().utf8(false))
            .thompson(
                regex_automata::nfa::thompson::Config::new()
                    .utf8(false)
                    .nfa_size_limit(Some(64 << 20)),
            )
            .build(&super::rules::pattern())
            .expect("the built-in redaction pattern compiles")
    })
}

fn dfa() -> &'static DFA {
    regex().forward()
}

/// The reverse DFA of [`regex`].
pub(super) fn reverse() -> &'static DFA {
    regex().reverse()
}

type Caches = Pool<Cache, fn() -> Cache>;

/// One cache per thread at a time, forward and reverse.
pub(super) fn caches() -> &'static Caches {
    static POOL: OnceLock<Caches> = OnceLock::new();
    POOL.get_or_init(|| Pool::new(|| Cache::new(regex())))
}

/// `builtin().is_match(text)`, four parts of `text` at a time.
pub(super) fn any_match(text: &[u8]) -> bool {
    if text.len() < MIN_LEN {
        return is_match(text);
    }
    first_part(text, 0..text.len())
        .map_or_else(|| super::rules::builtin().is_match(text), |p| p.is_some())
}

/// `builtin().is_match(text)` by one search of the forward DFA the walks
/// step through: warm from them, where `regex`'s own would learn the
/// same states again.
fn is_match(text: &[u8]) -> bool {
    let mut cache = caches().get();
    let input = regex_automata::Input::new(text).earliest(true);
    dfa()
        .try_search_fwd(cache.forward_mut(), &input)
        .map_or_else(|_| super::rules::builtin().is_match(text), |m| m.is_some())
}

/// Where the first match beginning in `within` can begin, as far as four
/// walks through its four parts tell (each going on past its part, the
/// last past `within`, while a match is under way): `Some(None)` when no
/// match begins in `within`, `Some(Some(p))` when none begins before `p`
/// (the start of the first part whose walk met a match), `None` when the
/// walks could not tell (search the usual way).
pub(super) fn first_part(text: &[u8], within: std::ops::Range<usize>) -> Option<Option<usize>> {
    let mut cache = caches().get();
    Walk::new(cache.forward_mut(), text).first(within)
}

/// The walks over one text. Every method returns `None` once the cache
/// was cleared or the DFA gave up.
pub(super) struct Walk<'a> {
    pub(super) dfa: &'static DFA,
    pub(super) cache: &'a mut regex_automata::hybrid::dfa::Cache,
    /// The cache's clear count when the walks began.
    clears: usize,
    pub(super) text: &'a [u8],
}

impl<'a> Walk<'a> {
    pub(super) fn new(cache: &'a mut regex_automata::hybrid::dfa::Cache, text: &'a [u8]) -> Self {
        Walk {
            dfa: dfa(),
            clears: cache.clear_count(),
            cache,
            text,
        }
    }

    /// See [`first_part`].
    fn first(&mut self, within: std::ops::Range<usize>) -> Option<Option<usize>> {
        let (from, to) = (within.start, within.end);
        let part = to.saturating_sub(from) / LANES;
        let starts: [usize; LANES] = std::array::from_fn(|l| from + l * part);
        let mut at = [LazyStateID::default(); LANES];
        for (l, &s) in starts.iter().enumerate() {
            at[l] = self.fresh(s)?;
        }
        // The first walk known to meet a match. The others go on in step
        // (a walk that met one, from a start state, its steps unused): one
        // test per step of all four is what makes the walks fast.
        let mut met = LANES;
        let parked = at[0];
        let text = self.text;
        let part_of = |l: usize| &text[starts[l]..starts[l] + part];
        let bytes = part_of(0)
            .iter()
            .zip(part_of(1))
            .zip(part_of(2))
            .zip(part_of(3));
        for (((&b0, &b1), &b2), &b3) in bytes {
            let b = [b0, b1, b2, b3];
            let mut next: [LazyStateID; LANES] =
                std::array::from_fn(|l| self.dfa.next_state_untagged(self.cache, at[l], b[l]));
            if next[0].is_tagged() | next[1].is_tagged() | next[2].is_tagged() | next[3].is_tagged()
            {
                for l in 0..LANES {
                    match self.settle(at[l], next[l], b[l])? {
                        Step::Match(_) if l == 0 => return Some(Some(from)),
                        Step::Match(_) => {
                            met = met.min(l);
                            next[l] = parked;
                        }
                        Step::To(sid) => next[l] = sid,
                    }
                }
            }
            at = next;
        }
        // The last part's few bytes more, and on past `to` as the others
        // go on past theirs.
        let last = LANES - 1;
        if met == LANES {
            let mut sid = at[last];
            if self.walk_to(&mut sid, starts[last] + part, to)? || self.finish(sid, to)? {
                met = last;
            }
        }
        // The walks before it on past their part's end while a match is
        // under way.
        for l in 0..met.min(last) {
            if self.finish(at[l], starts[l + 1])? {
                return Some(Some(starts[l]));
            }
        }
        Some((met < LANES).then(|| starts[met]))
    }

    /// Walk `sid` through the text from `q` to `to`; whether it met a
    /// match on the way (it stops there).
    fn walk_to(&mut self, sid: &mut LazyStateID, q: usize, to: usize) -> Option<bool> {
        for &b in &self.text[q..to] {
            match self.step(*sid, b)? {
                Step::Match(_) => return Some(true),
                Step::To(next) => *sid = next,
            }
        }
        Some(false)
    }

    /// Walk on from `sid` at `q` until it is where a search started at `q`
    /// would be, it matches, or the text ends; whether it matched.
    fn finish(&mut self, sid: LazyStateID, q: usize) -> Option<bool> {
        Some(!matches!(self.finish_at(sid, q)?, Tail::Clean(_)))
    }

    /// [`Walk::finish`], telling where: a walk that started at `from`
    /// and is in `sid` at `q` ends clean at `r` (no match begins in
    /// `from..r`), or meets a match.
    pub(super) fn finish_at(&mut self, mut sid: LazyStateID, mut q: usize) -> Option<Tail> {
        let give_up = q.saturating_add(MAX_FINISH);
        while q < self.text.len() {
            if sid == self.fresh(q)? {
                return Some(Tail::Clean(q));
            }
            if q == give_up {
                return None;
            }
            match self.step(sid, self.text[q])? {
                Step::Match(m) => return Some(Tail::Match(m, q)),
                Step::To(next) => sid = next,
            }
            q += 1;
        }
        Some(if self.end(sid)? {
            Tail::EndMatch
        } else {
            Tail::Clean(q)
        })
    }

    /// The state a search of the whole text starting at `q` starts in.
    pub(super) fn fresh(&mut self, q: usize) -> Option<LazyStateID> {
        let look_behind = q.checked_sub(1).map(|p| self.text[p]);
        let config = start::Config::new().look_behind(look_behind);
        let sid = self.dfa.start_state(self.cache, &config).ok()?;
        self.same_cache()?;
        Some(sid)
    }

    /// One byte on from `sid` (never a tagged state: those are matches or
    /// dead, which end a walk, or not yet computed).
    #[inline(always)]
    pub(super) fn step(&mut self, sid: LazyStateID, b: u8) -> Option<Step> {
        let next = self.dfa.next_state_untagged(self.cache, sid, b);
        if next.is_tagged() {
            return self.settle(sid, next, b);
        }
        Some(Step::To(next))
    }

    /// What `next`, the transition from `sid` on `b` as the cache has it,
    /// is: computed if it was not yet, a match, or a state to go on from.
    #[inline(never)]
    pub(super) fn settle(
        &mut self,
        sid: LazyStateID,
        mut next: LazyStateID,
        b: u8,
    ) -> Option<Step> {
        if next.is_tagged() {
            if next.is_unknown() {
                next = self.dfa.next_state(self.cache, sid, b).ok()?;
                self.same_cache()?;
            }
            if next.is_match() {
                return Some(Step::Match(next));
            }
            if next.is_dead() || next.is_quit() {
                // Unanchored, a search only dies after a match; there are
                // no quit bytes. Either way: search the usual way.
                return None;
            }
        }
        Some(Step::To(next))
    }

    /// The end of the text after `sid`: does a match end there?
    pub(super) fn end(&mut self, sid: LazyStateID) -> Option<bool> {
        let eoi = self.dfa.next_eoi_state(self.cache, sid).ok()?;
        self.same_cache()?;
        Some(eoi.is_match())
    }

    /// `None` once the cache was cleared: every state a walk holds is stale.
    pub(super) fn same_cache(&self) -> Option<()> {
        (self.cache.clear_count() == self.clears).then_some(())
    }
}

pub(super) enum Step {
    /// The byte stepped on ends a match (the match state, to go on from).
    Match(LazyStateID),
    To(LazyStateID),
}

/// Where a walk past its part's end stops ([`Walk::finish_at`]).
pub(super) enum Tail {
    /// Where it is as a fresh walk would be: no match begins before.
    Clean(usize),
    /// It met a match (the state) on the byte at this place.
    Match(LazyStateID, usize),
    /// A match ends where the text does.
    EndMatch,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Texts where matches begin, end and run across the parts' edges and
    /// the text's ends, at every shift: the walks answer as one search does.
    #[test]
    fn four_walks_answer_as_one_search() {
        let values: &[&[u8]] = &[
            b"10.20.30.40",
            b"db-7.internal",
            b"password=hunter2hunter2",
            b"ops@example-corp.com",
            b"-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAK\n-----END RSA PRIVATE KEY-----",
            b"AKIAABCDEFGHIJKLMNOP",
            b"gpu-node-7:8080",
            b"\\\\fileserver\\share\\x",
            b"/home/alice/run",
            b"aa:bb:cc:dd:ee:ff",
        ];
        let near: &[&[u8]] = &[
            b"10.20.30",
            b"v1.2.3.4",
            b"password=",
            b"user@",
            b"-----BEGIN",
        ];
        let filler = b"decode=149.02 tok/s status=ok ";
        let re = super::super::rules::builtin();
        let mut checked = 0;
        for len in [40, 100, MIN_LEN - 1, MIN_LEN, MIN_LEN + 3, 3 * MIN_LEN + 1] {
            for v in values.iter().chain(near) {
                // The value at every offset around each part's edge and the ends.
                let part = len / LANES;
                let mut offsets: Vec<usize> = (0..LANES).map(|l| l * part).collect();
                offsets.extend(len.checked_sub(v.len()));
                for base in offsets {
                    for d in 0..v.len() + 2 {
                        let Some(at) = (base + d)
                            .checked_sub(v.len())
                            .filter(|a| a + v.len() <= len)
                        else {
                            continue;
                        };
                        let mut text: Vec<u8> = filler.iter().copied().cycle().take(len).collect();
                        text[at..at + v.len()].copy_from_slice(v);
                        assert_eq!(
                            any_match(&text),
                            re.is_match(&text),
                            "{} at {at} of {len}",
                            String::from_utf8_lossy(v)
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 500, "{checked}");
        // A long clean text, and one whose only value is its last bytes.
        let mut text: Vec<u8> = filler.iter().copied().cycle().take(1 << 20).collect();
        assert!(!any_match(&text));
        let n = text.len();
        text[n - 12..].copy_from_slice(b" 10.20.30.40");
        assert!(re.is_match(&text));
        assert!(any_match(&text));
        // One run of letters and digits as long as the text keeps a match
        // under way past every part's end: searched the usual way.
        let mut run: Vec<u8> = (0..1 << 20).map(|i| b"a0Zq9x"[i % 6]).collect();
        assert!(!re.is_match(&run));
        assert!(!any_match(&run));
        run.extend_from_slice(b":8080 10.20.30.40");
        assert_eq!(any_match(&run), re.is_match(&run));
        assert!(any_match(&run));
    }

    /// Random texts of the bytes the rules turn on (digits, dots, colons,
    /// key words, quotes, slashes, line breaks) among plain words, from
    /// sparse to dense, with `n` choosing which.
    fn random_text(n: usize, next: &mut impl FnMut() -> u64) -> Vec<u8> {
        let pieces: &[&[u8]] = &[
            b"10.",
            b"172.",
            b"192.168",
            b".",
            b":",
            b"-",
            b"=",
            b"@",
            b"/",
            b"\\",
            b"\n",
            b" ",
            b"\"",
            b"password",
            b"token",
            b"Bearer ",
            b"ip-",
            b"gpu-",
            b"fe80::",
            b"::ffff:",
            b".internal",
            b"home",
            b"/home/",
            b"sk-",
            b"AKIA",
            b"eyJ",
            b"http://",
            b"file://",
            b"-----BEGIN",
            b"PRIVATE KEY-----",
            b"ssh-ed25519 AAAA",
            b"ab",
            b"7",
            b"42",
            b"x",
            b"the run held steady ",
            b"decode ",
            b"_",
            b" 10.1.2.3 ",
            b" password=hunter2hunter2 ",
            b" db-7.internal ",
            b" https://example.org/ref/1 ",
            b" v1.2.3.4 ",
        ];
        let len = MIN_LEN + (next() % 12_000) as usize;
        let plain = [20_000, 800, 2][n % 3];
        let mut text = Vec::with_capacity(len + 64);
        while text.len() < len {
            let k = (next() % (pieces.len() as u64 + plain)) as usize;
            text.extend_from_slice(pieces.get(k).copied().unwrap_or(b"measured again "));
        }
        text
    }

    fn xorshift() -> impl FnMut() -> u64 {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// On random texts, clean and not, cut anywhere: the walks answer as
    /// one search does.
    #[test]
    fn random_texts_answer_as_one_search() {
        let re = super::super::rules::builtin();
        let mut next = xorshift();
        let (mut with, mut without) = (0, 0);
        for n in 0..1500 {
            let text = random_text(n, &mut next);
            let expected = re.is_match(&text);
            assert_eq!(
                any_match(&text),
                expected,
                "text {n}: {}",
                String::from_utf8_lossy(&text)
            );
            if expected {
                with += 1;
            } else {
                without += 1;
            }
        }
        assert!(
            with > 100 && without > 100,
            "{with} with a match, {without} without"
        );
    }

    /// The search that passes over clean stretches by walking finds the
    /// same hits, in the same order, as the search alone, on random texts
    /// and on texts whose values sit at each part's edge.
    #[test]
    fn walking_past_clean_stretches_finds_the_same_hits() {
        let mut next = xorshift();
        let mut texts: Vec<Vec<u8>> = (0..1500).map(|n| random_text(n, &mut next)).collect();
        let filler = b"decode=149.02 tok/s status=ok ";
        for len in [MIN_LEN, 5 * MIN_LEN + 7] {
            let part = len / LANES;
            for at in (0..LANES).map(|l| l * part).chain([len - 12]) {
                for d in 0..14 {
                    let Some(at) = (at + d).checked_sub(12).filter(|a| a + 24 <= len) else {
                        continue;
                    };
                    // After a space a rule is under way (`-u` may follow);
                    // after `(` none is.
                    for value in [b" 10.20.30.40", b"(10.20.30.40"] {
                        let mut text: Vec<u8> = filler.iter().copied().cycle().take(len).collect();
                        text[at..at + 12].copy_from_slice(value);
                        if at + 40 < len {
                            text[len - 14..].copy_from_slice(b" db-7.internal");
                        }
                        texts.push(text);
                    }
                }
            }
        }
        // Long texts, walked a window at a time: values around the edges
        // of the windows (64 KiB, then twice as long after each clean one)
        // and of their parts, and sparse ones.
        let long: Vec<u8> = filler.iter().copied().cycle().take(3 << 20).collect();
        let edges = [
            64 << 10,
            192 << 10,
            448 << 10,
            960 << 10,
            (960 << 10) + (128 << 10),
        ];
        for (k, &edge) in edges.iter().enumerate() {
            for d in [0, 1, 11, 12, 13, 40, 16 << 10] {
                let mut text = long.clone();
                let at = edge - 12 + d;
                let value: &[u8; 12] = if k % 2 == 0 {
                    b" 10.20.30.40"
                } else {
                    b"(10.20.30.40"
                };
                text[at..at + 12].copy_from_slice(value);
                texts.push(text);
            }
        }
        let mut sparse = long.clone();
        for at in (0..sparse.len() - 20).step_by(97_003) {
            sparse[at..at + 12].copy_from_slice(b"(10.20.30.40");
        }
        texts.push(sparse);
        let mut hits = 0;
        for (n, text) in texts.iter().enumerate() {
            let (mut walking, mut alone) = (Vec::new(), Vec::new());
            super::super::rules::find_walking(text, &mut walking, true);
            super::super::rules::find_walking(text, &mut alone, false);
            assert_eq!(
                walking,
                alone,
                "text {n}: {}",
                String::from_utf8_lossy(text)
            );
            hits += alone.len();
        }
        assert!(hits > 1000, "{hits} hits");
    }
}
