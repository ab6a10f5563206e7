//! Pipelines: text such as `mem2reg,fold-int,function(licm),default<O2>`
//! turned into a [`Sequential`], and the default pipeline per opt level
//! (TVM's `OptimizeImpl` analog).
//!
//! The default pipelines are submitted to the registry here, as `O0` …
//! `O3`, `Os` and `Oz`, with `inventory::submit!(registry::BuiltIn { … })`:
//! each is LLVM's `default<…>` at its level, what clang-19 runs, and is
//! gated at its own level.

#![forbid(unsafe_code)]

use crate::context::PassContext;
use crate::instrument::{Bisect, BisectEntry};
use crate::module::{Level, Module};
use crate::pass::registry::{self, BuiltIn};
use crate::pass::{Pass, PassInfo, PassRef, Sequential};
use crate::{Error, Result};
use std::rc::Rc;
use std::sync::Arc;

/// How `opt-19` runs one element of a pipeline: the options it needs and
/// the `-passes=` text. Every element is LLVM's own text but one:
/// `scc-oz-module-inliner<inline-threshold=N;inlinehint-threshold=M>`,
/// -Oz's inline-and-simplify unit with LLVM's inliner options, which
/// `opt-19` spells with those options on its command line.
///
/// ```
/// let (options, passes) = passlab::pipeline::opt_spelling(
///     "scc-oz-module-inliner<inline-threshold=-20;inlinehint-threshold=-20>");
/// assert_eq!(options, ["-inline-threshold=-20", "-inlinehint-threshold=-20"]);
/// assert_eq!(passes, "scc-oz-module-inliner");
/// assert_eq!(passlab::pipeline::opt_spelling("instcombine").1, "instcombine");
/// ```
pub fn opt_spelling(element: &str) -> (Vec<String>, String) {
    let unit = "scc-oz-module-inliner";
    let options = element
        .trim()
        .strip_prefix(unit)
        .and_then(|rest| rest.strip_prefix('<'))
        .and_then(|rest| rest.strip_suffix('>'));
    match options {
        Some(options) => (
            options
                .split(';')
                .map(|o| format!("-{}", o.trim()))
                .collect(),
            unit.to_string(),
        ),
        None => (Vec::new(), element.to_string()),
    }
}

/// Splits pipeline text at the commas that are not inside `<…>` or `(…)`.
pub fn split(text: &str) -> Result<Vec<&str>> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => {
                depth -= 1;
                if depth < 0 {
                    return Err(unbalanced(text, i));
                }
            }
            ',' if depth == 0 => {
                parts.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(unbalanced(text, text.len()));
    }
    let last = text[start..].trim();
    if !last.is_empty() || !parts.is_empty() {
        parts.push(last);
    }
    if let Some(i) = parts.iter().position(|p| p.is_empty()) {
        return Err(Error::Pipeline {
            text: text.to_string(),
            message: format!("element {} is empty", i + 1),
            suggestions: vec![],
        });
    }
    Ok(parts)
}

fn unbalanced(text: &str, at: usize) -> Error {
    Error::Pipeline {
        text: text.to_string(),
        message: format!("unbalanced brackets at column {}", at + 1),
        suggestions: vec![],
    }
}

/// Parses pipeline text into a pass: one element gives that pass, several a
/// sequential (named after the text) whose elements are gated one by one.
/// Each element is a registered Rust pass or LLVM pipeline text.
///
/// ```
/// let p = passlab::pipeline::parse("mem2reg,fold-int,instcombine").unwrap();
/// assert_eq!(p.children().len(), 3);
/// let e = passlab::pipeline::parse("mem2reg,instcombin").unwrap_err();
/// assert_eq!(e.to_string(), "unknown pass 'instcombin'; did you mean 'instcombine'?");
/// ```
pub fn parse(text: &str) -> Result<PassRef> {
    let parts = split(text)?;
    let mut passes = parts
        .iter()
        .map(|p| registry::get_pass(p))
        .collect::<Result<Vec<_>>>()?;
    if passes.len() == 1 {
        return Ok(passes.remove(0));
    }
    Ok(Arc::new(Sequential::new(text.trim(), passes)))
}

