"""Ray on a real local cluster (``ray start --head``, Ray from PyPI): the
search over a corpus as Ray tasks gives what one process gives with the
same seeds, and gym environments run as Ray actors repeat their episodes.
The cluster is this test's own (its own port and folder) and is ended by
ending its processes, not with ``ray stop``, which would stop every Ray on
the machine."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

ray = pytest.importorskip("ray")

import passlab.gym  # noqa: E402
from passlab.search import tune_corpus  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster():
    port = free_port()
    folder = tempfile.mkdtemp(prefix="plab-ray-")
    ray_cli = os.path.join(os.path.dirname(sys.executable), "ray")
    head = subprocess.Popen(
        [ray_cli, "start", "--head", "--block", "--num-cpus=2", f"--port={port}",
         f"--temp-dir={folder}", "--include-dashboard=false", "--disable-usage-stats"],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        address = f"127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while True:
            try:
                ray.init(address=address, log_to_driver=False)
                break
            except Exception:
                if time.monotonic() > deadline or head.poll() is not None:
                    raise
                time.sleep(1)
        assert ray.cluster_resources().get("CPU") == 2.0
        yield address
    finally:
        ray.shutdown()
        os.killpg(head.pid, signal.SIGTERM)
        try:
            head.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(head.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        head.wait()
        shutil.rmtree(folder, ignore_errors=True)


def test_a_corpus_searched_as_ray_tasks_equals_one_process(cluster, zlib):
    files = [zlib / name for name in ("adler32.c", "compress.c", "uncompr.c", "zutil.c")]
    here = tune_corpus(files, trials=25, seed=7)
    there = tune_corpus(files, trials=25, seed=7, parallel="ray")
    assert [r["benchmark"] for r in there] == [str(f) for f in files]
    for a, b in zip(here, there):
        assert [t["ordering"] for t in a["trials"]] == [t["ordering"] for t in b["trials"]]
        assert [t["instructions"] for t in a["trials"]] == [t["instructions"] for t in b["trials"]]
        timeless = lambda t: {k: v for k, v in t.items() if k != "compile_s"}  # noqa: E731
        assert timeless(a["best"]) == timeless(b["best"]) and a["baselines"] == b["baselines"]
        assert a["best"]["instructions"] <= a["baselines"]["Oz"]


@ray.remote
class Agent:
    def __init__(self, benchmark):
        self.env = passlab.gym.LlvmEnv(benchmark=benchmark)

    def episode(self, seed, steps):
        obs, _ = self.env.reset(seed=seed)
        self.env.action_space.seed(seed)
        rewards = []
        for _ in range(steps):
            obs, reward, *_ = self.env.step(self.env.action_space.sample())
            rewards.append(reward)
        return rewards, int(obs[0]), self.env.validate().okay()


def test_gym_environments_as_ray_actors(cluster, zlib):
    bench = str(zlib / "adler32.c")
    agents = [Agent.remote(bench) for _ in range(2)]
    results = ray.get([a.episode.remote(seed, 12) for a, seed in zip(agents, (1, 2))])
    local = passlab.gym.LlvmEnv(benchmark=bench)
    for seed, (rewards, count, valid) in zip((1, 2), results):
        local.reset(seed=seed)
        local.action_space.seed(seed)
        mine = [local.step(local.action_space.sample())[1] for _ in range(12)]
        assert rewards == mine and count == local.module.instcount and valid
