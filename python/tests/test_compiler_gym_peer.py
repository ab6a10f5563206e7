"""CompilerGym's environment contract on passlab.gym (issue 59). Tests
ported from CompilerGym keep the name of CompilerGym's file and test:
``test_<file>__<test>`` for tests/llvm/<file>.py::<test>, with cBench's
crc32 replaced by zlib's adler32.c."""

import copy
import os
import pickle
import subprocess
import threading

import gymnasium
import pytest

import passlab
import passlab.gym
from passlab.gym import LlvmEnv


@pytest.fixture
def adler32(zlib):
    return zlib / "adler32.c"


@pytest.fixture
def env(adler32):
    e = LlvmEnv(benchmark=[adler32, adler32.parent / "crc32.c"])
    yield e
    e.close()


def index(env, name):
    return env.action_names.index(name)


# tests/llvm/fork_env_test.py


def test_fork_env_test__test_with_statement(env, adler32):
    env.reset(benchmark=adler32)
    env.step(0)
    with env.fork() as fkd:
        assert fkd.in_episode
        assert fkd.actions == [0]
    assert not fkd.in_episode
    assert env.in_episode


def test_fork_env_test__test_fork_before_reset(env):
    assert not env.in_episode
    with env.fork() as fkd:
        assert env.in_episode
        assert fkd.in_episode


def test_fork_env_test__test_fork_spaces_are_same(adler32):
    env = LlvmEnv(benchmark=adler32, observation_space="Autophase", reward_space="IrInstructionCount")
    env.reset(benchmark=adler32)
    with env.fork() as fkd:
        assert fkd.observation_space == env.observation_space
        assert fkd.reward_space_name == env.reward_space_name
        assert fkd.benchmark == env.benchmark


def test_fork_env_test__test_fork_state(env, adler32):
    env.reset(benchmark=adler32)
    env.step(0)
    assert env.actions == [0]
    with env.fork() as fkd:
        assert fkd.benchmark == env.benchmark
        assert fkd.actions == env.actions


def test_fork_env_test__test_fork_reset(env, adler32):
    env.reset(benchmark=adler32)
    env.step(0)
    env.step(1)
    env.step(2)
    with env.fork() as fkd:
        fkd.step(3)
        assert env.actions == [0, 1, 2]
        assert fkd.actions == [0, 1, 2, 3]
        fkd.reset()
        assert env.actions == [0, 1, 2]
        assert fkd.actions == []
        assert fkd.benchmark == env.benchmark  # the benchmark reset() kept


def test_fork_env_test__test_fork_custom_benchmark(adler32):
    module = passlab.Module.from_c(adler32, level="O1", args=[f"-I{adler32.parent}"])
    env = LlvmEnv(benchmark=module)
    env.reset(benchmark=module)
    with env.fork() as fkd:
        assert env.observation["Ir"] == fkd.observation["Ir"]
        fkd.reset()
        assert env.observation["Ir"] == fkd.observation["Ir"]


def test_fork_env_test__test_fork_twice_test(env, adler32):
    env.reset(benchmark=adler32)
    with env.fork() as fork_a:
        with fork_a.fork() as fork_b:
            assert env.state == fork_a.state
            assert fork_a.state == fork_b.state


def test_fork_env_test__test_fork_modified_ir_is_the_same(env, adler32):
    env.reset(benchmark=adler32)
    *_, info = env.step(index(env, "mem2reg"))
    assert not info["action_had_no_effect"]
    with env.fork() as fkd:
        assert env.observation["Ir"] == fkd.observation["Ir"]
        env.step(index(env, "gvn"))
        *_, info = fkd.step(fkd.action_names.index("gvn"))
        assert not info["action_had_no_effect"]
        assert env.observation["Ir"] == fkd.observation["Ir"]


@pytest.mark.parametrize("reward_space", passlab.gym.REWARD_SPACES)
def test_fork_env_test__test_fork_rewards(adler32, reward_space):
    env = LlvmEnv(benchmark=adler32, reward_space=reward_space)
    env.reset(benchmark=adler32)
    actions = [index(env, n) for n in ["mem2reg", "simplifycfg<switch-range-to-icmp>"]]
    forked = env.fork()
    try:
        for action in actions:
            _, env_reward, env_done, *_ = env.step(action)
            _, fkd_reward, fkd_done, *_ = forked.step(action)
            assert env_done is False and fkd_done is False
            assert env_reward == fkd_reward
    finally:
        forked.close()