/// A pipeline as `opt-19 -passes=` runs it (see [`llvm_spelling`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LlvmSpelling {
    /// The text for `-passes=`, as LLVM prints it once parsed.
    pub passes: String,
    /// The plugins it needs (`-load-pass-plugin=`).
    pub plugins: Vec<String>,
}

/// How `opt-19` would run `text`, when LLVM (and the plugins loaded) can
/// run all of it; `None` when a pass of it is passlab's or a user's.
pub fn llvm_spelling(text: &str) -> Option<LlvmSpelling> {
    let mut parts = Vec::new();
    let mut plugins = Vec::new();
    for part in split(text).ok()? {
        if let Some(level) = part
            .strip_prefix('O')
            .filter(|l| l.len() == 1)
            .and_then(|_| Level::parse(part).ok())
        {
            parts.push(format!("default<{level}>"));
            continue;
        }
        if !opt_spelling(part).0.is_empty() {
            // opt-19 needs options for it: not one -passes= text.
            return None;
        }
        match registry::llvm_origin(part)? {
            crate::registry::Origin::Plugin(path) => {
                if !plugins.contains(&path) {
                    plugins.push(path);
                }
            }
            crate::registry::Origin::BuiltIn => {}
            _ => return None,
        }
        parts.push(part.to_string());
    }
    // Each part alone, with every analysis dropped between two parts, as
    // passlab runs a list (each part over the whole module, with fresh
    // analyses): spelled as one pipeline, LLVM would run neighbouring
    // function passes function by function, and a pass could read an
    // analysis an earlier one left valid, and make another module.
    let spelled = parts
        .iter()
        .map(|p| {
            let tuning = crate::pass::llvm_pass::tuning(&PassContext::current(), p).ok()?;
            Some(as_given(&crate::llvm::spell_pipeline(p, &tuning).ok()?, p))
        })
        .collect::<Option<Vec<_>>>()?;
    let passes = match spelled.as_slice() {
        [one] => one.clone(),
        _ => format!("module({})", spelled.join(",invalidate<all>,")),
    };
    Some(LlvmSpelling { passes, plugins })
}

/// `spelled` (LLVM's printing of the one pass `part`) with the pass written
/// as `part` wrote it, inside the adaptors LLVM printed: LLVM's printer
/// leaves some parameters out (`ipsccp<no-func-spec>` prints as `ipsccp`,
/// which opt then runs with function specialization), and passlab runs
/// the pass as written. A pipeline (`default<O2>`) or a part whose pass
/// does not appear once is left as LLVM printed it.
fn as_given(spelled: &str, part: &str) -> String {
    let name = part.split('<').next().unwrap_or(part);
    if name.is_empty() || part.contains('(') {
        return spelled.to_string();
    }
    // Where `name` stands as a pass: after the start, `(` or `,`, and
    // followed by its parameters, `)`, `,` or the end.
    let bytes = spelled.as_bytes();
    let found: Vec<(usize, usize)> = spelled
        .match_indices(name)
        .filter_map(|(at, _)| {
            let before = at.checked_sub(1).map(|i| bytes[i]);
            if !matches!(before, None | Some(b'(') | Some(b',')) {
                return None;
            }
            let mut end = at + name.len();
            match bytes.get(end) {
                None | Some(b')') | Some(b',') => {}
                Some(b'<') => {
                    let close = spelled[end..].find('>')?;
                    end += close + 1;
                }
                _ => return None,
            }
            Some((at, end))
        })
        .collect();
    match found.as_slice() {
        [(at, end)] => format!("{}{part}{}", &spelled[..*at], &spelled[*end..]),
        _ => spelled.to_string(),
    }
}

/// The pipeline run when none is given, for an opt level: LLVM's
/// `default<On>` (opt level n, capped at 3), exactly what clang-19 runs at
/// `-On` (see [`level_pipeline`]).
pub fn default_pipeline(opt_level: u32) -> Result<PassRef> {
    level_pipeline(Level::from_opt_level(opt_level))
}

