//! Orderings learned once: a coreset (after Coreset-NVP, Liang et al.,
//! ICML 2023), a few orderings chosen over a training corpus so that
//! together they cover it — each program of the corpus is near its best
//! under one of them — then tried on a new program, each in turn within a
//! small budget, the best kept. No search on the new program: at most a
//! few dozen compilations.
//!
//! [`make`] chooses them: a local search on each training program (the
//! search `:tune` runs for an instruction count, a number of trials and a
//! seed, so the same corpus and seed give the same orderings), whose best
//! orderings, with -Oz's own pipeline as 43 actions and -Oz's openings,
//! are the candidates; every candidate is then counted on every program,
//! and greedy set cover picks them: -Oz's pipeline first (so that a
//! program whose coreset evaluation gets that far is never above -Oz),
//! then, until every program is within [`MakeSpec::near`] of its best
//! candidate, the candidate that brings the most programs there (ties: the
//! larger geomean gain, then the earlier candidate).
//!
//! A coreset is a text file ([`Coreset::to_text`]): `#` comments, then the
//! orderings, one action per line, a blank line between two orderings
//! (actions can hold commas: `loop(…)` groups). The project ships one made
//! from the leaderboard's training corpus ([`SHIPPED`], `coreset.txt`),
//! with the command that made it in its header. `:tune strategy=coreset`
//! tries one ([`strategy`]); `warm=coreset` makes its orderings local
//! search's openings ([`TuneSpec::warm`](super::TuneSpec::warm)).

use super::{openings, size_pool, tune, Budget, Strategy, TuneSpec, Tuning, OZ_ORDERING};
use crate::module::Module;
use crate::{Error, Result};
use std::path::Path;

/// The coreset the project ships: made from the leaderboard's training
/// corpus ([`super::SAMPLE_CORPUS`]) by the command its header names.
pub const SHIPPED: &str = include_str!("coreset.txt");

/// The most orderings a coreset may hold.
pub const MAX_SIZE: usize = 50;

/// A coreset's per-program budget when none is given, in seconds.
pub const DEFAULT_SECONDS: f64 = 1.0;

/// A set of orderings, each a list of actions as `:run` takes them.
#[derive(Clone, Debug, PartialEq)]
pub struct Coreset {
    pub orderings: Vec<Vec<String>>,
    /// The file's comments (without `# `), written back first.
    pub notes: Vec<String>,
}

impl Coreset {
    /// Reads a coreset's text (see the module documentation); each action
    /// must parse as a pipeline.
    pub fn parse(text: &str) -> Result<Coreset> {
        let mut orderings = Vec::new();
        let mut notes = Vec::new();
        let mut current: Vec<String> = Vec::new();
        for line in text.lines().map(str::trim) {
            if let Some(note) = line.strip_prefix('#') {
                notes.push(note.strip_prefix(' ').unwrap_or(note).to_string());
            } else if line.is_empty() {
                if !current.is_empty() {
                    orderings.push(std::mem::take(&mut current));
                }
            } else {
                crate::pipeline::parse(line)
                    .map_err(|e| Error::setting("coreset", format!("'{line}': {e}")))?;
                current.push(line.to_string());
            }
        }
        if !current.is_empty() {
            orderings.push(current);
        }
        if orderings.is_empty() || orderings.len() > MAX_SIZE {
            return Err(Error::setting(
                "coreset",
                format!(
                    "{} orderings; a coreset holds 1 to {MAX_SIZE}",
                    orderings.len()
                ),
            ));
        }
        Ok(Coreset { orderings, notes })
    }

    /// Reads a coreset file.
    pub fn load(path: &Path) -> Result<Coreset> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::setting("coreset", format!("{}: {e}", path.display())))?;
        Coreset::parse(&text)
    }

    /// The coreset the project ships ([`SHIPPED`]).
    pub fn shipped() -> Coreset {
        Coreset::parse(SHIPPED).expect("the shipped coreset parses")
    }

    /// The shipped coreset for `None` (or `coreset`), else the file named.
    pub fn named(file: Option<&str>) -> Result<Coreset> {
        match file {
            None | Some("coreset") | Some("shipped") => Ok(Coreset::shipped()),
            Some(f) => Coreset::load(Path::new(f)),
        }
    }

    /// The file's text: the notes as `#` comments, then the orderings.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for n in &self.notes {
            out.push_str(&format!("# {n}\n").replace("# \n", "#\n"));
        }
        for o in &self.orderings {
            out.push('\n');
            for a in o {
                out.push_str(a);
                out.push('\n');
            }
        }
        out
    }
}

/// The strategy that tries a coreset's orderings in turn (`:tune
/// strategy=coreset`).
pub fn strategy(coreset: &Coreset) -> Strategy {
    Strategy::List(coreset.orderings.clone())
}

