"""The study across a network boundary (issue 12): the head (0 CPUs) in this network namespace, the only worker node
in a namespace the test creates (a veth pair on a private /24 of its own), each with its own Ray temp dir, started
with `ray start` like on two hosts. Every unit runs on the far side; the rows must equal a one-node run's.
Needs root (ip netns); skipped with the reason otherwise."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import ray

from evaluation.runner import run_study
from evaluation.study import StudyConfig, plan_study

ROOT = Path(__file__).resolve().parents[1]
RAY = str(Path(sys.executable).parent / "ray")
CONFIG = StudyConfig(name="netns", instances=3, trials=1, replications=100, opt_replications=100,
                     opt_search_replications=50, dp_max_states=20_000)
KEY = ["unit_id", "status", "policy_kind", "policy_label", "turns", "mc_cost", "mc_std", "exact_cost", "opt_cost"]


def _sh(*cmd: str, ns: str | None = None, env: dict | None = None, check: bool = True):
    full = (["ip", "netns", "exec", ns] if ns else []) + list(cmd)
    return subprocess.run(full, capture_output=True, text=True, env=env, check=check, timeout=600)


def _netns_available() -> str | None:
    if os.geteuid() != 0 or shutil.which("ip") is None:
        return "needs root and iproute2 (ip netns)"
    probe = f"askopt-probe-{os.getpid()}"
    r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if r.returncode:
        return f"ip netns add failed: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe])
    return None


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _rows(out: Path) -> pd.DataFrame:
    rows = pd.concat([pd.read_parquet(f) for f in (out / "units").glob("batch-*.parquet")], ignore_index=True)
    return rows[KEY].sort_values("unit_id").reset_index(drop=True)


@pytest.fixture
def two_hosts(tmp_path):
    reason = _netns_available()
    if reason:
        print(f"SKIP netns study: {reason}")
        pytest.skip(reason)
    k = 20 + os.getpid() % 200
    ns, veth, peer = f"askopt{os.getpid()}", f"ask{os.getpid() % 100000}a", f"ask{os.getpid() % 100000}b"
    head_ip, worker_ip = f"10.231.{k}.1", f"10.231.{k}.2"
    tmp = Path(f"/tmp/askopt-netns-{os.getpid()}")  # short: Ray's socket paths must stay under 108 bytes
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_ADDRESS", None)
    try:
        _sh("ip", "netns", "add", ns)
        _sh("ip", "link", "add", veth, "type", "veth", "peer", "name", peer)
        _sh("ip", "link", "set", peer, "netns", ns)
        _sh("ip", "addr", "add", f"{head_ip}/24", "dev", veth)
        _sh("ip", "link", "set", veth, "up")
        _sh("ip", "addr", "add", f"{worker_ip}/24", "dev", peer, ns=ns)
        _sh("ip", "link", "set", peer, "up", ns=ns)
        _sh("ip", "link", "set", "lo", "up", ns=ns)
        port = _free_port(head_ip)
        _sh(RAY, "start", "--head", f"--node-ip-address={head_ip}", f"--port={port}", "--num-cpus=0",
            f"--temp-dir={tmp}/h", "--include-dashboard=false", "--disable-usage-stats", env=env)
        _sh(RAY, "start", f"--address={head_ip}:{port}", f"--node-ip-address={worker_ip}", "--num-cpus=2",
            f"--temp-dir={tmp}/w", "--disable-usage-stats", ns=ns, env=env)
        yield f"{head_ip}:{port}", worker_ip
    finally:
        ray.shutdown()
        subprocess.run(["bash", str(ROOT / "cluster" / "stop_local.sh")], env={**env, "ASKOPT_RAY_TMP": str(tmp)},
                       capture_output=True, timeout=120)
        subprocess.run(["ip", "link", "del", veth], capture_output=True)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


def test_units_run_in_another_network_namespace_and_give_the_one_node_rows(two_hosts, tmp_path):
    address, worker_ip = two_hosts
    os.environ["RAY_AUTH_MODE"] = "disabled"
    try:
        s = run_study(CONFIG, tmp_path / "far", address=address, progress=False, include_dashboard=False)
        workers = {n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"] and n["Resources"].get("CPU")}
    finally:
        ray.shutdown()
        os.environ.pop("RAY_AUTH_MODE", None)
    assert workers == {worker_ip}  # the only CPUs were across the veth pair
    far = pd.concat([pd.read_parquet(f) for f in (tmp_path / "far" / "units").glob("batch-*.parquet")])
    assert s.failed == 0, far.loc[far["status"] != "ok", ["unit_id", "stage", "reason"]].to_string()
    assert s.executed == len(plan_study(CONFIG).units)
    reference = run_study(CONFIG, tmp_path / "one", num_cpus=1, progress=False, include_dashboard=False)
    ray.shutdown()
    assert reference.failed == 0
    pd.testing.assert_frame_equal(_rows(tmp_path / "far"), _rows(tmp_path / "one"))
