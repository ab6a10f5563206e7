//! The pools of passes searches draw from, and the ordering local search
//! starts from. A pool names passes as `:run` takes them (with LLVM's
//! pass parameters where a pipeline uses them); `pool=NAME` in `:tune` and
//! sweep specs stands for a named pool ([`POOLS`]).

/// The default pool: LLVM's function and module passes that CompilerGym's
/// action space and LLVM's own -O pipelines use most, by their new pass
/// manager names (instcombine as those pipelines run it: without the
/// fixpoint check that makes LLVM 19 give up on a run).
pub const DEFAULT_POOL: &[&str] = &[
    "mem2reg",
    "sroa",
    "early-cse",
    "instcombine<no-verify-fixpoint>",
    "aggressive-instcombine",
    "instsimplify",
    "simplifycfg",
    "reassociate",
    "gvn",
    "newgvn",
    "sccp",
    "ipsccp",
    "adce",
    "dce",
    "dse",
    "bdce",
    "correlated-propagation",
    "jump-threading",
    "licm",
    "loop-rotate",
    "loop-deletion",
    "loop-idiom",
    "indvars",
    "loop-unroll",
    "loop-simplifycfg",
    "memcpyopt",
    "tailcallelim",
    "inline",
    "globalopt",
    "globaldce",
    "deadargelim",
    "function-attrs",
    "loop-vectorize",
    "slp-vectorizer",
];

/// LLVM 19's `default<Oz>` as 43 actions, each run over the whole module
/// on its own, in order: what `opt-19 -passes='default<Oz>'
/// -print-pipeline-passes` prints, each function pass taken out of its
/// `function(…)` adaptor with its parameters as printed, loop passes kept
/// in their `loop(…)` groups, and the inline-and-simplify unit run by
/// `scc-oz-module-inliner` (the CGSCC pipeline with -Oz's inliner
/// parameters, which the printed text cannot carry). Left out: what does
/// nothing to a C module (annotations, coroutines, OpenMP, profile and
/// analysis requests, remarks, the verifier). Run one after the other they
/// make what `opt-19 -passes='default<Oz>'` makes (CompilerGym's -Oz; the
/// SLP vectorizer stays off, as LLVM's parser leaves it at Oz):
/// `tests/tune.rs` checks it on real C. [`Strategy::Local`](super::Strategy::Local)
/// starts here.
pub const OZ_ORDERING: &[&str] = &[
    "forceattrs",
    "inferattrs",
    "lower-expect",
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;no-switch-range-to-icmp;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>",
    "sroa<modify-cfg>",
    "early-cse<>",
    "ipsccp",
    "called-value-propagation",
    "globalopt",
    "mem2reg",
    "instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>",
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>",
    "always-inline",
    "scc-oz-module-inliner",
    "deadargelim",
    "globalopt",
    "globaldce",
    "elim-avail-extern",
    "rpo-function-attrs",
    "float2int",
    "lower-constant-intrinsics",
    "loop(loop-rotate<no-header-duplication;no-prepare-for-lto>,loop-deletion)",
    "loop-distribute",
    "loop-vectorize<no-interleave-forced-only;vectorize-forced-only;>",
    "infer-alignment",
    "loop-load-elim",
    "instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>",
    "simplifycfg<bonus-inst-threshold=1;forward-switch-cond;switch-range-to-icmp;switch-to-lookup;no-keep-loops;hoist-common-insts;sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>",
    "vector-combine",
    "instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>",
    "loop-unroll<O2>",
    "sroa<preserve-cfg>",
    "infer-alignment",
    "instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>",
    "loop-mssa(licm<allowspeculation>)",
    "alignment-from-assumptions",
    "loop-sink",
    "instsimplify",
    "div-rem-pairs",
    "tailcallelim",
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;speculate-unpredictables>",
    "globaldce",
    "constmerge",
];

