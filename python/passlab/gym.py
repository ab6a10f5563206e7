"""A gymnasium environment for ordering LLVM passes: CompilerGym's LLVM
environment (``llvm-ic-v0``) on LLVM 19.

::

    import gymnasium, passlab.gym
    env = gymnasium.make("passlab/LlvmInstCount-v0", benchmark="prog.c")
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    env.unwrapped.validate()          # the episode replayed by opt-19

* ``benchmark``: a C, C++, IR or bitcode file, a folder of them, a
  :class:`passlab.Module`, a list of these, or ``"samples"``: the 28 C
  files of the guide's leaderboard (zlib and Lua); an episode takes one (chosen
  with the environment's random generator, or ``options={"benchmark": x}``
  in ``reset``). C is compiled as CompilerGym's cBench-v1 was:
  ``clang-19 -O1 -Xclang -disable-llvm-passes`` (``level="O1"``).
* Actions: ``Discrete(n)`` over a pool of passes, each run over the whole
  module as ``:run`` runs it: ``actions="size"`` (default: -Oz's own
  pipeline as its 43 pieces, then passes that shrink code), ``"default"``,
  or a list of pass texts.
* Observations (``observation_space=``): ``InstCount`` (70 counts),
  ``Autophase`` (56), ``InstCountNorm`` (69 fractions), ``Ir`` (the text),
  ``IrInstructionCount``; CompilerGym's definitions. Any of them on demand:
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

import dataclasses
import os
import pathlib
import shutil
import string
import subprocess
import tempfile

try:
    import gymnasium
    import numpy as np
    from gymnasium import spaces
except ImportError as e:  # pragma: no cover - depends on the venv
    raise ImportError(
        f"passlab.gym needs gymnasium and numpy ({e}): pip install gymnasium numpy, "
        "or install passlab with its gym extra (pip install './python[gym]')"
    ) from e

from . import _passlab
from ._passlab import Module
from .transform import LLVMPass, PassContext

ENV_ID = "passlab/LlvmInstCount-v0"

SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".ll", ".bc")

OBSERVATION_SPACES = ("InstCount", "Autophase", "InstCountNorm", "Ir", "IrInstructionCount")
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
    """passlab's sample inputs (``target/inputs`` of the passlab checkout
    this package was built from, or of ``PASSLAB_SOURCE``), linked there by
    the set-up."""
    root = os.environ.get("PASSLAB_SOURCE")
    root = pathlib.Path(root) if root else pathlib.Path(__file__).resolve().parents[2]
    folder = root / "target" / "inputs"
    if not (folder / "zlib").is_dir():
        raise _passlab.IoError(
            f"{folder}: passlab's sample inputs are not there; run the set-up "
            "(bash scripts/passlab.sh setup) in a passlab checkout and set PASSLAB_SOURCE to it"
        )
    return folder


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
        benchmark=None,
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
        self._benchmarks = _sources(benchmark)
        self._loaded = {}  # name -> (pristine module, -Oz's count)
        self.action_space = spaces.Discrete(len(self.action_names))
        self.observation_space = self._space(observation_space)
        self.observation = _Observations(self)
        self.module = None
        self.benchmark = None
        self.actions = []

    @staticmethod
    def _space(name):
        big = np.iinfo(np.int64).max
        if name == "InstCount":
            return spaces.Box(0, big, shape=(70,), dtype=np.int64)
        if name == "Autophase":
            return spaces.Box(0, big, shape=(56,), dtype=np.int64)
        if name == "InstCountNorm":
            return spaces.Box(0.0, np.finfo(np.float64).max, shape=(69,), dtype=np.float64)
        if name == "IrInstructionCount":
            return spaces.Box(0, big, shape=(1,), dtype=np.int64)
        return spaces.Text(max_length=1 << 30, min_length=0, charset=string.printable)

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
            self._loaded[key] = (module, oz.instcount)
        return self._loaded[key]

    def _observe(self, space):
        if self.module is None:
            raise passlab_error("no episode: call reset() first")
        if space == "Ir":
            return self.module.text()
        if space == "IrInstructionCount":
            return np.array([self.module.instcount], dtype=np.int64)
        if space == "InstCountNorm":
            return np.array(self.module.features(space), dtype=np.float64)
        if space in ("InstCount", "Autophase"):
            return np.array(self.module.features(space), dtype=np.int64)
        raise passlab_error(f"unknown observation space '{space}'; valid are: {', '.join(OBSERVATION_SPACES)}")

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        options = options or {}
        if "benchmark" in options:
            source = _sources(options["benchmark"])[0]
        else:
            source = self._benchmarks[int(self.np_random.integers(len(self._benchmarks)))]
        pristine, oz = self._load(source)
        self.module = pristine.copy()
        self.benchmark = _name(source)
        self.actions = []
        self._initial = self.module.instcount
        self._previous = self._initial
        self._oz = oz
        return self._observe(self.observation_space_name), self._info(None, False)

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
        before = self.module.fingerprint
        with self._context:
            self._passes[action](self.module, inplace=True)
        self.actions.append(action)
        count = self.module.instcount
        removed = self._previous - count
        if self.reward_space_name == "IrInstructionCountOz":
            reward = removed / max(self._initial - self._oz, 1)
        elif self.reward_space_name == "IrInstructionCountNorm":
            reward = removed / max(self._initial, 1)
        else:
            reward = float(removed)
        self._previous = count
        info = self._info(self.action_names[action], self.module.fingerprint == before)
        return self._observe(self.observation_space_name), float(reward), False, False, info

    def render(self):
        if self.render_mode == "ansi":
            return self.module.text() if self.module is not None else ""
        return None

    def commandline(self):
        """The episode's actions as opt-19 commands, one process per action
        (how :meth:`validate` replays them)."""
        names = [self.action_names[a] for a in self.actions]
        lines, at = [], "input.bc"
        for i, name in enumerate(names):
            out = f"step{i + 1}.bc"
            options, passes = _passlab.opt_spelling(name)
            flags = "".join(f"{o} " for o in options)
            lines.append(f"opt-19 --relocation-model=pic {flags}-passes='{passes}' {at} -o {out}")
            at = out
        return "\n".join(lines)

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
