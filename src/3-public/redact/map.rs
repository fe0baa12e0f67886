//! Where the matches of the built-in pattern begin in a text, found by
//! four walks at once (as in [`super::lanes`]) that go on past each match
//! they meet, so that a text dense with values is walked as fast as a
//! clean one. `rules::find` asks [`Starts::next`] where to search from:
//!
//! - each walk starts where a search of the whole text would start at its
//!   part's first byte; when it meets a match it goes on, one byte at a
//!   time, until the lazy DFA dies, the end of the leftmost-first match a
//!   search from there finds (what `regex`'s own search does), notes that
//!   stretch and starts afresh there;
//! - past its part's end a walk goes on until it is where a fresh one would
//!   be (nothing under way), it meets a match, or the text ends;
//! - a walk done early takes the second half of the longest part left;
//! - where a noted match begins is found, when asked, by the reverse DFA
//!   anchored at its end, as `regex` finds it;
//! - a search that goes on from inside a noted match (the value was not
//!   taken, or ended early) is walked from there until it is clean or
//!   meets a match, and then searched the usual way.
//!
//! If the cache is cleared, the DFA gives up, or a walk goes on far past
//! its part's end, the window is searched the usual way.

use super::lanes::{self, Step, Tail, Walk, LANES, MIN_LEN};
use regex_automata::hybrid::regex::Cache;
use regex_automata::hybrid::LazyStateID;
use regex_automata::util::pool::PoolGuard;
use regex_automata::{Anchored, Input};

/// How much of the text one map covers.
const WINDOW: usize = 1 << 20;
/// A walk done early takes half of a part only this long or longer.
const STEAL: usize = 4096;

/// What the walks found of a stretch of the text.
#[derive(Clone, Copy, Debug)]
struct Region {
    from: usize,
    to: usize,
    /// `None`: no match begins in `from..to`. `Some(_)`: the first match
    /// a search from `from` finds ends at `to`, and begins where the
    /// reverse search says (`Some(start)` once asked).
    found: Option<Option<usize>>,
}

/// Where to search from, as [`Starts::next`] tells it.
pub(super) struct Starts<'t> {
    text: &'t [u8],
    /// Taken from the pool when the first window is mapped.
    cache: Option<PoolGuard<'static, Cache, fn() -> Cache>>,
    /// What the walks found, in order of `from`, and the first not passed.
    regions: Vec<Region>,
    next: usize,
    /// The map covers `text[..covered]` (searched the usual way up to
    /// there when the walks could not tell).
    covered: usize,
    walked: bool,
    walks: bool,
    /// The rest of the text is too short for the walks: each answer is
    /// where one search finds the next match begins ([`Starts::search`]).
    short: bool,
}

impl<'t> Starts<'t> {
    /// Where to search `text` from; with `walks` false, always where the
    /// last search left off.
    pub(super) fn new(text: &'t [u8], walks: bool) -> Self {
        Starts {
            text,
            cache: None,
            regions: Vec::new(),
            next: 0,
            covered: 0,
            walked: false,
            walks,
            short: false,
        }
    }

    /// Where the search for the first match beginning at or after `at`
    /// starts (where it begins, or `at` itself when the walks could not
    /// tell), or `None` when no match begins at or after `at`.
    pub(super) fn next(&mut self, mut at: usize) -> Option<usize> {
        loop {
            if self.short {
                return self.search(at);
            }
            if !self.walks {
                return Some(at);
            }
            if at >= self.covered {
                if self.text.len().saturating_sub(at) < MIN_LEN {
                    // Too short a rest for the walks to pay.
                    self.short = true;
                    return self.search(at);
                }
                self.map(at);
            }
            if !self.walked {
                return Some(at);
            }
            match self.ask(at) {
                Ask::Search(p) => return Some(p),
                Ask::Past(p) if p >= self.text.len() => return None,
                Ask::Past(p) => {
                    at = p;
                    self.covered = self.covered.min(p);
                }
                Ask::Walk { by } => {
                    let text = self.text;
                    match clean_until(&mut Walk::new(self.cache().forward_mut(), text), at, by) {
                        Some(q) => at = q,
                        None => return Some(at),
                    }
                }
            }
        }
    }

