# The script twin of 12-python.ipynb: notebooks/python_twin.py writes it from the notebook.

# # 12. passlab from Python
#
# Everything the earlier lessons did with passlab's command language can be
# done from Python, in any Python notebook or script: `import passlab` gives
# the same core — the same modules, pipelines, contexts and instruments —
# with the Python API of TVM's pass infrastructure, the design passlab
# follows. This lesson runs in an ordinary Python kernel (ipykernel), not in
# passlab's own.
#
# It goes through the seeds' own examples with LLVM's passes in place of
# Relay's: a `PassContext` entered with `with`, passes called on modules, an
# instrument written in Python that sees every pass LLVM runs, a pass written
# in Python beside LLVM's; then CompilerGym's environment for ordering
# passes, a short search, and the same search over a corpus on Ray.

import pathlib
import passlab
from passlab.transform import PassContext, LLVMPass, Sequential, PrintIR, function_pass
from passlab.instrument import pass_instrument, PassTimingInstrument

ZLIB = passlab.data.sample_inputs() / "zlib"  # zlib's sources, shipped with passlab

mod = passlab.Module.from_c('''
long sum_of_squares(const int *a, int n) {
  long s = 0;
  for (int i = 0; i < n; i++)
    s += (long)a[i] * a[i];
  return s;
}
''', name="sumsq.c")
print(repr(mod))

# ## Passes and contexts
#
# `Module.from_c` compiles C with clang-19 into the IR clang hands its own
# `-O2` pipeline. A pass is a callable: `new = seq(mod)` runs it on a
# copy of the module and returns the copy, `mod` left as it was (TVM's modules
# are values; `seq(mod, inplace=True)` or `mod.apply(seq)` changes `mod`
# itself). A `Sequential` runs its
# passes in order, each gated by the current `PassContext`: its opt level and
# its required and disabled passes — here the `licm` element is disabled, so
# it does not run. `PrintIR` prints the module where it stands in a
# sequence (below, after `sroa` on a one-line function).

seq = Sequential([
    LLVMPass("sroa"),
    LLVMPass("instcombine<no-verify-fixpoint>"),
    LLVMPass("loop-mssa(licm)"),
    LLVMPass("simplifycfg"),
])
with PassContext(opt_level=3, disabled_pass=["loop-mssa(licm)"]) as ctx:
    print(PassContext.current() is ctx, ctx)
    small = seq(mod)
print(mod.instcount, "->", small.instcount, "instructions")

sq = passlab.Module.from_c("int sq(int x) { return x * x; }", name="sq.c")
Sequential([LLVMPass("sroa"), PrintIR("after sroa")])(sq);

# ## An instrument in Python
#
# An instrument is a class with any of five hooks, marked with
# `@pass_instrument`. passlab calls it around every pass — including each
# pass LLVM runs inside `default<O2>`, on each function, loop and call-graph
# SCC. `info` names the pass, its IR unit and that unit's name; `mod` is the
# module as it stands, lent for the call. This one records how many
# instructions each pass removed.

import collections

@pass_instrument
class Shrinkage:
    def __init__(self):
        self.removed = collections.Counter()
        self.runs = collections.Counter()
        self.stack = []

    def run_before_pass(self, mod, info):
        self.stack.append(mod.instcount)

    def run_after_pass(self, mod, info):
        before = self.stack.pop()
        if info.inside_llvm:
            self.runs[(info.name, info.ir_unit)] += 1
            self.removed[(info.name, info.ir_unit)] += before - mod.instcount

shrink = Shrinkage()
timing = PassTimingInstrument()
with PassContext(instruments=[shrink, timing]):
    o2 = LLVMPass("default<O2>")(mod)
    profile = timing.render()   # inside: as TVM's, it is cleared when the context exits

import pandas as pd
table = pd.DataFrame(
    [(name, unit, shrink.runs[(name, unit)], removed) for (name, unit), removed in shrink.removed.most_common(6)],
    columns=["pass", "IR unit", "runs", "instructions removed"],
)
print(repr(table))

# The built-in instruments are there too: `PassTimingInstrument` (TVM's, with
# `render()`, read inside its `with`), `IRSizeInstrument` and `PassCountsInstrument`, their results as
# rows or `pandas` frames.

print("\n".join(profile.splitlines()[:6]))

# ## A pass in Python, beside LLVM's
#
# A Python pass edits the IR through `passlab.ir`: functions, blocks,
# instructions, operands and a builder. This is the strength reduction of
# lesson 7 (`x * 2^k` becomes `x << k`), written in Python. `required`
# makes `mem2reg` run first; the result is verified, and a pass that raises
# leaves the module as it was.

