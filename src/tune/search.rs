//! The search strategies: what ordering to try next, given the scores of
//! those tried so far. A [`Search`] is a plain state machine (no LLVM, no
//! clock unless the budget is in seconds), so the session and the child
//! that evaluates orderings step it alike and stay in step.
//!
//! Strategies (random, greedy, hill climbing, a fixed list) work on pool
//! indices with an ask/tell interface, within a budget of trials or
//! seconds, drawing from [`crate::rng::Rng`] (SplitMix64), so a seed gives
//! the same orderings on every platform.

pub use super::pools::OZ_ORDERING;
use super::pools::{costly, openings};
use crate::rng::Rng;
use std::time::{Duration, Instant};

/// How orderings are chosen (the space is CompilerGym's LLVM environment's:
/// an ordering is a sequence of passes from the pool, each run on its own,
/// one after the other).
#[derive(Clone, Debug, PartialEq)]
pub enum Strategy {
    /// Independent orderings: a length drawn from the allowed range, each
    /// pass drawn from the pool.
    Random,
    /// Greedy: from the empty ordering, try every pool pass appended to the
    /// best ordering so far, keep the best if it improves, stop when none
    /// does (CompilerGym's greedy search).
    Greedy,
    /// Hill climbing: start from a random ordering; each trial changes the
    /// current one by one move (replace, insert, delete or swap passes) and
    /// is kept when it scores no worse.
    Hill,
    /// Local search from LLVM's own -Oz pipeline written as single passes
    /// ([`OZ_ORDERING`], the passes of it that are in the pool): the first
    /// trial is that ordering, the next ones -Oz's openings (the changes
    /// to it that pay most often, [`openings`](super::pools::openings),
    /// those whose passes are all in the pool); each later one applies one or two moves
    /// (insert, delete, replace, swap; half of them in the last quarter,
    /// where a move is cheapest to evaluate and clean-up passes pay most)
    /// to the best so far, and is kept when it scores better, or as well
    /// without adding passes or costly elements
    /// ([`costly`](super::pools::costly)); an opening only when it scores
    /// better than what came before. Orderings
    /// may grow to the seed's length plus the longest allowed length.
    Local,
    /// The given orderings, in order.
    List(Vec<Vec<String>>),
}

impl Strategy {
    /// The name users type and results show.
    pub fn name(&self) -> &'static str {
        match self {
            Strategy::Random => "random",
            Strategy::Greedy => "greedy",
            Strategy::Hill => "hill",
            Strategy::Local => "local",
            Strategy::List(_) => "list",
        }
    }

    /// The searching strategies by name.
    pub const NAMES: &'static [&'static str] = &["random", "greedy", "hill", "local"];

    pub fn parse(name: &str) -> Option<Strategy> {
        match name {
            "random" => Some(Strategy::Random),
            "greedy" => Some(Strategy::Greedy),
            "hill" | "hill-climbing" => Some(Strategy::Hill),
            "local" => Some(Strategy::Local),
            _ => None,
        }
    }
}

/// How long one strategy searches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Budget {
    Trials(usize),
    Seconds(f64),
}

impl Budget {
    pub fn describe(&self) -> String {
        match self {
            Budget::Trials(n) => format!("{n} trials"),
            Budget::Seconds(s) => format!("{s} s"),
        }
    }
}

/// One strategy's search state (see the module documentation).
#[derive(Clone, Debug)]
pub struct Search {
    strategy: Strategy,
    pool: Vec<String>,
    lengths: (usize, usize),
    budget: Budget,
    rng: Rng,
    /// Trials told so far.
    told: usize,
    started: Option<Instant>,
    /// The ordering proposed and not yet told, as pool indices (for the
    /// list strategy, the index of the ordering).
    proposed: Option<Vec<usize>>,
    /// Hill climbing and greedy: the ordering kept and its score.
    current: Option<(Vec<usize>, f64)>,
    /// Greedy: the best of this round (pool index, score), and the next
    /// pool index to try; `None` before the empty ordering was tried.
    round: Option<(Option<(usize, f64)>, usize)>,
    finished: bool,
    /// Local search: the openings (see [`openings`]) whose passes are all in
    /// the pool, as pool indices.
    openings: Vec<Vec<usize>>,
    /// Set in the session while a child evaluates: the child alone decides
    /// when a budget in seconds is spent (the two clocks read differently).
    follow: bool,
    /// A list of orderings (not the baselines) that a budget in seconds
    /// stops too (a coreset's: see [`Search::timed`]).
    timed: bool,
}