    /// Map the window from `at`; if the walks cannot tell, the window is
    /// searched the usual way.
    fn map(&mut self, at: usize) {
        let to = self.text.len().min(at.saturating_add(WINDOW));
        self.regions.clear();
        self.next = 0;
        let text = self.text;
        let cache = self.cache.get_or_insert_with(|| lanes::caches().get());
        let mut walk = Walk::new(cache.forward_mut(), text);
        self.walked = Mapping {
            walk: &mut walk,
            regions: &mut self.regions,
            steals: 0,
            reach: (0, 0),
            to_ends: 0,
        }
        .run(at, to)
        .is_some();
        self.regions.sort_unstable_by_key(|r| r.from);
        self.covered = if self.walked {
            self.regions.iter().map(|r| r.to).max().unwrap_or(to)
        } else {
            to
        };
    }

    /// What the map says of the search from `at`.
    fn ask(&mut self, mut at: usize) -> Ask {
        while self.regions.get(self.next).is_some_and(|r| r.to <= at) {
            self.next += 1;
        }
        let mut i = self.next;
        loop {
            let Some(r) = self.regions.get(i).copied() else {
                return Ask::Past(at);
            };
            if r.to <= at {
                i += 1;
                continue;
            }
            if r.from > at {
                return Ask::Walk { by: r.from };
            }
            let Some(start) = r.found else {
                at = r.to;
                i += 1;
                continue;
            };
            let start = match start {
                Some(s) => s,
                None => match self.start(r.from, r.to) {
                    Some(s) => {
                        self.regions[i].found = Some(Some(s));
                        s
                    }
                    None => return Ask::Search(at),
                },
            };
            return if at <= start {
                Ask::Search(start)
            } else {
                Ask::Walk { by: r.to }
            };
        }
    }

    /// Where the first match at or after `at` begins, by one search of
    /// the lazy DFAs the walks step through (forward to its end, then
    /// back to its start, as `regex` searches), or `at` itself if they
    /// give up. The rules' own search from `at` would find the same match,
    /// but its DFAs would first learn the states of the whole text; the
    /// walks' DFAs already know them from the texts walked before (a
    /// build spent about 20 ms learning every state twice), and the
    /// rules' search then reads only the match.
    fn search(&mut self, at: usize) -> Option<usize> {
        let input = Input::new(self.text).range(at..);
        match lanes::regex().try_search(self.cache(), &input) {
            Ok(found) => found.map(|m| m.start()),
            Err(_) => Some(at),
        }
    }

    fn cache(&mut self) -> &mut Cache {
        self.cache.get_or_insert_with(|| lanes::caches().get())
    }

    /// Where the first match a search from `from` finds, ending at `end`,
    /// begins: the reverse search anchored at `end` (what `regex` does).
    fn start(&mut self, from: usize, end: usize) -> Option<usize> {
        let input = Input::new(self.text)
            .span(from..end)
            .anchored(Anchored::Yes)
            .earliest(false);
        let found = lanes::reverse().try_search_rev(self.cache().reverse_mut(), &input);
        found.ok().flatten().map(|m| m.offset())
    }
}

enum Ask {
    /// The first match at or after the place asked begins here.
    Search(usize),
    /// No match begins from the place asked to here, where the map ends.
    Past(usize),
    /// The place asked is inside a noted match: what follows it is not
    /// known up to `by`.
    Walk { by: usize },
}

/// Walk from `at` past `by` until the walk is clean (no match begins
/// before where it stops: that place) or meets a match (`None`).
fn clean_until(walk: &mut Walk, at: usize, by: usize) -> Option<usize> {
    let mut sid = walk.fresh(at)?;
    for q in at..by {
        match walk.step(sid, walk.text[q])? {
            Step::Match(_) => return None,
            Step::To(next) => sid = next,
        }
    }
    match walk.finish_at(sid, by)? {
        Tail::Clean(q) => Some(q),
        Tail::Match(..) | Tail::EndMatch => None,
    }
}