/// A search that tries `coreset` on a program for an instruction count
/// within `seconds` (everything included, as any `:tune` budget in
/// seconds: a trial still running then is stopped and not counted).
pub fn spec(coreset: &Coreset, seconds: f64) -> TuneSpec {
    TuneSpec {
        strategies: vec![strategy(coreset)],
        pool: size_pool().iter().map(|s| s.to_string()).collect(),
        budget: Budget::Seconds(seconds),
        levels: false,
        ..TuneSpec::default()
    }
}

/// The strategies `:tune` takes by name: the searching ones and `coreset`.
pub const STRATEGY_NAMES: &[&str] = &["random", "greedy", "hill", "local", "coreset"];

/// The strategy `coreset` stands for until [`settle`] fills it in.
pub fn placeholder(name: &str) -> Option<Strategy> {
    (name == "coreset").then(|| Strategy::List(Vec::new()))
}

/// `:tune`'s (and Python's) coreset settings, once the others are read:
/// each `strategy=coreset` ([`placeholder`]) becomes the coreset named by
/// `file` (`coreset=FILE`; default the shipped one), whose budget is
/// [`DEFAULT_SECONDS`] when none was given; `warm` (`warm=coreset` or
/// `warm=FILE`) makes a coreset's orderings local search's openings, over
/// the size pool unless another pool was named.
pub fn settle(
    spec: &mut TuneSpec,
    file: Option<&str>,
    warm: Option<&str>,
    budget_given: bool,
) -> Result<()> {
    let empty = Strategy::List(Vec::new());
    if spec.strategies.contains(&empty) {
        let c = Coreset::named(file)?;
        for s in spec.strategies.iter_mut().filter(|s| **s == empty) {
            *s = strategy(&c);
        }
        if !budget_given {
            spec.budget = Budget::Seconds(DEFAULT_SECONDS);
        }
    }
    if let Some(w) = warm {
        spec.warm = Coreset::named(Some(w).filter(|w| *w != "coreset").or(file))?.orderings;
        // Its orderings are actions of the size pool: the default pool
        // would leave them out.
        if spec.pool == super::DEFAULT_POOL {
            spec.pool = size_pool().iter().map(|s| s.to_string()).collect();
        }
    }
    Ok(())
}

/// How [`make`] chooses.
#[derive(Clone, Debug, PartialEq)]
pub struct MakeSpec {
    /// The most orderings chosen (at most [`MAX_SIZE`]).
    pub size: usize,
    /// Local search's trials per training program.
    pub trials: usize,
    pub seed: u64,
    /// How far from its best candidate a program may be and count as
    /// covered, as a fraction of that best count.
    pub near: f64,
    /// How many of each program's best orderings become candidates.
    pub per_program: usize,
}

impl Default for MakeSpec {
    fn default() -> MakeSpec {
        MakeSpec {
            size: MAX_SIZE,
            trials: 100,
            seed: 0,
            near: 0.005,
            per_program: 2,
        }
    }
}

/// What [`make`] chose, and from what.
#[derive(Clone, Debug)]
pub struct Made {
    pub coreset: Coreset,
    /// The candidates, and each program's count under each (`None`: the
    /// trial failed).
    pub candidates: Vec<Vec<String>>,
    pub counts: Vec<Vec<Option<u64>>>,
    /// The candidates chosen, in order (indices into `candidates`).
    pub chosen: Vec<usize>,
}

fn search_spec(seed: u64, budget: Budget) -> TuneSpec {
    let mut s = TuneSpec {
        budget,
        seed,
        levels: false,
        ..TuneSpec::default()
    };
    s.goal_defaults(false, false);
    s
}

/// Each candidate's count on `module`, in the candidates' order.
fn counts_on(module: &Module, candidates: &[Vec<String>]) -> Result<Vec<Option<u64>>> {
    let mut s = search_spec(0, Budget::Trials(candidates.len()));
    s.strategies = vec![Strategy::List(candidates.to_vec())];
    let t: Tuning = tune(module, None, &s, &[], &mut |_, _| {})?;
    let mut out = vec![None; candidates.len()];
    for trial in t.searched() {
        if let Some(i) = candidates.iter().position(|c| *c == trial.ordering) {
            if t.score(trial).is_some() {
                out[i] = trial.instructions;
            }
        }
    }
    Ok(out)
}

