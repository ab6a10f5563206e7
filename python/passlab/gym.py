"""A gymnasium environment for ordering LLVM passes: CompilerGym's LLVM
environment (``llvm-ic-v0``) on LLVM 19.

::

    import gymnasium, passlab.gym
    env = gymnasium.make("passlab/LlvmInstCount-v0", benchmark="prog.c")
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    env.unwrapped.validate()          # the episode replayed by opt-19

* ``benchmark``: a C, C++, IR or bitcode file, a folder of them, a
  :class:`passlab.Module`, a list of these, or ``"samples"`` (the default):
  the 28 C files of the guide's leaderboard (zlib and Lua); an episode
  takes one (chosen with the environment's random generator, or
  ``reset(benchmark=x)`` / ``options={"benchmark": x}``, kept for the
  later resets as CompilerGym keeps it).
* CompilerGym's contract besides: ``fork()``, ``copy.deepcopy``, pickling,
  ``multistep``, ``state`` and ``apply(state)``, ``commandline()`` (one
  opt-19 command line), ``in_episode``, ``episode_reward``. C is compiled as CompilerGym's cBench-v1 was:
  ``clang-19 -O1 -Xclang -disable-llvm-passes`` (``level="O1"``).
* Actions: ``Discrete(n)`` over a pool of passes, each run over the whole
  module as ``:run`` runs it: ``actions="size"`` (default: -Oz's own
  pipeline as its 43 pieces, then passes that shrink code), ``"default"``,
  or a list of pass texts.
* Observations (``observation_space=``): the core's observation spaces
  (``OBSERVATION_SPACES``, ``:help features``): ``InstCount`` (70 counts),
  ``Autophase`` (56), ``InstCountNorm`` (69 densities, float32),
  ``IrInstructionCount``, ``Ir`` (the text), ``IrSha1``; CompilerGym's
  definitions, dtypes and bounds. Any of them on demand:
  ``env.unwrapped.observation["Autophase"]``.
* Rewards (``reward_space=``): ``IrInstructionCountOz`` (default:
  instructions removed by the step over those -Oz removes from the
  starting module, so an episode's rewards sum to 1.0 where it matches
  -Oz), ``IrInstructionCountNorm`` (over the starting count),
  ``IrInstructionCount`` (instructions removed).

-Oz is ``default<Oz>`` as ``opt-19 -passes='default<Oz>'`` runs it (LLVM's
parser leaves SLP vectorization off at Oz); every pass runs in a
``PassContext`` with ``llvm.slp_vectorization=False`` so that no action
depends on a setting opt-19 does not have. Episodes never end on their own
(``terminated`` is always False, as in CompilerGym); give
``max_episode_steps`` to ``gymnasium.make`` for ``truncated``.
"""

import copy
import dataclasses
import os
import pathlib
import shlex
import shutil
import string
import subprocess
import tempfile
import time

try:
    import gymnasium
    import numpy as np
    from gymnasium import spaces
except ImportError as e:  # pragma: no cover - depends on the venv
    raise ImportError(
        f"passlab.gym needs gymnasium and numpy ({e}): pip install gymnasium numpy, "
        "or install passlab with its gym extra (pip install './python[gym]')"
    ) from e

from . import _passlab, data
from ._passlab import Module
from .transform import LLVMPass, PassContext

ENV_ID = "passlab/LlvmInstCount-v0"

SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".ll", ".bc")

# The core's table of observation spaces (`:help features`), by name.
_SPACES = {row["name"]: row for row in _passlab.observation_spaces()}
OBSERVATION_SPACES = tuple(_SPACES)
# -Oz's own pipeline as the actions that make it, one after the other.
OZ_ORDERING = tuple(_passlab.oz_ordering())

REWARD_SPACES = ("IrInstructionCountOz", "IrInstructionCountNorm", "IrInstructionCount")

# What opt-19 has that passlab's default context would not: SLP
# vectorization off unless a pipeline asks (see the module's docstring).
OPT19_CONFIG = {"llvm.slp_vectorization": False}


def action_pool(name):
    """The passes of a named pool (``size``, ``default``)."""
    pools = dict(_passlab.pools())
    if name not in pools:
        raise passlab_error(f"unknown pool '{name}'; valid are: {', '.join(pools)}")
    return list(pools[name])


def passlab_error(message):
    return _passlab.InvalidError(message)