/// One walk: the part it has left (`pos..end`), its state, and where the
/// stretch it is in began (no match begins between there and `pos` but
/// what it noted).
#[derive(Clone, Copy)]
struct Lane {
    sid: LazyStateID,
    pos: usize,
    from: usize,
    end: usize,
    done: bool,
}

/// The walks through one window, noting what they find.
struct Mapping<'w, 'a> {
    walk: &'w mut Walk<'a>,
    regions: &'w mut Vec<Region>,
    /// Parts shared out by [`Mapping::steal`].
    steals: usize,
    /// The stretch of the last match noted that ran past its walk's part: a walk
    /// whose stretch lies inside it starts afresh at its end (that
    /// match's stretch covers what the walk has seen), so a match as long
    /// as the window is walked once, not by every walk inside it.
    reach: (usize, usize),
    /// Bytes walked to find where matches end.
    to_ends: usize,
}

impl Mapping<'_, '_> {
    /// Walk `from..to` in four parts, each walk done early taking half of
    /// the longest part left; `None` if the walks could not tell.
    fn run(&mut self, from: usize, to: usize) -> Option<()> {
        let part = (to - from) / LANES;
        let mut lanes = [None; LANES];
        for (l, lane) in lanes.iter_mut().enumerate() {
            let start = from + l * part;
            let end = if l == LANES - 1 { to } else { start + part };
            *lane = Some(self.lane(start, end)?);
        }
        let mut lanes = lanes.map(|l| l.expect("every lane is set"));
        loop {
            let left = lanes
                .iter()
                .map(|l| l.end.saturating_sub(l.pos))
                .min()
                .unwrap_or(0);
            if left > 0 {
                if let Some(next) = self.in_step(&mut lanes, left) {
                    for (lane, next) in lanes.iter_mut().zip(next) {
                        if !self.inside_reach(lane)? {
                            self.settle(lane, next)?;
                        }
                    }
                }
            }
            for lane in lanes.iter_mut() {
                if !self.inside_reach(lane)? && !lane.done && lane.pos >= lane.end {
                    self.tail(lane)?;
                }
            }
            for l in 0..LANES {
                if lanes[l].done && !self.steal(&mut lanes, l)? {
                    // Too little left to share: each walk on alone.
                    for lane in lanes.iter_mut() {
                        self.alone(lane)?;
                    }
                    return Some(());
                }
            }
        }
    }

    /// A lane whose stretch lies inside [`Mapping::reach`] starts afresh
    /// at its end, or is done if its part ends before; whether it was.
    fn inside_reach(&mut self, lane: &mut Lane) -> Option<bool> {
        let (from, to) = self.reach;
        if lane.done || lane.from < from || lane.pos >= to {
            return Some(false);
        }
        if lane.end <= to {
            lane.done = true;
        } else {
            *lane = self.lane(to, lane.end)?;
        }
        Some(true)
    }

    fn lane(&mut self, start: usize, end: usize) -> Option<Lane> {
        Some(Lane {
            sid: self.walk.fresh(start)?,
            pos: start,
            from: start,
            end,
            done: false,
        })
    }

    /// Step the four walks `n` bytes on together, or until one of them
    /// steps to a state the cache has tagged (a match, or not yet
    /// computed): then that step's states, not yet taken.
    fn in_step(&mut self, lanes: &mut [Lane; LANES], n: usize) -> Option<[LazyStateID; LANES]> {
        let text = self.walk.text;
        let part = |l: usize| &text[lanes[l].pos..lanes[l].pos + n];
        let mut at: [LazyStateID; LANES] = std::array::from_fn(|l| lanes[l].sid);
        let bytes = part(0).iter().zip(part(1)).zip(part(2)).zip(part(3));
        let (dfa, cache) = (self.walk.dfa, &mut *self.walk.cache);
        let mut stepped = n;
        let mut tagged = None;
        for (k, (((&b0, &b1), &b2), &b3)) in bytes.enumerate() {
            let b = [b0, b1, b2, b3];
            let next: [LazyStateID; LANES] =
                std::array::from_fn(|l| dfa.next_state_untagged(cache, at[l], b[l]));
            if next[0].is_tagged() | next[1].is_tagged() | next[2].is_tagged() | next[3].is_tagged()
            {
                stepped = k;
                tagged = Some(next);
                break;
            }
            at = next;
        }
        for (lane, sid) in lanes.iter_mut().zip(at) {
            lane.sid = sid;
            lane.pos += stepped;
        }
        tagged
    }