impl Search {
    pub fn new(
        strategy: Strategy,
        pool: Vec<String>,
        lengths: (usize, usize),
        budget: Budget,
        seed: u64,
    ) -> Search {
        let openings = match strategy {
            Strategy::Local => openings()
                .iter()
                .filter_map(|o| {
                    o.iter()
                        .map(|p| pool.iter().position(|q| q == p))
                        .collect::<Option<Vec<usize>>>()
                })
                .collect(),
            _ => Vec::new(),
        };
        Search {
            openings,
            strategy,
            pool,
            lengths,
            budget,
            rng: Rng::new(seed),
            told: 0,
            started: None,
            proposed: None,
            current: None,
            round: None,
            finished: false,
            follow: false,
            timed: false,
        }
    }

    /// Local search with `orderings` as its openings in place of -Oz's
    /// (a warm start: a coreset's orderings); those with an action outside
    /// the pool, or equal to the seed ordering, are left out.
    pub fn with_openings(mut self, orderings: &[Vec<String>]) -> Search {
        let seed = self.seed_ordering();
        self.openings = orderings
            .iter()
            .filter_map(|o| {
                o.iter()
                    .map(|p| self.pool.iter().position(|q| q == p))
                    .collect::<Option<Vec<usize>>>()
            })
            .filter(|o| *o != seed)
            .collect();
        self
    }

    /// A list of orderings that a budget in seconds stops when it is
    /// spent, as it stops the other strategies (the baselines' list runs
    /// to its end; a budget in trials never cuts a list).
    pub fn timed(mut self) -> Search {
        self.timed = true;
        self
    }

    pub fn strategy(&self) -> &Strategy {
        &self.strategy
    }

    /// Trials told so far.
    pub fn trials(&self) -> usize {
        self.told
    }

    /// How far the budget is used, from 0 to 1.
    pub fn fraction(&self) -> f64 {
        match (self.budget, &self.strategy) {
            (_, Strategy::List(l)) => self.told as f64 / l.len().max(1) as f64,
            (Budget::Trials(n), _) => self.told as f64 / n.max(1) as f64,
            (Budget::Seconds(s), _) => self
                .started
                .map_or(0.0, |t| t.elapsed().as_secs_f64() / s.max(1e-9))
                .min(1.0),
        }
    }

    fn out_of_budget(&self) -> bool {
        if let Strategy::List(l) = &self.strategy {
            if self.told >= l.len() {
                return true;
            }
            if !self.timed {
                return false;
            }
        }
        match self.budget {
            Budget::Trials(n) => self.told >= n,
            Budget::Seconds(s) => {
                !self.follow
                    && self
                        .started
                        .is_some_and(|t| t.elapsed() >= Duration::from_secs_f64(s))
            }
        }
    }

    /// When a budget in seconds ends, once the search has started: the
    /// session stops the evaluating child then, whatever it is doing (a
    /// trial still running is not counted).
    pub(crate) fn deadline(&self) -> Option<Instant> {
        match (self.budget, &self.strategy, self.started) {
            (_, Strategy::List(_), _) if !self.timed => None,
            (Budget::Trials(_), _, _) | (_, _, None) => None,
            (Budget::Seconds(s), _, Some(t)) => Some(t + Duration::from_secs_f64(s)),
        }
    }

    /// Ends the search: the ordering proposed and not told is dropped.
    pub(crate) fn finish(&mut self) {
        self.finished = true;
        self.proposed = None;
    }

