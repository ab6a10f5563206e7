"""The gymnasium environment: gymnasium's own checker, CompilerGym's
spaces and reward, seeded episodes that repeat, and opt-19 replaying an
episode to the same instruction count."""

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import passlab
import passlab.gym


@pytest.fixture
def adler32(zlib):
    return zlib / "adler32.c"


def test_check_env(adler32):
    env = gymnasium.make("passlab/LlvmInstCount-v0", benchmark=adler32)
    check_env(env.unwrapped, skip_render_check=True)
    for space in passlab.gym.OBSERVATION_SPACES:
        e = passlab.gym.LlvmEnv(benchmark=adler32, observation_space=space)
        check_env(e, skip_render_check=True)


def test_spaces_and_reward(adler32):
    env = gymnasium.make("passlab/LlvmInstCount-v0", benchmark=adler32)
    obs, info = env.reset(seed=0)
    u = env.unwrapped
    assert obs.shape == (70,) and obs.dtype == np.int64
    assert obs[0] == info["instcount"] == u.module.instcount
    assert u.observation["Autophase"].shape == (56,)
    assert np.isclose(u.observation["InstCountNorm"][0], obs[1] / obs[0])
    assert u.observation["Ir"].startswith("; ModuleID")
    assert u.observation["IrInstructionCount"][0] == obs[0]
    # -Oz's own pipeline, action by action, ends at -Oz: the rewards sum to 1.
    oz = passlab.gym.OZ_ORDERING
    env2 = passlab.gym.LlvmEnv(benchmark=adler32, actions=oz)
    env2.reset(seed=0)
    total = 0.0
    for a in range(len(oz)):
        _, reward, terminated, truncated, info = env2.step(a)
        total += reward
        assert not terminated and not truncated
    assert info["instcount"] == info["oz_instcount"]
    assert total == pytest.approx(1.0)


def test_a_step_that_changes_nothing_observes_and_counts_as_the_one_before(adler32):
    env = passlab.gym.LlvmEnv(
        benchmark=adler32, actions=["instcombine", "no-op-module"], reward_space="IrInstructionCount"
    )
    env.reset(seed=0)
    obs, _, _, _, info = env.step(0)
    obs[:] = -1  # the caller's copy: the environment keeps its own
    again, reward, _, _, info = env.step(1)
    assert info["action_had_no_effect"] and reward == 0.0
    assert again[0] == env.module.instcount == info["instcount"]
    assert (again == env.module.features("InstCount")).all()
    # The module changed outside a step: the next step counts again, even
    # when its own pass changes nothing.
    before = env.module.instcount
    passlab.transform.LLVMPass("function(sroa,instcombine,simplifycfg,adce)")(env.module, inplace=True)
    assert env.module.instcount != before
    obs, reward, _, _, info = env.step(1)
    assert obs[0] == env.module.instcount == info["instcount"]
    assert reward == before - env.module.instcount


def test_every_observation_space_of_the_table_is_observed_as_declared(adler32):
    """The observation spaces' recipe: a row of the core's table is a space
    of `:features`, `Module.features` and the gym, with its dtype, shape
    and bounds (CompilerGym's: InstCountNorm is float32 in [0, 1])."""
    import hashlib

    from passlab._passlab import feature_names, observation_spaces

    rows = observation_spaces()
    assert [r["name"] for r in rows] == list(passlab.gym.OBSERVATION_SPACES)
    env = passlab.gym.LlvmEnv(benchmark=adler32)
    env.reset(seed=0)
    session = passlab.Session()
    session.execute_each(f":load {adler32}", lambda items, last: None)
    for r in rows:
        value = env.observation[r["name"]]
        space = passlab.gym.LlvmEnv._space(r["name"])
        assert space.contains(value), r["name"]
        if r["len"] is None:
            assert isinstance(value, str)
        else:
            assert value.shape == (r["len"],) and value.dtype == np.dtype(r["dtype"]), r["name"]
            assert len(feature_names(r["name"])) == r["len"]
        # :features knows it by the same name, in any case.
        session.execute_each(f":features {r['name'].lower()}", lambda items, last: None)
    assert env.observation["IrSha1"] == hashlib.sha1(env.module.text().encode()).hexdigest()
    assert passlab.gym.LlvmEnv._space("InstCountNorm").dtype == np.float32
    assert feature_names("InstCountNorm")[0] == "TotalBlocksDensity"


