"""The study on more than one Ray node (issue 12): a `ray.cluster_utils.Cluster` on this machine (a head with 0
CPUs and three 1-CPU worker nodes, separate raylets and object stores), a worker node removed mid-run. The rows
must be the rows of a one-node run: nothing lost, nothing duplicated, nothing that depends on where a unit ran.
An LLM study loses the node that holds its dialogue actor mid-dialogue: the dialogues are rescheduled, and the
study's metrics are still exported from the head."""

from __future__ import annotations

import socket
import threading
import time
import urllib.request

import pandas as pd
import ray
from ray.cluster_utils import Cluster

from evaluation.placement import Placement
from evaluation.runner import load_results, run_study
from evaluation.study import StudyConfig, plan_study
from serving.llm_emulator import EmulatorServer

CONFIG = StudyConfig(name="multinode", instances=4, trials=1, replications=100, opt_replications=100,
                     opt_search_replications=50, dp_max_states=20_000)
# the GCS notices a lost node after failure_threshold missed health checks (default 5 x 3 s): the lost node's
# actors restart and the test's node count settles only then, so the test checks every second
FAST_HEALTH = {"health_check_initial_delay_ms": 1000, "health_check_period_ms": 1000, "health_check_failure_threshold": 3}
KEY = ["unit_id", "status", "policy_kind", "policy_label", "turns", "mc_cost", "mc_std", "exact_cost", "opt_cost", "oracle_cost"]


def _rows(out) -> pd.DataFrame:
    rows = pd.concat([pd.read_parquet(f) for f in (out / "units").glob("batch-*.parquet")], ignore_index=True)
    cols = [c for c in KEY if c in rows.columns]
    assert len(cols) == len(KEY), rows.columns  # the comparison is about the results
    return rows[cols].sort_values("unit_id").reset_index(drop=True)


def _remove_when_rows_land(cluster: Cluster, node, out, removed: list) -> None:
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if list((out / "units").glob("batch-*.parquet")):
            cluster.remove_node(node, allow_graceful=False)  # like a machine lost: its tasks die mid-unit
            removed.append(time.monotonic())
            return
        time.sleep(0.1)


def _cpu_nodes_after_loss(timeout: float = 90.0) -> set:
    """The alive CPU nodes once the GCS has noticed the removed one (its health checks take a while after an
    ungraceful removal; a short run can finish first)."""
    deadline = time.monotonic() + timeout
    while True:
        alive = {n["NodeID"] for n in ray.nodes() if n["Alive"] and n["Resources"].get("CPU")}
        if len(alive) <= 2 or time.monotonic() > deadline:
            return alive
        time.sleep(1)


def test_three_worker_nodes_with_one_lost_give_the_one_node_rows(tmp_path):
    reference = run_study(CONFIG, tmp_path / "one", num_cpus=1, progress=False, include_dashboard=False)
    ray.shutdown()
    assert reference.failed == 0

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "_system_config": FAST_HEALTH})
    nodes = [cluster.add_node(num_cpus=1) for _ in range(3)]
    cluster.wait_for_nodes()
    removed: list = []
    out = tmp_path / "three"
    killer = threading.Thread(target=_remove_when_rows_land, args=(cluster, nodes[0], out, removed), daemon=True)
    try:
        killer.start()
        s = run_study(CONFIG, out, address=cluster.address, progress=False, include_dashboard=False,
                      task_retries=5)
        alive = _cpu_nodes_after_loss()
    finally:
        killer.join(timeout=5)
        ray.shutdown()
        cluster.shutdown()
    assert removed, "the worker node was never removed"
    assert len(alive) == 2  # the run finished on the two nodes left
    assert s.failed == 0
    got, want = _rows(out), _rows(tmp_path / "one")
    assert sorted(got["unit_id"]) == sorted(u.unit_id for u in plan_study(CONFIG).units)  # each exactly once
    pd.testing.assert_frame_equal(got, want)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _remove_dialogue_actor_node(cluster: Cluster, workers: list, srv: EmulatorServer, removed: list) -> None:
    """Once dialogues are under way, remove the worker node that holds a live dialogue actor (ungracefully)."""
    from ray._private import state

    by_id = {n.node_id: n for n in workers}
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if srv.stats().get("ok", 0) >= 6:
            for actor in state.actors().values():
                node = by_id.get(actor["Address"]["NodeID"])
                if actor["ActorClassName"] == "DialogueWorker" and actor["State"] == "ALIVE" and node is not None:
                    cluster.remove_node(node, allow_graceful=False)
                    removed.append(srv.stats().get("ok", 0))
                    return
        time.sleep(0.05)


def _scrape(port: int, prefix: str, timeout: float = 60) -> dict[str, float]:
    """Sum of each metric family starting with `prefix` on a node's metrics endpoint, once progress reads 1."""
    deadline = time.monotonic() + timeout
    sums: dict[str, float] = {}
    while time.monotonic() < deadline:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        sums = {}
        for line in text.splitlines():
            if line.startswith(prefix):
                name, value = line.split("{")[0], float(line.rsplit(" ", 1)[1])
                sums[name] = sums.get(name, 0.0) + value
        if sums.get(prefix + "progress") == 1.0:
            return sums
        time.sleep(1)
    return sums


def test_llm_study_loses_the_node_of_its_dialogue_actor_and_still_exports_metrics(tmp_path):
    metrics_port = _free_port()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "metrics_export_port": metrics_port,
                                                            "_system_config": FAST_HEALTH})
    workers = [cluster.add_node(num_cpus=1, labels={"askopt.io/pool": "cpu"}) for _ in range(3)]
    cluster.wait_for_nodes()
    removed: list = []
    try:
        with EmulatorServer({"latency_mean": 0.2, "latency_sigma": 0.0}) as srv:
            cfg = StudyConfig(name="multillm", instances=1, trials=1, replications=100, opt_replications=100,
                              opt_search_replications=50, dp_max_states=20_000, max_turns=30,
                              llm={"base_url": srv.base_url, "model": "auto", "max_retries": 3})
            killer = threading.Thread(target=_remove_dialogue_actor_node, args=(cluster, workers, srv, removed),
                                      daemon=True)
            killer.start()
            s = run_study(cfg, tmp_path / "llm", address=cluster.address, progress=False, include_dashboard=False,
                          task_retries=5, max_concurrent_dialogues=6, placement=Placement({"askopt.io/pool": "cpu"}))
            killer.join(timeout=5)
            served = srv.stats().get("ok", 0)
            scraped = _scrape(metrics_port, "ray_askopt_study_")
    finally:
        ray.shutdown()
        cluster.shutdown()
    assert removed, "no dialogue actor's node was removed"
    df = load_results(tmp_path / "llm")
    assert sorted(df["unit_id"]) == sorted(u.unit_id for u in plan_study(cfg).units)  # each exactly once
    assert s.failed == 0 and s.infra_failures == 0 and (df["status"] == "ok").all()
    # the lost actor's dialogues were re-run from the start (by Ray's task retries or the driver's resubmission):
    # the model answered more calls than the landed rows account for
    assert served > df["llm_calls"].sum(), (served, df["llm_calls"].sum())
    assert scraped.get("ray_askopt_study_progress") == 1.0, scraped
    assert scraped.get("ray_askopt_study_units_total") == len(df), scraped