from passlab.ir import Builder

@function_pass(opt_level=2, name="strength-reduce", required=["mem2reg"])
def strength_reduce(func, mod, ctx):
    for inst in func.instructions:
        if inst.opcode != "mul":
            continue
        x, c = inst.operands
        k = c.int_value
        if not k or k < 0 or k & (k - 1):
            continue
        shl = Builder(before=inst).shl(x, x.const_int(k.bit_length() - 1))
        inst.replace_all_uses_with(shl)
        inst.erase()

grid = passlab.Module.from_c("long offset(long row, long col) { return (row * 64 + col) * 8; }", name="grid.c")
with PassContext(opt_level=2):
    ours = Sequential([strength_reduce])(grid)
    llvms = Sequential([LLVMPass("mem2reg"), LLVMPass("instcombine")])(grid)
print(ours.text("offset"))
print(llvms.text("offset"))

# Both turn the multiplications into shifts. instcombine goes further: it
# distributes `* 8` over the sum, so that `row << 9` and `col << 3` are added
# last.
#
# ## CompilerGym's environment
#
# `passlab.gym` registers `passlab/LlvmInstCount-v0`, CompilerGym's LLVM
# environment on LLVM 19: actions are passes run over the whole module,
# observations are CompilerGym's (`InstCount`, `Autophase`, the IR, …), and
# the reward is the instruction count's drop relative to what `-Oz` removes,
# so that an episode scoring 1.0 matches `-Oz`. A random agent, seeded:

import gymnasium
import passlab.gym

env = gymnasium.make("passlab/LlvmInstCount-v0", benchmark=ZLIB / "adler32.c", max_episode_steps=30)
obs, info = env.reset(seed=0)
env.action_space.seed(0)
total, done = 0.0, False
while not done:
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    total += reward
    done = terminated or truncated
print(f"start {env.unwrapped._initial}, after 30 random actions {info['instcount']}, -Oz {info['oz_instcount']}")
print(f"episode reward {total:.3f} (1.0 would match -Oz)")
print("opt-19 replays the episode to the same count:", env.unwrapped.validate().okay())

# ## A short search
#
# `passlab.search.tune` is what `:tune` runs for an instruction count: local
# search from `-Oz`'s own pipeline over a pool of size-reducing passes, so
# the first ordering it tries is `-Oz` itself.

from passlab.search import tune

adler = passlab.Module.from_c(ZLIB / "adler32.c", level="O1")
result = tune(adler, trials=60, seed=0)
best = result["best"]
print(f"-Oz: {result['baselines']['Oz']} instructions; best of 60 orderings: {best['instructions']}")

# ## On Ray
#
# `tune_corpus` runs one search per program; with `parallel="ray"`, each is
# a Ray task on the cluster `ray.init` connected to — here a local one with
# two CPUs. Seeded searches give the same results wherever they run.

import logging, os, secrets, shutil, tempfile
# A local cluster for this lesson, for this user only: Ray's servers listen
# on the machine's network too, so authentication stays on, with a token of
# this process's (Ray would otherwise write one into ~/.ray).
os.environ["RAY_AUTH_MODE"] = "token"
os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))
logging.getLogger("ray.widgets.util").setLevel(logging.ERROR)  # no advice on progress bars
import ray
from passlab.search import tune_corpus

folder = tempfile.mkdtemp(prefix="plab-ray-")  # Ray's session files, removed below
ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
         logging_level=logging.ERROR, _temp_dir=folder)
corpus = [ZLIB / name for name in ("adler32.c", "compress.c", "uncompr.c", "zutil.c")]
on_ray = tune_corpus(corpus, trials=30, seed=1, parallel="ray")
here = tune_corpus(corpus, trials=30, seed=1)
ray.shutdown()
shutil.rmtree(folder, ignore_errors=True)

print(pd.DataFrame({
    "program": [pathlib.Path(r["benchmark"]).name for r in on_ray],
    "-Oz": [r["baselines"]["Oz"] for r in on_ray],
    "best on Ray": [r["best"]["instructions"] for r in on_ray],
    "best here": [r["best"]["instructions"] for r in here],
}).to_string(index=False))
orderings = lambda results: [[t["ordering"] for t in r["trials"]] for r in results]
print("the same orderings tried on Ray and here:", orderings(on_ray) == orderings(here))

# ## Where next
#
# * `docs/src/python.md` — the whole Python API, and how CompilerGym's names map to
#   passlab's.
# * `%load_ext passlab` gives `%%passlab` cells: the command language of the
#   other lessons, in this kernel.
