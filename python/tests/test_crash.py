"""A pass that crashes (a plugin's null pointer, abort(), a stack
overflow) ends the run with passlab.Error naming the pass and the
function; the Python interpreter goes on and the module is as it was."""

import pathlib
import subprocess

import pytest

import passlab
from passlab.transform import LLVMPass

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCE = "int boom(int x) { return x * 3; }\nint fine(int x) { return x + 1; }\n"


@pytest.fixture(scope="module")
def plugin(tmp_path_factory):
    """tests/plugin/crashing_plugin.cpp, built with clang++-19 and loaded
    into this process (through a session: plugins are the process's)."""
    out = tmp_path_factory.mktemp("plugin") / "crashing_plugin.so"
    # (scripts/test-plugin.sh keeps the build in the user's cache)
    subprocess.run(["sh", str(ROOT / "scripts" / "test-plugin.sh"), "crashing_plugin", str(out), "-O1"], check=True)
    session = passlab.Session()
    session.execute_each(f":plugin {out}", lambda items, last: None)
    return session


@pytest.mark.parametrize("name,signal", [
    ("crash-segv", "SIGSEGV"), ("crash-abort", "SIGABRT"), ("crash-overflow", "SIGSEGV"), ("crash-segv", "SIGSEGV"),
])
def test_a_crashing_pass_is_an_error_and_python_goes_on(plugin, name, signal):
    mod = passlab.Module.from_c(SOURCE, name="m.c")
    mod = LLVMPass("mem2reg")(mod)
    before = mod.text()
    with pytest.raises(passlab.Error, match=f"the pass '{name}' crashed on function 'boom'.*{signal}"):
        mod = LLVMPass(name)(mod)
    assert mod.text() == before
    mod = LLVMPass("default<O2>")(mod)
    assert "alloca" not in mod.text()


def test_in_a_session_too(plugin):
    plugin.execute_each(":module m --lang c\n" + SOURCE + ".", lambda items, last: None)
    with pytest.raises(passlab.Error, match="crashed on function 'boom'"):
        plugin.execute_each(":run crash-segv", lambda items, last: None)
    shown = []
    plugin.execute_each(":show", lambda items, last: shown.extend(items))
    assert "define" in "".join(str(v) for _, v in shown)


def test_a_gym_step_that_crashes_leaves_the_episode_as_it_was(plugin, tmp_path):
    """A gym step takes no snapshot (it would cost as much as the step on a
    large module): a failing step makes the module again from the benchmark
    by the episode's actions so far. The module object is the same one, the
    episode goes on, and the next steps count as they would have."""
    import passlab.gym

    source = tmp_path / "m.c"
    source.write_text(SOURCE)
    env = passlab.gym.LlvmEnv(benchmark=source, actions=["mem2reg", "crash-segv", "instcombine", "sccp"])
    env.reset()
    module = env.module
    env.step(0)
    env.step(3)
    before, count = module.text(), module.instcount
    with pytest.raises(passlab.Error, match="crash-segv' crashed on function 'boom'"):
        env.step(1)
    assert env.module is module
    assert (module.text(), module.instcount) == (before, count)
    assert env.actions == [0, 3]
    _, _, _, _, info = env.step(3)
    assert info["action_had_no_effect"]  # sccp again: nothing to do
    _, _, _, _, info = env.step(2)
    fresh = passlab.gym.LlvmEnv(benchmark=source, actions=["mem2reg", "crash-segv", "instcombine", "sccp"])
    fresh.reset()
    for a in (0, 3, 3, 2):
        fresh.step(a)
    assert fresh.module.text() == module.text() and info["instcount"] == fresh.module.instcount