def test_fork_env_test__test_fork_previous_cost_reward_update(adler32):
    env = LlvmEnv(benchmark=adler32, reward_space="IrInstructionCount")
    env.reset(benchmark=adler32)
    env.step(index(env, "mem2reg"))
    with env.fork() as fkd:
        _, a, *_ = env.step(index(env, "instcombine<no-verify-fixpoint>"))
        _, b, *_ = fkd.step(index(env, "instcombine<no-verify-fixpoint>"))
        assert a == b


def test_fork_and_deepcopy_are_independent_and_pickling_keeps_the_episode(env, adler32):
    env.reset(benchmark=adler32, seed=1)
    env.multistep([index(env, "mem2reg"), index(env, "gvn")])
    for other in (env.fork(), copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        assert other is not env and other.module is not env.module
        assert other.state == env.state and other.module.text() == env.module.text()
        other.step(index(env, "simplifycfg<switch-range-to-icmp>"))
        assert len(env.actions) == 2 and len(other.actions) == 3
        assert other.validate().okay()
        other.reset()
        assert other.benchmark == str(adler32)
    fresh = pickle.loads(pickle.dumps(LlvmEnv(benchmark=adler32)))
    assert not fresh.in_episode and fresh.reset()[1]["benchmark"] == str(adler32)


# tests/llvm/llvm_env_test.py


def test_llvm_env_test__test_double_reset(env, adler32):
    env.reset(benchmark=adler32)
    env.reset(benchmark=adler32)
    assert env.in_episode


def test_llvm_env_test__test_commandline_no_actions(env, adler32):
    env.reset(benchmark=adler32)
    assert env.commandline() == "opt-19 --relocation-model=pic input.bc -o output.bc"


def test_llvm_env_test__test_commandline(env, adler32):
    env.reset(benchmark=adler32)
    env.step(index(env, "mem2reg"))
    env.step(index(env, "gvn"))
    assert env.commandline() == (
        "opt-19 --relocation-model=pic "
        "'-passes=module(function(mem2reg),invalidate<all>,function(gvn))' input.bc -o output.bc"
    )


def test_llvm_env_test__test_reset_to_force_benchmark(env, adler32):
    env.benchmark = None
    env.reset(benchmark=adler32)
    assert env.benchmark == str(adler32)
    for seed in range(10):
        env.reset(seed=seed)
        assert env.benchmark == str(adler32)
    # And through gymnasium's wrappers, whose reset takes options only.
    made = gymnasium.make(passlab.gym.ENV_ID, benchmark=[adler32, adler32.parent / "crc32.c"])
    made.reset(options={"benchmark": adler32})
    assert all(made.reset(seed=s)[1]["benchmark"] == str(adler32) for s in range(5))


def test_llvm_env_test__test_unset_forced_benchmark(env, adler32):
    env.reset(benchmark=adler32)
    assert env.benchmark == str(adler32)
    env.benchmark = None
    for seed in range(50):
        env.reset(seed=seed)
        if env.benchmark != str(adler32):
            break
    else:
        pytest.fail("Improbably selected the same benchmark 50 times! Expected random.")


def test_llvm_env_test__test_change_benchmark_mid_episode(env, adler32):
    env.reset(benchmark=adler32)
    assert env.benchmark == str(adler32)
    env.benchmark = str(adler32.parent / "crc32.c")
    assert env.benchmark == str(adler32)
    env.reset()
    assert env.benchmark == str(adler32.parent / "crc32.c")


def test_llvm_env_test__test_gym_make_kwargs(adler32):
    env = gymnasium.make(
        passlab.gym.ENV_ID, benchmark=adler32, observation_space="Autophase", reward_space="IrInstructionCount"
    )
    assert env.unwrapped.observation_space_name == "Autophase"
    assert env.unwrapped.reward_space_name == "IrInstructionCount"


def test_llvm_env_test__test_apply_state(adler32):
    env = LlvmEnv(benchmark=adler32, reward_space="IrInstructionCount")
    env.reset(benchmark=adler32)
    env.step(index(env, "mem2reg"))
    other = LlvmEnv(benchmark=adler32, reward_space="IrInstructionCount")
    other.apply(env.state)
    assert other.state == env.state


def test_llvm_env_test__test_same_reward_after_reset(adler32):
    env = LlvmEnv(benchmark=adler32, reward_space="IrInstructionCount")
    env.benchmark = adler32
    action = index(env, "instcombine<no-verify-fixpoint>")
    env.reset()
    _, reward_a, *_ = env.step(index(env, "mem2reg"))
    _, reward_a, *_ = env.step(action)
    assert reward_a, "Sanity check that action produces a reward"
    env.reset()
    env.step(index(env, "mem2reg"))
    _, reward_b, *_ = env.step(action)
    assert reward_a == reward_b


def test_llvm_env_test__test_step_multiple_actions_list(env, adler32):
    env.reset(benchmark=adler32)
    actions = [index(env, "mem2reg"), index(env, "gvn")]
    _, reward, terminated, truncated, _ = env.multistep(actions)
    assert not terminated and not truncated
    assert env.actions == actions
    assert reward == pytest.approx(env.episode_reward)


def test_llvm_env_test__test_step_multiple_actions_generator(env, adler32):
    env.reset(benchmark=adler32)
    env.multistep(a for a in (index(env, "mem2reg"), index(env, "gvn")))
    assert env.actions == [index(env, "mem2reg"), index(env, "gvn")]


# The command line, run by opt-19.


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_commandline_runs_in_opt19_to_the_same_count(tmp_path, adler32, seed):
    env = LlvmEnv(benchmark=adler32)
    env.reset(benchmark=adler32, seed=seed)
    env.action_space.seed(seed)
    actions = [int(env.action_space.sample()) for _ in range(25)]
    if seed == 0:  # -Oz's inliner with its options: a command of its own
        actions[3:5] = [env.action_names.index("scc-oz-module-inliner<inline-threshold=-20;inlinehint-threshold=-20>")] * 2
    env.multistep(actions)
    env._loaded[env.benchmark][0].save(tmp_path / "input.bc")
    line = env.commandline()
    assert line.startswith("opt-19 --relocation-model=pic ") and line.endswith(" -o output.bc")
    with_options = [a for a in actions if "<inline-threshold" in env.action_names[a]]
    assert (" && " in line) == bool(with_options)
    run = subprocess.run(line, shell=True, cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert passlab.Module.from_file(tmp_path / "output.bc").instcount == env.module.instcount


# make() without a benchmark; empty benchmarks; threads.


def test_make_without_a_benchmark_draws_from_the_samples():
    env = gymnasium.make(passlab.gym.ENV_ID)
    _, info = env.reset(seed=0)
    assert info["benchmark"] in {str(p) for p in passlab.gym.samples()}
    assert LlvmEnv().reset(seed=1)[1]["instcount"] > 0


def test_an_empty_benchmark_is_refused(tmp_path):
    with pytest.raises(ValueError, match="an empty list of benchmarks"):
        LlvmEnv(benchmark=[])
    (tmp_path / "empty.c").write_text("")
    with pytest.raises(ValueError, match="an empty file"):
        LlvmEnv(benchmark=tmp_path / "empty.c")
    (tmp_path / "decl.c").write_text("int f(int);\n")
    with pytest.raises(ValueError, match="an empty benchmark"):
        LlvmEnv(benchmark=tmp_path / "decl.c").reset()


def test_an_environment_used_from_another_thread_raises_thread_error(env, adler32):
    env.reset(benchmark=adler32)
    errors = []

    def other():
        for call in (lambda: env.step(0), env.reset, env.fork, lambda: env.observation["Ir"]):
            try:
                call()
            except passlab.ThreadError as e:
                errors.append(e)
        errors.append(env.state.benchmark)  # what holds no LLVM state works

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert [type(e) for e in errors[:4]] == [passlab.ThreadError] * 4 and errors[4] == str(adler32)
    env.step(0)  # still fine on its own thread
    assert env.actions == [0]

    def own():  # an environment made on a thread works there
        e = LlvmEnv(benchmark=adler32)
        e.reset()
        e.step(0)
        errors.append(e.actions)

    t = threading.Thread(target=own)
    t.start()
    t.join()
    assert errors[-1] == [0]