/// `scc-oz-module-inliner`'s CGSCC unit without its inliner: the function
/// simplification pipeline -Oz runs over each SCC of the call graph,
/// bottom-up, as text (`inline` written out would take LLVM's default
/// threshold, not -Oz's).
pub const OZ_SIMPLIFY_WITHOUT_INLINER: &str = "cgscc(devirt<4>(function-attrs<skip-non-recursive-function-attrs>,function<eager-inv;no-rerun>(sroa<modify-cfg>,early-cse<memssa>,speculative-execution<only-if-divergent-target>,jump-threading,correlated-propagation,simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>,instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>,aggressive-instcombine,tailcallelim,simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>,reassociate,constraint-elimination,loop-mssa(loop-instsimplify,loop-simplifycfg,licm<no-allowspeculation>,loop-rotate<no-header-duplication;no-prepare-for-lto>,licm<allowspeculation>,simple-loop-unswitch<no-nontrivial;trivial>),simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>,instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>,loop(loop-idiom,indvars,simple-loop-unswitch<no-nontrivial;trivial>,loop-deletion,loop-unroll-full),sroa<modify-cfg>,vector-combine,mldst-motion<no-split-footer-bb>,gvn<>,sccp,bdce,instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>,jump-threading,correlated-propagation,adce,memcpyopt,dse,move-auto-init,loop-mssa(licm<allowspeculation>),coro-elide,simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;keep-loops;hoist-common-insts;sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>,instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>),function-attrs))";

/// The orderings local search tries right after -Oz's
/// ([`Strategy::Local`](super::Strategy::Local)), before its moves: -Oz
/// changed where it pays most often for an instruction count, found by
/// measurement (opt-19 and passlab, the leaderboard's corpus and Lua's
/// library files, which it does not hold; the guide's "Beating -Oz"):
/// the IR outliner run twice just before -Oz's inliner (similar regions
/// become one function while they are still apart, and the inliner, at
/// -Oz's threshold, leaves the new functions out of line), with and
/// without one more outliner at the end; the same with -Oz's
/// simplification in place of the inline-and-simplify unit (no inlining
/// but `always_inline`'s); and the same with the unit at lower inliner
/// thresholds ([`OZ_INLINER_LOW_THRESHOLDS`]). Each is an ordering of
/// passes a user can run.
pub fn openings() -> Vec<Vec<&'static str>> {
    let inliner = "scc-oz-module-inliner";
    let low = OZ_INLINER_LOW_THRESHOLDS;
    let with = |unit: &'static str, end: bool| {
        let mut o = Vec::new();
        for &p in OZ_ORDERING {
            if p == inliner {
                o.extend(["iroutliner", "iroutliner", unit]);
            } else {
                o.push(p);
            }
        }
        if end {
            o.push("iroutliner");
        }
        o
    };
    vec![
        with(inliner, false),
        with(inliner, true),
        with(OZ_SIMPLIFY_WITHOUT_INLINER, false),
        with(OZ_SIMPLIFY_WITHOUT_INLINER, true),
        with(low, false),
        with(low, true),
    ]
}

/// -Oz's inline-and-simplify unit with LLVM's inliner thresholds below
/// -Oz's (`opt-19 -inline-threshold=-20 -inlinehint-threshold=-20
/// -passes=scc-oz-module-inliner`; see [`crate::pipeline::opt_spelling`]):
/// it inlines a function where that leaves fewer instructions, or where
/// it has one caller, and little else. With the outliner before it (an
/// opening), 1.048x -Oz's instruction count over the leaderboard's
/// corpus as one ordering, against 1.029x at -Oz's thresholds.
pub const OZ_INLINER_LOW_THRESHOLDS: &str =
    "scc-oz-module-inliner<inline-threshold=-20;inlinehint-threshold=-20>";

/// Whether a pool element is one of the few that cost most to run: an
/// inline-and-simplify unit or another CGSCC pipeline (a whole
/// simplification pipeline over every function), or the IR outliner
/// (measured on infback.c and lparser.c after -Oz's first passes: 26–92 ms
/// each, against a median of 3–7 ms over the size pool). Local search keeps
/// a move that ties with the best only when it adds neither passes nor
/// such elements, so orderings do not fill up with units that change
/// nothing and make every later trial slower.
pub fn costly(element: &str) -> bool {
    element.starts_with("scc-oz-module-inliner")
        || element.starts_with("cgscc(")
        || element == "iroutliner"
}