/// The default pipeline of `level`, registered as `O0` … `O3`, `Os`,
/// `Oz`: LLVM's `default<…>` at that level and nothing else, so that a
/// module clang handed over at that level ([`crate::module::Level`])
/// becomes what `clang-19 -O2` makes. It is a sequential, so the context's
/// disabled and required passes apply to its elements; it is gated at its
/// own level (2 for `Os` and `Oz`) whatever the context's opt level, so
/// that `O3` named at opt level 2 still runs LLVM's `default<O3>`.
pub fn level_pipeline(level: Level) -> Result<PassRef> {
    let passes = vec![registry::get_pass(&format!("default<{level}>"))?];
    Ok(Arc::new(
        Sequential::with_info(level_pipeline_info(level), passes).at_opt_level(gate(level)),
    ))
}

/// The opt level a default pipeline is gated at.
fn gate(level: Level) -> u32 {
    match level {
        Level::O0 => 0,
        Level::O1 => 1,
        Level::O2 | Level::Os | Level::Oz => 2,
        Level::O3 => 3,
    }
}

// The default pipelines by name, so that `O2` works wherever a pass name
// does.
inventory::submit! { BuiltIn { info: || level_pipeline_info(Level::O0), make: || level_or_panic(Level::O0) } }
inventory::submit! { BuiltIn { info: || level_pipeline_info(Level::O1), make: || level_or_panic(Level::O1) } }
inventory::submit! { BuiltIn { info: || level_pipeline_info(Level::O2), make: || level_or_panic(Level::O2) } }
inventory::submit! { BuiltIn { info: || level_pipeline_info(Level::O3), make: || level_or_panic(Level::O3) } }
inventory::submit! { BuiltIn { info: || level_pipeline_info(Level::Os), make: || level_or_panic(Level::Os) } }
inventory::submit! { BuiltIn { info: || level_pipeline_info(Level::Oz), make: || level_or_panic(Level::Oz) } }

fn level_or_panic(level: Level) -> PassRef {
    level_pipeline(level).expect("the default pipelines consist of registered passes")
}

/// The info of [`default_pipeline`] at an opt level: named `O0` … `O3`.
pub fn default_pipeline_info(opt_level: u32) -> PassInfo {
    level_pipeline_info(Level::from_opt_level(opt_level))
}

/// The info of [`level_pipeline`], registered under the level's name.
pub fn level_pipeline_info(level: Level) -> PassInfo {
    let what = match level {
        Level::Os => " (optimizing for size)",
        Level::Oz => " (optimizing for size above all)",
        _ => "",
    };
    PassInfo::new(level.name(), 0).describe(&format!(
        "LLVM's default<{level}>{what}, as clang-19 -{level} runs it"
    ))
}

/// What [`bisect_search`] found: the optional pass after which the result first
/// goes bad.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BisectFound {
    /// The culprit: the `index`-th optional pass.
    pub entry: BisectEntry,
    /// How many optional passes the whole pipeline asks about.
    pub total: usize,
    /// How many times the pipeline ran during the search.
    pub runs: usize,
}

/// Finds the first optional pass of `pass` after which `bad` holds for a
/// copy of `module`, by halving the bisect limit (the module itself is not
/// touched). `bad` must be false with no optional pass run and true after
/// the whole pipeline; each run uses the current context plus a
/// [`Bisect`](crate::instrument::Bisect).
pub fn bisect_search(
    module: &Module,
    pass: &dyn Pass,
    mut bad: impl FnMut(&Module) -> Result<bool>,
) -> Result<BisectFound> {
    let found = bisect_search_staged(module, pass, |_| Ok(0), |m, _| bad(m))?;
    Ok(BisectFound {
        entry: found
            .entry
            .ok_or_else(|| Error::setting("bisect", "the culprit is not a pass of the pipeline"))?,
        total: found.total,
        runs: found.runs,
    })
}

/// What [`bisect_search_staged`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StagedFound {
    /// The culprit's number among all optional passes (1-based).
    pub index: usize,
    /// The culprit when it is a pass of the pipeline (`index <= pipeline`);
    /// otherwise it is the later stage's `index - pipeline`-th.
    pub entry: Option<BisectEntry>,
    /// Optional passes in the pipeline, and in all (with the later stage).
    pub pipeline: usize,
    pub total: usize,
    /// How many times the pipeline ran during the search.
    pub runs: usize,
}

