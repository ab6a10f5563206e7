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

/// LLVM 19's `default<Oz>` written as single passes, in order: what
/// `opt-19 -passes='default<Oz>' -print-pipeline-passes` prints, with each
/// pass taken out of its adaptor (`function(…)`, `cgscc(…)`, `loop(…)`)
/// and run over the whole module on its own, as CompilerGym's actions are.
/// Left out: what does nothing to a C module on its own (annotations,
/// coroutines, OpenMP, profile and analysis requests, remarks, the
/// verifier), and its late loop unrolling (`loop-unroll<O2>`), which only
/// grows code; function specialization stays off in `ipsccp`, as -Oz has
/// it. [`Strategy::Local`](super::Strategy::Local) starts here.
pub const OZ_ORDERING: &[&str] = &[
    "forceattrs",
    "inferattrs",
    "lower-expect",
    "simplifycfg",
    "sroa",
    "early-cse",
    "ipsccp<no-func-spec>",
    "called-value-propagation",
    "globalopt",
    "mem2reg",
    "instcombine<no-verify-fixpoint>",
    "simplifycfg<switch-range-to-icmp>",
    "always-inline",
    "inline",
    "function-attrs",
    "sroa",
    "early-cse<memssa>",
    "jump-threading",
    "correlated-propagation",
    "simplifycfg<switch-range-to-icmp>",
    "instcombine<no-verify-fixpoint>",
    "aggressive-instcombine",
    "tailcallelim",
    "simplifycfg<switch-range-to-icmp>",
    "reassociate",
    "constraint-elimination",
    "loop-instsimplify",
    "loop-simplifycfg",
    "licm<no-allowspeculation>",
    "loop-rotate<no-header-duplication>",
    "licm",
    "simple-loop-unswitch",
    "simplifycfg<switch-range-to-icmp>",
    "instcombine<no-verify-fixpoint>",
    "loop-idiom",
    "indvars",
    "simple-loop-unswitch",
    "loop-deletion",
    "loop-unroll-full",
    "sroa",
    "vector-combine",
    "mldst-motion",
    "gvn",
    "sccp",
    "bdce",
    "instcombine<no-verify-fixpoint>",
    "jump-threading",
    "correlated-propagation",
    "adce",
    "memcpyopt",
    "dse",
    "licm",
    "simplifycfg<switch-range-to-icmp;hoist-common-insts;sink-common-insts>",
    "instcombine<no-verify-fixpoint>",
    "function-attrs",
    "deadargelim",
    "globalopt",
    "globaldce",
    "elim-avail-extern",
    "rpo-function-attrs",
    "float2int",
    "lower-constant-intrinsics",
    "loop-rotate<no-header-duplication>",
    "loop-deletion",
    "loop-distribute",
    "loop-load-elim",
    "instcombine<no-verify-fixpoint>",
    "simplifycfg<forward-switch-cond;switch-range-to-icmp;switch-to-lookup;no-keep-loops;hoist-common-insts;sink-common-insts>",
    "vector-combine",
    "instcombine<no-verify-fixpoint>",
    "sroa",
    "instcombine<no-verify-fixpoint>",
    "licm",
    "alignment-from-assumptions",
    "loop-sink",
    "instsimplify",
    "div-rem-pairs",
    "tailcallelim",
    "simplifycfg<switch-range-to-icmp>",
    "globaldce",
    "constmerge",
];

/// The pool for code size: every pass of [`OZ_ORDERING`], and passes -Oz
/// does not run that can make a module smaller (sinking and hoisting
/// common code, merging functions and comparisons, other value numbering,
/// switch tables, dead prototypes and arguments).
pub const SIZE_POOL: &[&str] = &[
    "forceattrs",
    "inferattrs",
    "lower-expect",
    "simplifycfg",
    "sroa",
    "early-cse",
    "ipsccp<no-func-spec>",
    "called-value-propagation",
    "globalopt",
    "mem2reg",
    "instcombine<no-verify-fixpoint>",
    "simplifycfg<switch-range-to-icmp>",
    "always-inline",
    "inline",
    "function-attrs",
    "early-cse<memssa>",
    "jump-threading",
    "correlated-propagation",
    "aggressive-instcombine",
    "tailcallelim",
    "reassociate",
    "constraint-elimination",
    "loop-instsimplify",
    "loop-simplifycfg",
    "licm<no-allowspeculation>",
    "loop-rotate<no-header-duplication>",
    "licm",
    "simple-loop-unswitch",
    "loop-idiom",
    "indvars",
    "loop-deletion",
    "loop-unroll-full",
    "vector-combine",
    "mldst-motion",
    "gvn",
    "sccp",
    "bdce",
    "adce",
    "memcpyopt",
    "dse",
    "simplifycfg<switch-range-to-icmp;hoist-common-insts;sink-common-insts>",
    "deadargelim",
    "globaldce",
    "elim-avail-extern",
    "rpo-function-attrs",
    "float2int",
    "lower-constant-intrinsics",
    "loop-distribute",
    "loop-load-elim",
    "simplifycfg<forward-switch-cond;switch-range-to-icmp;switch-to-lookup;no-keep-loops;hoist-common-insts;sink-common-insts>",
    "alignment-from-assumptions",
    "loop-sink",
    "instsimplify",
    "div-rem-pairs",
    "constmerge",
    "gvn-sink",
    "gvn-hoist",
    "newgvn",
    "mergeicmps",
    "mergefunc",
    "sink",
    "dce",
    "nary-reassociate",
    "loop-reduce",
    "strip-dead-prototypes",
    "argpromotion",
    "simplifycfg<switch-range-to-icmp;switch-to-lookup;hoist-common-insts;sink-common-insts>",
    "simplifycfg<switch-range-to-icmp;switch-to-lookup;no-keep-loops>",
];

/// The named pools: `pool=size` or `pool=default`, alone or among passes.
pub const POOLS: &[(&str, &[&str])] = &[("default", DEFAULT_POOL), ("size", SIZE_POOL)];

/// A pool as given (`pool=size,gvn-sink`): named pools are replaced by
/// their passes; a pass named twice is kept once, where it first appears.
///
/// ```
/// use passlab::tune::{expand_pool, SIZE_POOL};
/// let p = expand_pool(&["size".to_string(), "gvn-sink".to_string(), "loop-unroll".to_string()]);
/// assert_eq!(p.len(), SIZE_POOL.len() + 1);
/// assert_eq!(p.last().unwrap(), "loop-unroll");
/// ```
pub fn expand_pool(names: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        let passes: Vec<String> = match POOLS.iter().find(|(name, _)| name == n) {
            Some((_, p)) => p.iter().map(|s| s.to_string()).collect(),
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
        for p in OZ_ORDERING {
            assert!(SIZE_POOL.contains(p), "{p}");
        }
        for p in SIZE_POOL.iter().chain(DEFAULT_POOL) {
            crate::pipeline::parse(p).unwrap_or_else(|e| panic!("{p}: {e}"));
        }
    }
}