def test_a_seeded_episode_repeats(zlib):
    def episode(seed):
        env = passlab.gym.LlvmEnv(benchmark=zlib)
        obs, info = env.reset(seed=seed)
        env.action_space.seed(seed)
        out = [info["benchmark"]]
        for _ in range(15):
            obs, reward, *_ = env.step(env.action_space.sample())
            out.append((reward, obs.tolist()))
        return out

    assert episode(3) == episode(3)
    assert episode(3) != episode(4)


def test_validate_replays_the_episode_with_opt19(adler32):
    env = passlab.gym.LlvmEnv(benchmark=adler32)
    env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(20):
        env.step(env.action_space.sample())
    result = env.validate()
    assert result.okay(), result.errors
    assert result.opt_instcount == env.module.instcount
    assert result.opt_oz_instcount == result.passlab_oz_instcount
    # One command line (test_compiler_gym_peer.py runs it in opt-19).
    line = env.commandline()
    assert "\n" not in line and line.startswith("opt-19 --relocation-model=pic ")
    assert line.endswith(" -o output.bc")


def test_time_limit_truncates(adler32):
    env = gymnasium.make("passlab/LlvmInstCount-v0", benchmark=adler32, max_episode_steps=3)
    env.reset(seed=0)
    flags = [env.step(0)[3] for _ in range(3)]
    assert flags == [False, False, True]


def test_benchmarks_from_modules_lists_and_options(adler32, zlib):
    m = passlab.Module.from_c("int f(int x) { int y = x * 2; return y + 0; }", level="O1")
    env = passlab.gym.LlvmEnv(benchmark=[m, adler32])
    _, info = env.reset(options={"benchmark": adler32})
    assert info["benchmark"] == str(adler32)
    _, info = env.reset(options={"benchmark": m})
    assert info["benchmark"] == "input.c"
    env.step(0)
    assert m.instcount == passlab.Module.from_c("int f(int x) { int y = x * 2; return y + 0; }", level="O1").instcount


def test_bad_inputs_are_clear_errors(adler32, tmp_path):
    with pytest.raises(passlab.Error, match="an empty list of benchmarks"):
        passlab.gym.LlvmEnv(benchmark=[])
    with pytest.raises(passlab.IoError, match="no such file"):
        passlab.gym.LlvmEnv(benchmark=tmp_path / "nope.c")
    with pytest.raises(passlab.Error, match="no .c, .cc"):
        passlab.gym.LlvmEnv(benchmark=tmp_path)
    with pytest.raises(passlab.Error, match="unknown observation space 'Autofase'; valid are: InstCount"):
        passlab.gym.LlvmEnv(benchmark=adler32, observation_space="Autofase")
    with pytest.raises(passlab.Error, match="unknown reward space"):
        passlab.gym.LlvmEnv(benchmark=adler32, reward_space="Runtime")
    with pytest.raises(passlab.Error, match="unknown pool 'tiny'; valid are: default, size"):
        passlab.gym.LlvmEnv(benchmark=adler32, actions="tiny")
    with pytest.raises(passlab.UnknownPassError, match="did you mean"):
        passlab.gym.LlvmEnv(benchmark=adler32, actions=["instcombin"])
    env = passlab.gym.LlvmEnv(benchmark=adler32)
    with pytest.raises(passlab.Error, match="call reset"):
        env.step(0)
    env.reset()
    with pytest.raises(passlab.Error, match=r"action 999 is not in Discrete\(78\)"):
        env.step(999)
    bad = tmp_path / "bad.c"
    bad.write_text("int f( {\n")
    with pytest.raises(passlab.CompileError, match="bad.c:1"):
        passlab.gym.LlvmEnv(benchmark=bad).reset()


def test_the_sample_programs():
    files = passlab.gym.samples()
    assert len(files) == 28 and all(f.exists() for f in files)
    env = passlab.gym.LlvmEnv(benchmark="samples")
    seen = set()
    for seed in range(4):
        _, info = env.reset(seed=seed)
        seen.add(info["benchmark"])
        assert info["instcount"] > 100
    assert len(seen) > 1