/// Chooses a coreset over `programs` (name, module): see the module
/// documentation. `progress` hears what is being done.
pub fn make(
    programs: &[(String, &Module)],
    spec: &MakeSpec,
    progress: &mut dyn FnMut(&str),
) -> Result<Made> {
    if programs.is_empty() {
        return Err(Error::setting("coreset", "no programs to learn from"));
    }
    if !(1..=MAX_SIZE).contains(&spec.size) {
        return Err(Error::setting(
            "coreset",
            format!("size {} is not 1 to {MAX_SIZE}", spec.size),
        ));
    }
    let mut candidates: Vec<Vec<String>> =
        vec![OZ_ORDERING.iter().map(|s| s.to_string()).collect()];
    candidates.extend(
        openings()
            .into_iter()
            .map(|o| o.into_iter().map(str::to_string).collect()),
    );
    for (name, m) in programs {
        let t = tune(
            m,
            None,
            &search_spec(spec.seed, Budget::Trials(spec.trials)),
            &[],
            &mut |_, _| {},
        )?;
        for best in t.best(spec.per_program) {
            if !candidates.contains(&best.ordering) {
                candidates.push(best.ordering.clone());
            }
        }
        progress(&format!(
            "{name}: searched ({} trials), {} candidates",
            t.searched().count(),
            candidates.len()
        ));
    }
    let mut counts = Vec::new();
    for (name, m) in programs {
        counts.push(counts_on(m, &candidates)?);
        progress(&format!("{name}: counted under every candidate"));
    }
    let chosen = choose(&counts, spec.size, spec.near);
    let coreset = Coreset {
        orderings: chosen.iter().map(|&j| candidates[j].clone()).collect(),
        notes: Vec::new(),
    };
    Ok(Made {
        coreset,
        candidates,
        counts,
        chosen,
    })
}

/// Greedy set cover over `counts` (program × candidate): candidate 0
/// first, then the candidate that brings the most uncovered programs
/// within `near` of their best (ties: the larger sum of log gains over
/// what is chosen, then the lower index), until every program is covered
/// or `size` are chosen.
pub fn choose(counts: &[Vec<Option<u64>>], size: usize, near: f64) -> Vec<usize> {
    let n = counts.first().map_or(0, Vec::len);
    if n == 0 {
        return Vec::new();
    }
    let big = u64::MAX / 4;
    let c = |p: usize, j: usize| counts[p][j].unwrap_or(big);
    let threshold: Vec<u64> = (0..counts.len())
        .map(|p| {
            let best = (0..n).map(|j| c(p, j)).min().unwrap_or(big);
            best + (best as f64 * near).floor() as u64
        })
        .collect();
    let mut chosen = vec![0];
    let mut current: Vec<u64> = (0..counts.len()).map(|p| c(p, 0)).collect();
    while chosen.len() < size.min(n) {
        let uncovered: Vec<usize> = (0..counts.len())
            .filter(|&p| current[p] > threshold[p])
            .collect();
        if uncovered.is_empty() {
            break;
        }
        let mut pick: Option<(usize, f64, usize)> = None;
        for j in (0..n).filter(|j| !chosen.contains(j)) {
            let cover = uncovered
                .iter()
                .filter(|&&p| c(p, j) <= threshold[p])
                .count();
            let gain: f64 = (0..counts.len())
                .map(|p| (current[p] as f64 / current[p].min(c(p, j)) as f64).ln())
                .sum();
            let better = match pick {
                None => true,
                Some((bc, bg, _)) => cover > bc || (cover == bc && gain > bg + 1e-12),
            };
            if better {
                pick = Some((cover, gain, j));
            }
        }
        match pick {
            Some((cover, _, j)) if cover > 0 => {
                chosen.push(j);
                for (p, cur) in current.iter_mut().enumerate() {
                    *cur = (*cur).min(c(p, j));
                }
            }
            _ => break,
        }
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_cover_starts_from_the_first_and_covers_every_program() {
        let counts = vec![
            vec![Some(100), Some(90), Some(100), Some(95)],
            vec![Some(50), Some(50), Some(40), Some(45)],
            vec![Some(10), Some(10), Some(10), Some(10)],
        ];
        // 1 and 2 each cover one program; 2 gains more (50 -> 40).
        assert_eq!(choose(&counts, 10, 0.0), vec![0, 2, 1]);
        assert_eq!(choose(&counts, 2, 0.0), vec![0, 2]);
        // Within 20% of its best, the first program is covered by 0.
        assert_eq!(choose(&counts, 10, 0.2), vec![0, 2]);
    }

    #[test]
    fn a_coreset_reads_back_what_it_wrote() {
        let c = Coreset {
            orderings: vec![
                OZ_ORDERING.iter().map(|s| s.to_string()).collect(),
                vec!["simplifycfg".into()],
            ],
            notes: vec!["made by a test".into(), String::new()],
        };
        assert_eq!(Coreset::parse(&c.to_text()).unwrap(), c);
        assert!(Coreset::parse("# nothing\n").is_err());
    }
}