    /// Whether a budget in seconds is left to another process to decide
    /// (see the field).
    pub(crate) fn set_follow(&mut self, follow: bool) {
        self.follow = follow;
    }

    /// The next ordering to try, or `None` when the search is over. Asking
    /// again before [`tell`](Search::tell) gives the same ordering.
    pub fn ask(&mut self) -> Option<Vec<String>> {
        if self.proposed.is_none() {
            self.started.get_or_insert_with(Instant::now);
            if self.finished || self.out_of_budget() {
                return None;
            }
            let proposal = self.propose()?;
            self.proposed = Some(proposal);
        }
        let p = self.proposed.as_ref()?;
        Some(match &self.strategy {
            Strategy::List(l) => l[p[0]].clone(),
            _ => p.iter().map(|&i| self.pool[i].clone()).collect(),
        })
    }

    fn random_ordering(&mut self) -> Vec<usize> {
        let len = self.rng.between(self.lengths.0, self.lengths.1);
        (0..len).map(|_| self.rng.below(self.pool.len())).collect()
    }

    fn propose(&mut self) -> Option<Vec<usize>> {
        match self.strategy.clone() {
            Strategy::List(_) => Some(vec![self.told]),
            Strategy::Random => Some(self.random_ordering()),
            Strategy::Hill => match self.current.clone() {
                None => Some(self.random_ordering()),
                Some((mut o, _)) => {
                    self.mutate(&mut o);
                    Some(o)
                }
            },
            Strategy::Local if self.told == 0 => Some(self.seed_ordering()),
            Strategy::Local if self.told <= self.openings.len() => {
                Some(self.openings[self.told - 1].clone())
            }
            Strategy::Local => match self.current.clone() {
                None => Some(self.random_ordering()),
                Some((mut o, _)) => {
                    let moves = 1 + self.rng.below(2);
                    for _ in 0..moves {
                        self.local_move(&mut o);
                    }
                    Some(o)
                }
            },
            Strategy::Greedy => {
                let base = self.current.as_ref().map(|(o, _)| o.clone());
                match (base, self.round) {
                    (None, _) | (_, None) => Some(Vec::new()),
                    (Some(mut o), Some((_, next))) => {
                        o.push(next);
                        Some(o)
                    }
                }
            }
        }
    }

    /// LLVM's -Oz as single passes, those of them in the pool, as pool
    /// indices.
    fn seed_ordering(&self) -> Vec<usize> {
        OZ_ORDERING
            .iter()
            .filter_map(|p| self.pool.iter().position(|q| q == p))
            .collect()
    }

    /// One move of local search (see [`Strategy::Local`]).
    fn local_move(&mut self, o: &mut Vec<usize>) {
        let hi = OZ_ORDERING.len() + self.lengths.1;
        let n = self.pool.len();
        // Half the moves anywhere, half in the last quarter.
        let at = |rng: &mut Rng, len: usize| {
            if rng.below(2) == 0 || len < 4 {
                rng.below(len + 1)
            } else {
                len - len / 4 + rng.below(len / 4 + 1)
            }
        };
        loop {
            match self.rng.below(10) {
                0..=3 if o.len() < hi => {
                    let i = at(&mut self.rng, o.len());
                    o.insert(i, self.rng.below(n));
                }
                4..=6 if !o.is_empty() => {
                    let i = at(&mut self.rng, o.len() - 1);
                    o.remove(i);
                }
                7 | 8 if !o.is_empty() => {
                    let i = at(&mut self.rng, o.len() - 1);
                    o[i] = self.rng.below(n);
                }
                9 if o.len() >= 2 => {
                    let i = at(&mut self.rng, o.len() - 2);
                    o.swap(i, i + 1);
                }
                _ if o.is_empty() && n == 0 => return,
                _ => continue,
            }
            return;
        }
    }

