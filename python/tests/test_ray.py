"""Ray on a real local cluster (``ray start --head``, Ray from PyPI): the
search over a corpus as Ray tasks gives what one process gives with the
same seeds, and gym environments run as Ray actors repeat their episodes.
The cluster is this test's own (its own ports and folder) and is ended by
ending its processes, not with ``ray stop``, which would stop every Ray on
the machine."""

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

# Ray's servers listen on the machine's network (GCS, raylet, workers: on
# every interface here, --node-ip-address=127.0.0.1 or not), so the
# cluster requires a token, this test's own, given in the environment (Ray
# would otherwise write one into ~/.ray, a folder of the user's). Set
# before Ray is imported: it reads its authentication mode then.
os.environ["RAY_AUTH_MODE"] = "token"
os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)

# (imported, not skipped when missing: the set-up installs Ray, and a venv
# whose install failed must fail here)
import ray  # noqa: E402

import passlab.gym  # noqa: E402
from passlab.search import tune_corpus  # noqa: E402


def free_ports(n):
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def processes_of(folder):
    """The pids whose command line names `folder` (the cluster's own: each
    Ray process is given its session folder), this one aside."""
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if folder.encode() in f.read():
                    pids.append(int(pid))
        except OSError:
            pass
    return pids


def end_processes_of(folder):
    """Ends every process whose command line names `folder` (the cluster's
    own: each Ray process is given its session folder)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = processes_of(folder)
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        if not pids:
            return
        time.sleep(3)


def start_head():
    """`ray start --head` on free ports and in a folder of its own: (the
    GCS port, the folder, what `ray start` returned). Ray gives the raylet
    30 s to register with the GCS (a constant in ray/_private/node.py),
    which a machine whose two cores run the test command's other streams
    once took, its agents (Python processes) starting behind them; a head
    that timed out so is ended and started once more, on other ports."""
    for attempt in range(2):
        # Every port the head listens on is a free one, so that another Ray
        # on this machine (a user's, lesson 12's) does not collide with it.
        (gcs, dashboard, agent_listen, agent_grpc, runtime_env, metrics, node_manager,
         object_manager) = free_ports(8)
        folder = tempfile.mkdtemp(prefix="plab-ray-")
        ray_cli = os.path.join(os.path.dirname(sys.executable), "ray")
        started = subprocess.run(
            [ray_cli, "start", "--head", "--num-cpus=2", f"--port={gcs}", f"--temp-dir={folder}",
             "--include-dashboard=false", f"--dashboard-port={dashboard}",
             f"--dashboard-agent-listen-port={agent_listen}", f"--dashboard-agent-grpc-port={agent_grpc}",
             f"--runtime-env-agent-port={runtime_env}", f"--metrics-export-port={metrics}",
             f"--node-manager-port={node_manager}", f"--object-manager-port={object_manager}",
             "--disable-usage-stats"],
            capture_output=True, text=True, timeout=300,
        )
        if attempt == 0 and started.returncode != 0 and "timed out during startup" in started.stderr:
            end_processes_of(folder)
            shutil.rmtree(folder, ignore_errors=True)
            continue
        return gcs, folder, started


@pytest.fixture(scope="module")
def cluster():
    gcs, folder, started = start_head()
    try:
        assert started.returncode == 0, f"ray start failed:\n{started.stdout}\n{started.stderr}"
        ray.init(address=f"127.0.0.1:{gcs}", log_to_driver=False)
        assert ray.cluster_resources().get("CPU") == 2.0
        yield gcs
    finally:
        ray.shutdown()
        end_processes_of(folder)
        shutil.rmtree(folder, ignore_errors=True)


def test_a_client_without_the_token_is_refused(cluster):
    # Whoever reaches the cluster's port without its token submits nothing
    # (with RAY_AUTH_MODE=disabled, as this test and lesson 12 once ran it,
    # anyone who reached the machine could).
    env = {k: v for k, v in os.environ.items() if k != "RAY_AUTH_TOKEN"}
    probe = subprocess.run(
        [sys.executable, "-c",
         f"import ray; ray.init(address='127.0.0.1:{cluster}'); print(ray.get(ray.remote(lambda: 2).remote()))"],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert probe.returncode != 0, probe.stdout
    assert "AuthenticationError" in probe.stderr, probe.stderr[-2000:]


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