def sample_inputs():
    """passlab's sample inputs (:func:`passlab.data.sample_inputs`)."""
    return data.sample_inputs()


def samples():
    """The leaderboard's corpus (28 real C files from zlib and Lua, the
    the guide's "Beating -Oz"): ``benchmark="samples"``."""
    folder = sample_inputs()
    return [folder / name for name in _passlab.sample_corpus()]


def _sources(benchmark):
    """The benchmarks a `benchmark=` argument names, in a fixed order."""
    if isinstance(benchmark, str) and benchmark == "samples":
        return samples()
    if benchmark is None:
        raise passlab_error(
            "no benchmark: give a C, C++, IR or bitcode file, a folder of them, "
            "a passlab.Module, or a list of these"
        )
    if isinstance(benchmark, (list, tuple)):
        out = []
        for b in benchmark:
            out.extend(_sources(b))
        if not out:
            raise passlab_error("an empty list of benchmarks: give at least one")
        return out
    if isinstance(benchmark, Module):
        return [benchmark.copy()]
    path = pathlib.Path(benchmark)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in SOURCE_SUFFIXES)
        if not files:
            raise passlab_error(f"{path}: no {', '.join(SOURCE_SUFFIXES)} files in this folder")
        return files
    if not path.exists():
        raise _passlab.MissingFileError(f"{path}: no such file or folder")
    if path.suffix not in SOURCE_SUFFIXES:
        raise passlab_error(f"{path}: not a benchmark; valid suffixes are {', '.join(SOURCE_SUFFIXES)}")
    if path.stat().st_size == 0:
        raise passlab_error(f"{path}: an empty file is not a benchmark")
    return [path]


def _name(source):
    return source.name if isinstance(source, Module) else str(source)


@dataclasses.dataclass
class ValidationResult:
    """An episode replayed by opt-19: the counts passlab and opt-19 reached
    after the actions, and for -Oz."""

    benchmark: str
    actions: list
    passlab_instcount: int
    opt_instcount: int
    passlab_oz_instcount: int
    opt_oz_instcount: int
    errors: list

    def okay(self):
        return not self.errors


@dataclasses.dataclass
class EnvState:
    """An episode as CompilerGym's ``CompilerEnvState``: the benchmark, the
    actions (as ``commandline``, and as indices), the episode's reward so
    far, and its wall time (not compared)."""

    benchmark: str
    commandline: str
    actions: list
    reward: float
    walltime: float = dataclasses.field(default=0.0, compare=False)


def pickle_copy(env):
    import pickle

    return pickle.loads(pickle.dumps(env))


class _Observations:
    """``env.observation[space]``: any observation space, computed now."""

    def __init__(self, env):
        self._env = env

    def __getitem__(self, space):
        return self._env._observe(space)