    /// One move of hill climbing: replace a pass, insert one, delete one
    /// or swap two, keeping the length in range.
    fn mutate(&mut self, o: &mut Vec<usize>) {
        let (lo, hi) = self.lengths;
        loop {
            match self.rng.below(4) {
                0 if !o.is_empty() => {
                    let at = self.rng.below(o.len());
                    o[at] = self.rng.below(self.pool.len());
                }
                1 if o.len() < hi => {
                    let at = self.rng.below(o.len() + 1);
                    o.insert(at, self.rng.below(self.pool.len()));
                }
                2 if o.len() > lo.max(1) => {
                    let at = self.rng.below(o.len());
                    o.remove(at);
                }
                3 if o.len() >= 2 => {
                    let (a, b) = (self.rng.below(o.len()), self.rng.below(o.len()));
                    o.swap(a, b);
                }
                _ => continue,
            }
            return;
        }
    }

    /// The score of the ordering last given by [`ask`](Search::ask):
    /// lower is better; `None` when it failed or changed the result.
    pub fn tell(&mut self, score: Option<f64>) {
        let Some(p) = self.proposed.take() else {
            return;
        };
        self.told += 1;
        match self.strategy {
            Strategy::Random | Strategy::List(_) => {}
            Strategy::Hill | Strategy::Local => {
                // An opening replaces the best only when it is better: on a
                // tie the earlier ordering stays (-Oz's own first), which
                // later moves start from.
                // Local search keeps a move that ties only when it adds
                // neither passes nor costly elements (see `costly`).
                let local = matches!(self.strategy, Strategy::Local);
                let opening = local && (2..=self.openings.len() + 1).contains(&self.told);
                let heavy = |o: &[usize]| o.iter().filter(|&&i| costly(&self.pool[i])).count();
                if let Some(s) = score {
                    let keep = match &self.current {
                        None => true,
                        Some((_, c)) if s < *c => true,
                        Some((cur, c)) if s == *c => {
                            !opening
                                && (!local || (p.len() <= cur.len() && heavy(&p) <= heavy(cur)))
                        }
                        Some(_) => false,
                    };
                    if keep {
                        self.current = Some((p, s));
                    }
                }
            }
            Strategy::Greedy => match self.round {
                None => {
                    // The empty ordering: the score to improve on.
                    match score {
                        Some(s) => {
                            self.current = Some((Vec::new(), s));
                            self.round = Some((None, 0));
                        }
                        None => self.finished = true,
                    }
                }
                Some((best, next)) => {
                    let best = match (best, score) {
                        (Some((_, b)), Some(s)) if s < b => Some((next, s)),
                        (None, Some(s)) => Some((next, s)),
                        (b, _) => b,
                    };
                    if next + 1 < self.pool.len() {
                        self.round = Some((best, next + 1));
                        return;
                    }
                    // The round is over: keep its best if it improves.
                    let (mut base, base_score) = self.current.clone().unwrap_or_default();
                    match best {
                        Some((i, s)) if s < base_score => {
                            base.push(i);
                            self.finished = base.len() >= self.lengths.1;
                            self.current = Some((base, s));
                            self.round = Some((None, 0));
                        }
                        _ => self.finished = true,
                    }
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool() -> Vec<String> {
        ["a", "b", "c", "d"].map(String::from).to_vec()
    }

    /// Scores an ordering: the fewer 'a's and the more 'd's, the better.
    fn score(o: &[String]) -> f64 {
        o.iter()
            .map(|p| match p.as_str() {
                "a" => 2.0,
                "d" => -1.0,
                _ => 0.0,
            })
            .sum::<f64>()
            + 10.0
    }

    fn run(strategy: Strategy, seed: u64) -> Vec<Vec<String>> {
        let mut s = Search::new(strategy, pool(), (2, 5), Budget::Trials(30), seed);
        let mut tried = Vec::new();
        while let Some(o) = s.ask() {
            assert_eq!(s.ask(), Some(o.clone()), "asking twice gives the same");
            s.tell(Some(score(&o)));
            tried.push(o);
        }
        tried
    }

    #[test]
    fn same_seed_same_orderings_other_seed_others() {
        for st in [
            Strategy::Random,
            Strategy::Hill,
            Strategy::Greedy,
            Strategy::Local,
        ] {
            assert_eq!(run(st.clone(), 7), run(st.clone(), 7));
        }
        assert_ne!(run(Strategy::Random, 7), run(Strategy::Random, 8));
        let r = run(Strategy::Random, 1);
        assert_eq!(r.len(), 30);
        assert!(r.iter().all(|o| (2..=5).contains(&o.len())));
    }

    #[test]
    fn hill_climbing_only_keeps_what_is_no_worse() {
        let tried = run(Strategy::Hill, 3);
        let best = tried.iter().map(|o| score(o)).fold(f64::INFINITY, f64::min);
        // Each kept ordering is at most the first one's score; the search
        // reaches the best the moves allow within 30 trials here.
        assert!(best <= score(&tried[0]));
        assert!(best <= 7.0, "best {best}: {tried:?}");
    }

    #[test]
    fn local_search_starts_from_oz_in_the_pool_and_keeps_what_is_better_or_as_good_and_no_longer() {
        let pool: Vec<String> = ["sroa", "gvn", "a", "instcombine<no-verify-fixpoint>", "d"]
            .map(String::from)
            .to_vec();
        let score = |o: &[String]| 50.0 - o.iter().filter(|p| *p == "d").count() as f64;
        let mut s = Search::new(Strategy::Local, pool, (2, 5), Budget::Trials(200), 9);
        let first = s.ask().unwrap();
        // -Oz's passes that are in the pool, in -Oz's order.
        let expected: Vec<String> = OZ_ORDERING
            .iter()
            .filter(|p| ["sroa", "gvn", "instcombine<no-verify-fixpoint>"].contains(p))
            .map(|p| p.to_string())
            .collect();
        assert_eq!(first, expected);
        s.tell(Some(score(&first)));
        let mut best = score(&first);
        let mut previous = first;
        while let Some(o) = s.ask() {
            // One or two moves from the best so far: lengths differ by at
            // most two, and never past the seed's length plus the maximum.
            assert!(
                o.len().abs_diff(previous.len()) <= 2,
                "{o:?} from {previous:?}"
            );
            assert!(o.len() <= OZ_ORDERING.len() + 5);
            let sc = score(&o);
            s.tell(Some(sc));
            // No pass of this pool is costly: a tie is kept when it is no
            // longer.
            if sc < best || (sc == best && o.len() <= previous.len()) {
                best = sc;
                previous = o;
            }
        }
        assert!(best < 50.0 - 3.0, "the search adds 'd's: {best}");
    }

    #[test]
    fn local_search_tries_the_openings_after_oz_and_goes_on_from_the_best() {
        let pool: Vec<String> = super::super::size_pool()
            .iter()
            .map(|p| p.to_string())
            .collect();
        let mut s = Search::new(Strategy::Local, pool, (2, 5), Budget::Trials(20), 3);
        let oz = s.ask().unwrap();
        assert_eq!(oz, OZ_ORDERING.to_vec());
        s.tell(Some(100.0));
        let openings = openings();
        assert_eq!(openings.len(), 6);
        // The second opening scores best; a later one that ties with it
        // or scores worse is not kept.
        for (i, o) in openings.iter().enumerate() {
            assert_eq!(&s.ask().unwrap(), o);
            s.tell(Some(match i {
                1 | 4 => 90.0,
                _ => 95.0 + i as f64,
            }));
        }
        // The best is the second opening (not the fifth, which tied).
        let (kept, score) = s.current.clone().unwrap();
        let kept: Vec<&str> = kept.iter().map(|&i| s.pool[i].as_str()).collect();
        assert_eq!((kept, score), (openings[1].clone(), 90.0));
        let next = s.ask().unwrap();
        assert!(next.len().abs_diff(openings[1].len()) <= 2, "{next:?}");
        // Without the outliner in the pool there are no openings.
        let pool: Vec<String> = ["sroa", "gvn", "scc-oz-module-inliner"]
            .map(String::from)
            .to_vec();
        let mut s = Search::new(Strategy::Local, pool, (2, 5), Budget::Trials(20), 3);
        s.ask().unwrap();
        s.tell(Some(10.0));
        let next = s.ask().unwrap();
        assert!(next.len() <= 5, "{next:?}");
    }

    #[test]
    fn local_search_keeps_a_tie_only_when_it_adds_no_pass_and_no_costly_one() {
        let pool: Vec<String> = ["sroa", "gvn", "dce", "iroutliner", "scc-oz-module-inliner"]
            .map(String::from)
            .to_vec();
        let costly_count = |o: &[String]| o.iter().filter(|p| costly(p)).count();
        let mut s = Search::new(Strategy::Local, pool, (1, 6), Budget::Trials(400), 4);
        let first = s.ask().unwrap();
        s.tell(Some(10.0));
        let (mut kept, mut ties_kept, mut ties_dropped) = (first, 0, 0);
        while let Some(o) = s.ask() {
            // Every ordering ties: only those no longer and with no more
            // costly elements than the one kept replace it.
            s.tell(Some(10.0));
            let current: Vec<String> = {
                let (c, _) = s.current.clone().unwrap();
                c.iter().map(|&i| s.pool[i].clone()).collect()
            };
            let fits = o.len() <= kept.len() && costly_count(&o) <= costly_count(&kept);
            if fits {
                assert_eq!(current, o, "a tie that adds nothing is kept");
                ties_kept += 1;
            } else {
                assert_eq!(current, kept, "{o:?} added to {kept:?} and was kept");
                ties_dropped += 1;
            }
            kept = current;
        }
        assert!(
            ties_kept > 0 && ties_dropped > 0,
            "{ties_kept} {ties_dropped}"
        );
        // A better ordering is kept even when it is longer.
        let mut s = Search::new(
            Strategy::Local,
            ["sroa", "gvn", "iroutliner"].map(String::from).to_vec(),
            (1, 6),
            Budget::Trials(50),
            4,
        );
        let first = s.ask().unwrap();
        s.tell(Some(10.0));
        loop {
            let o = s.ask().unwrap();
            if o.len() > first.len() {
                s.tell(Some(9.0));
                let (c, score) = s.current.clone().unwrap();
                assert_eq!((c.len(), score), (o.len(), 9.0));
                break;
            }
            s.tell(Some(11.0));
        }
    }

    #[test]
    fn greedy_appends_the_best_pass_until_nothing_improves() {
        let tried = run(Strategy::Greedy, 0);
        assert_eq!(tried[0], Vec::<String>::new());
        // Round one tries each pass alone, keeps "d"; then "d,d" …
        assert_eq!(
            &tried[1..5],
            &[["a"], ["b"], ["c"], ["d"]].map(|o| o.map(String::from).to_vec())
        );
        assert_eq!(tried[5], ["d", "a"].map(String::from).to_vec());
        // Stops at the maximum length (5 passes): 1 + 5 rounds of 4.
        assert_eq!(tried.len(), 21);
        assert_eq!(tried.last().unwrap().len(), 5);
    }

    #[test]
    fn failed_orderings_are_never_kept() {
        let mut s = Search::new(Strategy::Hill, pool(), (1, 3), Budget::Trials(10), 5);
        let first = s.ask().unwrap();
        s.tell(None);
        // No current ordering: another random one, not a move from `first`.
        let second = s.ask().unwrap();
        s.tell(Some(1.0));
        let third = s.ask().unwrap();
        assert_ne!(first, second);
        assert!(third.len().abs_diff(second.len()) <= 1);
    }

    #[test]
    fn a_list_is_tried_in_order() {
        let l = vec![vec!["O2".to_string()], vec!["a".into(), "b".into()]];
        let mut s = Search::new(
            Strategy::List(l.clone()),
            pool(),
            (1, 1),
            Budget::Trials(1),
            0,
        );
        let mut got = Vec::new();
        while let Some(o) = s.ask() {
            s.tell(None);
            got.push(o);
        }
        assert_eq!(got, l);
    }
}