/// As [`bisect_search`], over the pipeline's optional passes and then
/// those of a later stage that runs on its result (the back end's: LLVM
/// numbers opt's and llc's together, so `-opt-bisect-limit` cuts through
/// both). `later(m)` counts the later stage's optional passes for the
/// module after the whole pipeline; `bad(m, limit)` judges the module with
/// the later stage's first `limit` optional passes run (`None`: all).
pub fn bisect_search_staged(
    module: &Module,
    pass: &dyn Pass,
    later: impl FnOnce(&Module) -> Result<usize>,
    mut bad: impl FnMut(&Module, Option<usize>) -> Result<bool>,
) -> Result<StagedFound> {
    let mut runs = 0;
    let mut run = |limit: Option<usize>, keep: bool| -> Result<(Module, Rc<Bisect>)> {
        let mut copy = module.copy();
        let b = Rc::new(Bisect::new(limit).keeping(keep));
        let scope = PassContext::inherit().with_instrument(b.clone()).enter()?;
        let result = pass.apply(&mut copy);
        drop(scope);
        result?;
        runs += 1;
        Ok((copy, b))
    };
    let (full, asked) = run(None, false)?;
    let pipeline_total = asked.asked();
    if !bad(&full, None)? {
        return Err(Error::ConditionNeverHolds {
            optional_passes: pipeline_total,
        });
    }
    let total = pipeline_total + later(&full)?;
    // The first `limit` optional passes of both stages.
    let mut attempt = |limit: usize| -> Result<bool> {
        if limit >= pipeline_total {
            return bad(&full, Some(limit - pipeline_total));
        }
        let (copy, _) = run(Some(limit), false)?;
        bad(&copy, Some(0))
    };
    if attempt(0)? {
        let message = "the condition already holds with no optional pass run (required passes or the input cause it)";
        return Err(Error::setting("bisect", message));
    }
    // Invariant: limit `lo` is good, limit `hi` is bad.
    let (mut lo, mut hi) = (0, total);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if attempt(mid)? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let entry = if hi <= pipeline_total {
        let (_, last) = run(Some(hi), true)?;
        let entry = last
            .entries()
            .into_iter()
            .find(|e| e.index == hi)
            .ok_or_else(|| {
                Error::setting(
                    "bisect",
                    format!(
                        "pass {hi} was not asked about again (the pipeline is not deterministic)"
                    ),
                )
            })?;
        Some(entry)
    } else {
        None
    };
    Ok(StagedFound {
        index: hi,
        entry,
        pipeline: pipeline_total,
        total,
        runs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_respects_brackets() {
        assert_eq!(
            split("a,function(b,c),d<x;y>").unwrap(),
            vec!["a", "function(b,c)", "d<x;y>"]
        );
        assert_eq!(split("").unwrap(), Vec::<&str>::new());
        assert!(split("a,,b")
            .unwrap_err()
            .to_string()
            .contains("element 2 is empty"));
        assert!(split("function(a")
            .unwrap_err()
            .to_string()
            .contains("unbalanced"));
    }

    #[test]
    fn a_list_is_spelled_for_opt_pass_by_pass_with_fresh_analyses() {
        let one = llvm_spelling("licm").unwrap();
        assert_eq!(one.passes, "function(loop-mssa(licm))");
        let two = llvm_spelling("sroa,licm").unwrap();
        assert_eq!(
            two.passes,
            "module(function(sroa),invalidate<all>,function(loop-mssa(licm)))"
        );
        // LLVM prints ipsccp without its parameter; opt must not
        // specialize functions where passlab did not.
        assert_eq!(
            llvm_spelling("ipsccp<no-func-spec>").unwrap().passes,
            "ipsccp<no-func-spec>"
        );
        assert_eq!(
            llvm_spelling("licm<no-allowspeculation>").unwrap().passes,
            "function(loop-mssa(licm<no-allowspeculation>))"
        );
        assert_eq!(
            as_given("function(sroa<modify-cfg>)", "sroa"),
            "function(sroa)"
        );
        assert_eq!(as_given("function(a,b)", "c"), "function(a,b)");
    }
}