class LlvmEnv(gymnasium.Env):
    """See the module's docstring."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        benchmark="samples",
        observation_space="InstCount",
        reward_space="IrInstructionCountOz",
        actions="size",
        level="O1",
        clang_args=None,
        render_mode=None,
    ):
        if observation_space not in OBSERVATION_SPACES:
            raise passlab_error(
                f"unknown observation space '{observation_space}'; valid are: {', '.join(OBSERVATION_SPACES)}"
            )
        if reward_space not in REWARD_SPACES:
            raise passlab_error(f"unknown reward space '{reward_space}'; valid are: {', '.join(REWARD_SPACES)}")
        if render_mode not in (None, "ansi"):
            raise passlab_error(f"unknown render mode '{render_mode}'; valid is: ansi")
        self.render_mode = render_mode
        self.observation_space_name = observation_space
        self.reward_space_name = reward_space
        self.level = level
        self.clang_args = list(clang_args or [])
        self.action_names = action_pool(actions) if isinstance(actions, str) else list(actions)
        if not self.action_names:
            raise passlab_error("an empty action list")
        # Checked now: an unknown pass is an error at make(), not mid-episode.
        self._passes = [LLVMPass(a) for a in self.action_names]
        self._context = PassContext(opt_level=2, config=OPT19_CONFIG)
        # No benchmark (gymnasium.make's default): the shipped samples.
        self._benchmarks = _sources("samples" if benchmark is None else benchmark)
        self._forced = None  # a benchmark reset(benchmark=...) keeps
        self._loaded = {}  # name -> (pristine module, -Oz's count)
        self.action_space = spaces.Discrete(len(self.action_names))
        self.observation_space = self._space(observation_space)
        self.observation = _Observations(self)
        self.module = None
        # What was observed of the module when its fingerprint was
        # `_seen_at` (a new module, or a step that changed it, has another).
        self._seen, self._seen_at = {}, None
        self._benchmark = None
        self.actions = []
        self.episode_reward = 0.0
        self._started = time.time()

    @staticmethod
    def _space(name):
        row = _SPACES[name]
        if row["len"] is None:
            return spaces.Text(max_length=1 << 30, min_length=0, charset=string.printable)
        dtype = np.dtype(row["dtype"])
        info = np.iinfo(dtype) if dtype.kind == "i" else np.finfo(dtype)
        high = info.max if row["high"] is None else row["high"]
        return spaces.Box(dtype.type(row["low"]), dtype.type(high), shape=(row["len"],), dtype=dtype)

    def _load(self, source):
        key = _name(source)
        if key not in self._loaded:
            if isinstance(source, Module):
                module = source.copy()
            elif source.suffix in (".ll", ".bc"):
                module = Module.from_file(source)
            else:
                # Its own folder on the include path, as the leaderboard
                # compiles the samples.
                args = [f"-I{source.parent}"] + self.clang_args
                module = Module.from_c(source, level=self.level, args=args)
            with PassContext(opt_level=2, config=OPT19_CONFIG):
                oz = LLVMPass("default<Oz>")(module)
            if not module.functions:
                raise passlab_error(f"{key}: an empty benchmark (no function with a body)")
            self._loaded[key] = (module, oz.instcount)
        return self._loaded[key]

    def _observe(self, space):
        if self.module is None:
            raise passlab_error("no episode: call reset() first")
        row = _SPACES.get(space)
        if row is None:
            raise passlab_error(f"unknown observation space '{space}'; valid are: {', '.join(OBSERVATION_SPACES)}")
        value = self.module.features(space)
        return value if row["len"] is None else np.array(value, dtype=row["dtype"])

    def _observe_step(self, space):
        """What `_observe` gives, kept while the module's fingerprint stays
        the same: a step whose pass changed nothing observes what the step
        before it did (a copy, so that the caller may change its array)."""
        if self._seen_at != self._fingerprint:
            self._seen, self._seen_at = {}, self._fingerprint
        value = self._seen.get(space)
        if value is None:
            value = self._seen[space] = self._observe(space)
        return value.copy() if isinstance(value, np.ndarray) else value

    @property
    def benchmark(self):
        """The episode's benchmark (its name). Set it (or give
        ``reset(benchmark=...)``) to use that benchmark for every later
        episode, from the next ``reset()`` on; set None to draw again."""
        return self._benchmark

    @benchmark.setter
    def benchmark(self, benchmark):
        self._forced = None if benchmark is None else self._resolve(benchmark)

    @property
    def in_episode(self):
        return self.module is not None

    def _resolve(self, benchmark):
        """One benchmark: a name of this environment's benchmarks, or what
        ``benchmark=`` takes (its first)."""
        if isinstance(benchmark, str):
            for source in self._benchmarks:
                if _name(source) == benchmark:
                    return source
        if isinstance(benchmark, EnvState):
            return self._resolve(benchmark.benchmark)
        return _sources(benchmark)[0]

    def reset(self, *, seed=None, options=None, benchmark=None):
        """A new episode. ``benchmark=`` (or ``options={"benchmark": ...}``)
        chooses its benchmark and keeps it for the later ``reset()``s, as
        CompilerGym's does; else the one kept, else one drawn with the
        environment's random generator."""
        super().reset(seed=seed)
        options = options or {}
        if benchmark is None:
            benchmark = options.get("benchmark")
        if benchmark is not None:
            self._forced = self._resolve(benchmark)
        if self._forced is not None:
            source = self._forced
        else:
            source = self._benchmarks[int(self.np_random.integers(len(self._benchmarks)))]
        pristine, oz = self._load(source)
        self.module = pristine.copy()
        self._benchmark = _name(source)
        self.actions = []
        self.episode_reward = 0.0
        self._started = time.time()
        self._initial = self.module.instcount
        self._previous = self._initial
        self._fingerprint = self.module.fingerprint
        self._oz = oz
        return self._observe_step(self.observation_space_name), self._info(None, False)

    def _info(self, action, no_effect):
        return {
            "benchmark": self.benchmark,
            "action": action,
            "action_had_no_effect": no_effect,
            "instcount": self._previous,
            "oz_instcount": self._oz,
        }

    def step(self, action):
        if self.module is None:
            raise passlab_error("no episode: call reset() first")
        if not self.action_space.contains(action):
            raise passlab_error(f"action {action!r} is not in Discrete({self.action_space.n})")
        action = int(action)
        # In place, without a snapshot: if the pass fails, the module is
        # made again from the benchmark by the episode's actions so far.
        pristine, _ = self._loaded[self._benchmark]
        done = [self._passes[a] for a in self.actions]
        try:
            with self._context:
                changed, self._fingerprint = self._passes[action]._step(self.module, self._fingerprint, pristine, done)
        except Exception:
            # (a fingerprint tells a module's objects apart, and the
            # module's are new)
            self._fingerprint = self.module.fingerprint
            raise
        self.actions.append(action)
        if changed:
            count = self.module.instcount
        else:
            # (its instructions are those counted before: the pass changed
            # nothing, as the module's fingerprint after it says)
            count = self._previous
        removed = self._previous - count
        if self.reward_space_name == "IrInstructionCountOz":
            reward = removed / max(self._initial - self._oz, 1)
        elif self.reward_space_name == "IrInstructionCountNorm":
            reward = removed / max(self._initial, 1)
        else:
            reward = float(removed)
        self._previous = count
        self.episode_reward += float(reward)
        info = self._info(self.action_names[action], not changed)
        return self._observe_step(self.observation_space_name), float(reward), False, False, info

    def multistep(self, actions):
        """Several steps (CompilerGym's ``multistep``): the last observation,
        the sum of the rewards, terminated, truncated and the last info."""
        actions = list(actions)
        if not actions:
            raise passlab_error("multistep needs at least one action")
        total = 0.0
        for action in actions:
            obs, reward, terminated, truncated, info = self.step(action)
            total += reward
        return obs, total, terminated, truncated, info

    @property
    def state(self):
        """The episode as an :class:`EnvState` (CompilerGym's ``env.state``)."""
        if self.module is None:
            raise passlab_error("no episode: call reset() first")
        return EnvState(
            benchmark=self.benchmark,
            commandline=self.commandline(),
            actions=list(self.actions),
            reward=self.episode_reward,
            walltime=time.time() - self._started,
        )

    def apply(self, state):
        """Replays ``state`` (an :class:`EnvState`) from a new episode on its
        benchmark (CompilerGym's ``apply``)."""
        self.reset(benchmark=state.benchmark)
        if state.actions:
            self.multistep(state.actions)

    def fork(self):
        """An independent copy of the environment and its episode, at the
        same point (CompilerGym's ``fork``): the module is copied, the
        benchmarks loaded so far are shared (they are never changed).
        Before ``reset()``, an episode is started first, as CompilerGym's."""
        if self.module is None:
            self.reset()
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._loaded = dict(self._loaded)
        new.module = self.module.copy()
        new._fingerprint = new.module.fingerprint
        new.actions = list(self.actions)
        new.action_space = copy.deepcopy(self.action_space)
        new._np_random = copy.deepcopy(self._np_random)
        new.observation = _Observations(new)
        return new

    def __deepcopy__(self, memo):
        return self.fork() if self.module is not None else pickle_copy(self)

    def __getstate__(self):
        # Modules pickle as bitcode; passes and the context are made again.
        state = dict(self.__dict__)
        for key in ("_passes", "_context", "observation"):
            state.pop(key, None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._passes = [LLVMPass(a) for a in self.action_names]
        self._context = PassContext(opt_level=2, config=OPT19_CONFIG)
        self.observation = _Observations(self)
        if self.module is not None:
            # (a fingerprint tells a module's objects apart: these are new)
            self._fingerprint = self.module.fingerprint

    def close(self):
        """Ends the episode (``in_episode`` is then False)."""
        self.module = None
        super().close()

    def render(self):
        if self.render_mode == "ansi":
            return self.module.text() if self.module is not None else ""
        return None

    def commandline(self):
        """The episode as one command line for a shell, CompilerGym's
        ``opt input.bc -o output.bc`` with opt-19's spelling:
        ``opt-19 --relocation-model=pic -passes='module(a,invalidate<all>,b)'
        input.bc -o output.bc``, each action over the whole module with
        fresh analyses, as passlab runs it (``input.bc`` is the episode's
        starting module: ``env.observation["Ir"]`` before any step, or the
        benchmark compiled as the environment compiles it). An action that
        opt-19 runs with options of its own (-Oz's inliner) is a command of
        its own, joined with ``&&``."""
        names = [self.action_names[a] for a in self.actions]
        groups = []  # (options, [names]) of consecutive actions
        for name in names:
            options, _ = _passlab.opt_spelling(name)
            if groups and groups[-1][0] == options:
                groups[-1][1].append(name)
            else:
                groups.append((options, [name]))
        if not groups:
            return "opt-19 --relocation-model=pic input.bc -o output.bc"
        commands = []
        for i, (options, group) in enumerate(groups):
            at = "input.bc" if i == 0 else f"step{i}.bc"
            out = "output.bc" if i == len(groups) - 1 else f"step{i + 1}.bc"
            parts, plugins = [], []
            for name in group:
                parts.append(self._opt_element(_passlab.opt_spelling(name)[1], plugins))
            passes = parts[0] if len(parts) == 1 else f"module({',invalidate<all>,'.join(parts)})"
            words = ["opt-19", "--relocation-model=pic", *options]
            words += [f"-load-pass-plugin={p}" for p in plugins]
            words += [f"-passes={passes}", at, "-o", out]
            commands.append(" ".join(shlex.quote(w) for w in words))
        return " && ".join(commands)

    def _opt_element(self, element, plugins):
        """One action as opt-19's -passes= spells it to run alone over the
        whole module (``function(loop-mssa(licm))``), as the environment's
        context tunes it; a pass LLVM prints as its expansion
        (``scc-oz-module-inliner``, whose printing loses -Oz's inline
        parameters) as written, which opt-19 runs as passlab does."""
        with self._context:
            spelled = _passlab.opt_pipeline(element)
        if spelled is None:  # pragma: no cover - every pool action is LLVM's
            raise passlab_error(f"opt-19 cannot run '{element}' as one pipeline")
        text, needs = spelled
        plugins.extend(p for p in needs if p not in plugins)
        base = element.split("<")[0]
        if "(" not in element and base not in text:
            return element
        return text

    def validate(self, opt="opt-19"):
        """Replays the episode with opt-19 — the starting module as bitcode,
        then one ``opt-19 --relocation-model=pic -passes=ACTION`` process per
        action, as CompilerGym applies actions — and compares its
        instruction count with this episode's; and -Oz's with
        ``opt-19 -passes='default<Oz>'``."""
        if self.module is None:
            raise passlab_error("no episode: call reset() first")
        if shutil.which(opt) is None:
            raise _passlab.ToolError(f"{opt} not found on PATH")
        pristine, oz = self._loaded[self.benchmark]
        names = [self.action_names[a] for a in self.actions]
        errors = []
        with tempfile.TemporaryDirectory(prefix="passlab-validate-") as tmp:
            start = os.path.join(tmp, "input.bc")
            pristine.save(start)

            def chain(elements):
                at = start
                for i, element in enumerate(elements):
                    out = os.path.join(tmp, f"step{i % 2}.bc")
                    options, passes = _passlab.opt_spelling(element)
                    run = subprocess.run(
                        [opt, "--relocation-model=pic", *options, f"-passes={passes}", at, "-o", out],
                        capture_output=True,
                        text=True,
                    )
                    if run.returncode != 0:
                        raise _passlab.ToolError(f"{opt} -passes={element}: {run.stderr.strip()}")
                    at = out
                return Module.from_file(at).instcount

            opt_count = chain(names)
            opt_oz = chain(["default<Oz>"])
        if opt_count != self.module.instcount:
            errors.append(f"opt-19 counts {opt_count} instructions after the actions; passlab {self.module.instcount}")
        if opt_oz != oz:
            errors.append(f"opt-19's -Oz makes {opt_oz} instructions; passlab's {oz}")
        return ValidationResult(
            benchmark=self.benchmark,
            actions=names,
            passlab_instcount=self.module.instcount,
            opt_instcount=opt_count,
            passlab_oz_instcount=oz,
            opt_oz_instcount=opt_oz,
            errors=errors,
        )


def register():
    """Registers ``passlab/LlvmInstCount-v0`` with gymnasium (done when
    ``passlab.gym`` is imported)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="passlab.gym:LlvmEnv")


register()