/// Passes -Oz does not run that can make a module smaller: hoisting common
/// code (not `gvn-sink`: LLVM 19's makes different modules from the same
/// input from one process to the next, measured on zlib's trees.c, so no
/// ordering with it replays), merging functions and comparisons, other value
/// numbering, switch tables, dead prototypes and arguments, the IR
/// outliner (similar regions become one function), -Oz's simplification
/// without inlining, the SLP and load-store vectorizers (neighbouring
/// scalar operations, loads and stores become one vector instruction:
/// after the outliner opening, 6% fewer instructions on adler32.c and
/// lstate.c; -Oz leaves the SLP vectorizer off); and shorter spellings of
/// -Oz's own passes.
const SIZE_EXTRAS: &[&str] = &[
    "iroutliner",
    OZ_SIMPLIFY_WITHOUT_INLINER,
    OZ_INLINER_LOW_THRESHOLDS,
    "gvn-hoist",
    "newgvn",
    "gvn",
    "mergeicmps",
    "mergefunc",
    "sink",
    "dce",
    "adce",
    "bdce",
    "sccp",
    "nary-reassociate",
    "reassociate",
    "strip-dead-prototypes",
    "argpromotion",
    "function-attrs",
    "jump-threading",
    "correlated-propagation",
    "constraint-elimination",
    "early-cse<memssa>",
    "aggressive-instcombine",
    "memcpyopt",
    "dse",
    "mldst-motion",
    "loop-idiom",
    "indvars",
    "loop-deletion",
    "loop-unroll-full",
    "loop-instsimplify",
    "loop-simplifycfg",
    "licm<no-allowspeculation>",
    "simple-loop-unswitch",
    "instcombine<no-verify-fixpoint>",
    "simplifycfg<switch-range-to-icmp>",
    "simplifycfg<switch-range-to-icmp;hoist-common-insts;sink-common-insts>",
    "simplifycfg<switch-range-to-icmp;switch-to-lookup;hoist-common-insts;sink-common-insts>",
    "simplifycfg<switch-range-to-icmp;switch-to-lookup;no-keep-loops>",
    "slp-vectorizer",
    "load-store-vectorizer",
];

/// The pool for code size: every action of [`OZ_ORDERING`], then
/// [`SIZE_EXTRAS`], each once.
pub fn size_pool() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for p in OZ_ORDERING.iter().chain(SIZE_EXTRAS) {
        if !out.contains(p) {
            out.push(p);
        }
    }
    out
}

fn default_pool() -> Vec<&'static str> {
    DEFAULT_POOL.to_vec()
}

/// A named pool's passes.
pub type PoolPasses = fn() -> Vec<&'static str>;

/// The named pools, each with its passes: `pool=size` or `pool=default`,
/// alone or among passes.
pub const POOLS: &[(&str, PoolPasses)] = &[("default", default_pool), ("size", size_pool)];

/// The passes of the named pool `name`.
pub fn named_pool(name: &str) -> Option<Vec<&'static str>> {
    POOLS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, passes)| passes())
}

/// A pool as given (`pool=size,loop-unroll`): named pools are replaced by
/// their passes; a pass named twice is kept once, where it first appears.
///
/// ```
/// use passlab::tune::{expand_pool, size_pool};
/// let p = expand_pool(&["size".to_string(), "mergefunc".to_string(), "loop-unroll".to_string()]);
/// assert_eq!(p.len(), size_pool().len() + 1);
/// assert_eq!(p.last().unwrap(), "loop-unroll");
/// ```
pub fn expand_pool(names: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        let passes: Vec<String> = match named_pool(n) {
            Some(p) => p.iter().map(|s| s.to_string()).collect(),
            None => vec![n.clone()],
        };
        for p in passes {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pass_of_the_oz_ordering_is_in_the_size_pool_and_parses() {
        let size = size_pool();
        for p in OZ_ORDERING {
            assert!(size.contains(p), "{p}");
        }
        assert_eq!(OZ_ORDERING.len(), 43);
        for p in size.iter().chain(DEFAULT_POOL) {
            crate::pipeline::parse(p).unwrap_or_else(|e| panic!("{p}: {e}"));
        }
    }
}
