"""The ordering search ``:tune`` runs, from Python; and one search per
program of a corpus, in this process or as Ray tasks.

::

    import passlab
    from passlab.search import tune, tune_corpus

    result = tune(passlab.Module.from_c("prog.c", level="O1"), trials=200, seed=0)
    result["best"]["ordering"], result["best"]["instructions"], result["baselines"]["Oz"]

    import ray
    ray.init(address="auto")                     # a running cluster
    results = tune_corpus(["a.c", "b.c"], trials=200, seed=0, parallel="ray")

A search of ``trials`` orderings repeats with its seed, wherever it runs:
a corpus searched as Ray tasks gives what it gives in one process.
"""

import pathlib

from ._passlab import Module, tune_instructions

__all__ = ["tune", "tune_corpus"]


def tune(module, trials=None, seconds=None, strategy=None, pool=None, seed=0, levels=True, coreset=None, warm=None):
    """Searches orderings that make ``module`` smallest in instructions (it
    is not changed): with neither ``strategy`` nor ``pool``, local search
    from -Oz's own pipeline (then its openings) over the ``size`` pool, as
    ``:tune`` does.

    ``trials`` (default 100) or ``seconds`` per strategy; ``strategy`` a
    name or a list (``random``, ``greedy``, ``hill``, ``local``, ``coreset``:
    the orderings learned once over a training corpus, tried in turn within
    ``seconds``, default 1; ``coreset`` a file made by ``passlab coreset``,
    default the one passlab ships); ``warm`` (``"coreset"`` or a file):
    local search opens with a coreset's orderings; ``pool`` a
    pool name or pass texts. Returns a dict: ``trials`` (each with phase,
    index, ordering, instructions, verdict), ``best``, ``baselines`` (O0,
    O2, O3, Oz), ``seed``, ``elapsed_s``.
    """
    if isinstance(strategy, str):
        strategy = [strategy]
    if isinstance(pool, str):
        pool = [pool]
    return tune_instructions(
        module,
        trials=trials,
        seconds=seconds,
        strategy=strategy,
        pool=pool,
        seed=seed,
        levels=levels,
        coreset=coreset,
        warm=warm,
    )


def _load(benchmark, level, clang_args):
    path = pathlib.Path(benchmark)
    if path.suffix in (".ll", ".bc"):
        return Module.from_file(path)
    return Module.from_c(path, level=level, args=clang_args)


def _tune_one(benchmark, path, level, clang_args, kwargs):
    result = tune(_load(path, level, clang_args), **kwargs)
    result["benchmark"] = benchmark
    return result


def tune_corpus(benchmarks, level="O1", clang_args=None, parallel=None, **kwargs):
    """One :func:`tune` per file of ``benchmarks`` (C, C++, IR or bitcode;
    C compiled as CompilerGym's cBench-v1 was, at ``level="O1"``), the
    results in the files' order.

    ``parallel=None`` runs them here, one after the other;
    ``parallel="ray"`` runs each as a Ray task on the cluster ``ray.init``
    connected this process to (``ray.init()`` first; a task takes one
    CPU). The other arguments are :func:`tune`'s, the same for every file.
    """
    benchmarks = [str(b) for b in benchmarks]
    # Loaded by absolute path: a Ray worker need not share this process's
    # working folder.
    paths = [str(pathlib.Path(b).resolve()) for b in benchmarks]
    clang_args = list(clang_args or [])
    if parallel is None:
        return [_tune_one(b, p, level, clang_args, kwargs) for b, p in zip(benchmarks, paths)]
    if parallel != "ray":
        raise ValueError(f"parallel is None or 'ray'; got {parallel!r}")
    import ray

    if not ray.is_initialized():
        raise RuntimeError("call ray.init() (or ray.init(address='auto') for a running cluster) first")
    remote = ray.remote(num_cpus=1)(_tune_one)
    return ray.get([remote.remote(b, p, level, clang_args, kwargs) for b, p in zip(benchmarks, paths)])
