"""The study on more than one Ray node (issue 12): a `ray.cluster_utils.Cluster` on this machine (a head with 0
CPUs and three 1-CPU worker nodes, separate raylets and object stores), a worker node removed mid-run. The rows
must be the rows of a one-node run: nothing lost, nothing duplicated, nothing that depends on where a unit ran."""

from __future__ import annotations

import threading
import time

import pandas as pd
import ray
from ray.cluster_utils import Cluster

from evaluation.runner import run_study
from evaluation.study import StudyConfig, plan_study

CONFIG = StudyConfig(name="multinode", instances=6, trials=1, replications=100, opt_replications=100,
                     opt_search_replications=50, dp_max_states=20_000)
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

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
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