    /// Take the step to `next` on the byte at the lane's place.
    fn settle(&mut self, lane: &mut Lane, next: LazyStateID) -> Option<()> {
        let b = self.walk.text[lane.pos];
        match self.walk.settle(lane.sid, next, b)? {
            Step::To(sid) => {
                lane.sid = sid;
                lane.pos += 1;
            }
            Step::Match(m) => self.matched(lane, m)?,
        }
        Some(())
    }

    /// The lane stepped into the match state `m` on the byte at its place:
    /// go on to the end of the match, note it, and start afresh there.
    fn matched(&mut self, lane: &mut Lane, m: LazyStateID) -> Option<()> {
        let end = self.match_end(m, lane.pos)?;
        if end <= lane.from {
            return None;
        }
        self.regions.push(Region {
            from: lane.from,
            to: end,
            found: Some(None),
        });
        lane.pos = end;
        if end > lane.end {
            self.reach = (lane.from, end);
        }
        if end >= lane.end {
            lane.done = true;
        } else {
            lane.from = end;
            lane.sid = self.walk.fresh(end)?;
        }
        Some(())
    }

    /// From the match state `m`, entered on the byte at `at`: where the
    /// leftmost-first match ends, as a search finds it (the last match
    /// state before the DFA dies, or the text's end).
    fn match_end(&mut self, mut sid: LazyStateID, at: usize) -> Option<usize> {
        let walk = &mut *self.walk;
        let mut end = at;
        for q in at + 1..walk.text.len() {
            self.to_ends += 1;
            sid = walk.dfa.next_state(walk.cache, sid, walk.text[q]).ok()?;
            walk.same_cache()?;
            if sid.is_match() {
                end = q;
            } else if sid.is_dead() {
                return Some(end);
            } else if sid.is_quit() {
                return None;
            }
        }
        Some(if walk.end(sid)? { walk.text.len() } else { end })
    }

    /// The lane at its part's end: on until it is clean or meets a match.
    fn tail(&mut self, lane: &mut Lane) -> Option<()> {
        match self.walk.finish_at(lane.sid, lane.pos)? {
            Tail::Clean(q) => self.regions.push(Region {
                from: lane.from,
                to: q,
                found: None,
            }),
            Tail::Match(m, q) => {
                lane.pos = q;
                self.matched(lane, m)?;
            }
            Tail::EndMatch => self.regions.push(Region {
                from: lane.from,
                to: self.walk.text.len(),
                found: Some(None),
            }),
        }
        lane.done = true;
        Some(())
    }

    /// Give the done lane `l` the second half of the longest part left;
    /// whether there was one long enough.
    fn steal(&mut self, lanes: &mut [Lane; LANES], l: usize) -> Option<bool> {
        let (d, left) = lanes
            .iter()
            .enumerate()
            .filter(|(_, lane)| !lane.done)
            .map(|(d, lane)| (d, lane.end.saturating_sub(lane.pos)))
            .max_by_key(|&(_, left)| left)
            .unwrap_or((l, 0));
        if left < STEAL {
            return Some(false);
        }
        let mid = lanes[d].pos + left / 2;
        lanes[l] = self.lane(mid, lanes[d].end)?;
        lanes[d].end = mid;
        self.steals += 1;
        Some(true)
    }

    /// The lane on alone to its end and past it.
    fn alone(&mut self, lane: &mut Lane) -> Option<()> {
        while !lane.done {
            if self.inside_reach(lane)? {
                continue;
            }
            if lane.pos >= lane.end {
                self.tail(lane)?;
                continue;
            }
            let b = self.walk.text[lane.pos];
            match self.walk.step(lane.sid, b)? {
                Step::To(sid) => {
                    lane.sid = sid;
                    lane.pos += 1;
                }
                Step::Match(m) => self.matched(lane, m)?,
            }
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::rules::find_walking;

    /// Values, near misses the checks refuse (inside a match, so the next
    /// search starts inside what the walks noted) and plain text.
    const PIECES: &[&[u8]] = &[
        b"peer=10.7.3.4 ",
        b"db-7.internal:8080 ",
        b"ops@example-corp.com ",
        b"torch==10.1.2.3 ",
        b"libcudnn 10.3.0.26-1+cuda12.5 ",
        b"password=hunter2hunter2 ",
        b"/home/alice/run.log ",
        b"gpu-node-7:8080 ",
        b"v1.2.3.4 ",
        b"https://example.org/ref/1 ",
        b"ip-10-0-0-27 ",
        b"aa:bb:cc:dd:ee:ff ",
    ];

    /// A text of `len` bytes: plain lines, and a piece every `every`
    /// bytes or so, shifted by `shift`.
    fn dense(len: usize, every: usize, shift: usize) -> Vec<u8> {
        let filler = b"2026-09-08T08:44:00Z INFO decode=75.94 tok/s status=200\n";
        let mut text = Vec::with_capacity(len + 64);
        text.resize(shift, b'x');
        let mut k = 0;
        while text.len() < len {
            let next = text.len() + every;
            while text.len() < next {
                text.extend_from_slice(filler);
            }
            text.extend_from_slice(PIECES[k % PIECES.len()]);
            k += 1;
        }
        text.truncate(len);
        text
    }

    fn same_hits(text: &[u8], what: &str) -> usize {
        let (mut walking, mut alone) = (Vec::new(), Vec::new());
        find_walking(text, &mut walking, true);
        find_walking(text, &mut alone, false);
        assert!(
            walking == alone,
            "{what}: {} against {}",
            walking.len(),
            alone.len()
        );
        alone.len()
    }

    /// Texts dense with values and near misses, from one every few bytes
    /// to one every 70 KB, over more than two windows, shifted so values
    /// fall on parts' and windows' edges: the walks find what the search
    /// alone does.
    #[test]
    fn dense_texts_give_the_hits_the_search_alone_does() {
        let mut hits = 0;
        for every in [0, 13, 100, 700, 6400, 70_000] {
            for shift in [0, 1, 7, 29] {
                let len = if every < 1000 {
                    300_000
                } else {
                    WINDOW * 2 + 77_777
                };
                hits += same_hits(
                    &dense(len, every, shift),
                    &format!("every {every}, shift {shift}"),
                );
            }
        }
        assert!(hits > 10_000, "{hits}");
    }

    /// Texts shorter than the walks take, and a long text's short rest,
    /// are searched by the walks' own DFAs ([`Starts::search`]): the
    /// values they find are those the search alone finds, near misses
    /// and values at either end included, and the search starts where the
    /// next match begins, not where the last one left off.
    #[test]
    fn short_texts_give_the_hits_the_search_alone_does() {
        let mut hits = 0;
        for piece in PIECES {
            hits += same_hits(piece, "a piece alone");
        }
        for len in [0, 1, 9, 30, 200, 1000, MIN_LEN - 1, MIN_LEN, MIN_LEN + 37] {
            for every in [0, 13, 100, 700] {
                for shift in [0, 1, 7] {
                    let what = format!("{len} bytes, every {every}, shift {shift}");
                    let text = dense(len, every, shift);
                    hits += same_hits(&text, &what);
                    // Each piece at the very end of the text.
                    for piece in PIECES {
                        let mut ends = text.clone();
                        ends.extend_from_slice(piece.trim_ascii_end());
                        hits += same_hits(&ends, &what);
                    }
                }
            }
        }
        // Long texts whose rest past the walks' last window is short.
        for len in [WINDOW + 1, WINDOW + MIN_LEN - 1, 2 * WINDOW + 100] {
            for every in [13, 700] {
                let mut text = dense(len, every, 1);
                hits += same_hits(&text, &format!("{len} bytes, every {every}"));
                text.extend_from_slice(PIECES[0].trim_ascii_end());
                hits += same_hits(&text, &format!("{len} bytes, every {every}, a value last"));
            }
        }
        assert!(hits > 1_000, "{hits}");
        // Asked from the start of a short text, the answer is where its
        // one value begins.
        let text = b"decode=75.94 tok/s status=200 peer=10.7.3.4 done";
        let at = text.windows(8).position(|w| w == b"10.7.3.4").unwrap();
        assert_eq!(Starts::new(text, true).next(0), Some(at));
        assert_eq!(Starts::new(&text[..at], true).next(0), None);
    }

    /// The walks are what a search starts from: past each value, the next
    /// search starts where the next value begins, not where the last one
    /// left off.
    #[test]
    fn searches_start_where_the_walks_found_the_next_match() {
        let text = dense(200_000, 900, 3);
        let mut alone = Vec::new();
        find_walking(&text, &mut alone, false);
        let re = crate::redact::rules::builtin();
        let mut starts = Starts::new(&text, true);
        let (mut at, mut exact) = (0, 0);
        let mut found = 0;
        while let Some(from) = starts.next(at) {
            let Some(m) = re.find_at(&text, from) else {
                break;
            };
            if from == m.start() {
                exact += 1;
            }
            found += 1;
            at = m.end();
        }
        assert_eq!(starts.next(text.len() - 1), None);
        assert!(found > 150 && exact == found, "{exact} of {found}");
        assert!(!alone.is_empty());
    }

    /// The first window of `text` mapped: whether the walks could tell,
    /// the parts shared out, and the bytes walked to find matches' ends.
    fn map_window(text: &[u8]) -> (bool, usize, usize) {
        let mut regions = Vec::new();
        let mut cache = lanes::caches().get();
        let mut walk = Walk::new(cache.forward_mut(), text);
        let mut mapping = Mapping {
            walk: &mut walk,
            regions: &mut regions,
            steals: 0,
            reach: (0, 0),
            to_ends: 0,
        };
        let walked = mapping.run(0, text.len().min(WINDOW)).is_some();
        (walked, mapping.steals, mapping.to_ends)
    }

    /// Long matches (a PEM block, a long token) put one walk far ahead of
    /// the others: it takes half of what another has left, and the hits
    /// are still those of the search alone.
    #[test]
    fn a_walk_done_early_takes_half_of_another_part() {
        let mut pem = b"-----BEGIN RSA PRIVATE KEY-----\n".to_vec();
        for _ in 0..400 {
            pem.extend_from_slice(
                b"MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n",
            );
        }
        pem.extend_from_slice(b"-----END RSA PRIVATE KEY-----\n");
        let mut token = b" sk-proj-".to_vec();
        token.extend((0..30_000).map(|i| b"aZ09_-"[i % 6]));
        token.push(b'\n');
        for long in [&pem, &token] {
            for at in [10, 3000, 40_000] {
                let mut text = dense(300_000, 2000, 0);
                text.splice(at..at, long.iter().copied());
                let (walked, steals, _) = map_window(&text);
                assert!(walked && steals > 0, "at {at}");
                same_hits(&text, &format!("a long match at {at}"));
            }
        }
    }

    /// A match as long as most of a window is walked to its end once,
    /// not again by each walk whose part lies inside it or that takes
    /// half of such a part.
    #[test]
    fn a_long_match_is_walked_to_its_end_once() {
        let mut token = b" sk-proj-".to_vec();
        token.extend((0..700_000).map(|i| b"aZ09_-"[i % 6]));
        token.push(b'\n');
        for at in [10, 100_000] {
            let mut text = dense(WINDOW, 2000, 0);
            text.splice(at..at, token.iter().copied());
            let (walked, _, to_ends) = map_window(&text);
            assert!(walked, "at {at}");
            assert!(
                to_ends < token.len() + token.len() / 4,
                "at {at}: {to_ends} bytes walked to ends, for a match of {}",
                token.len()
            );
            same_hits(&text, &format!("a match of 700 KB at {at}"));
        }
    }
}
