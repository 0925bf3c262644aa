"""Placement of the study's Ray work (issue 12): node labels keep the CPU work off other node groups (e.g. a GPU
worker group serving the models); a scoring GPU share the cluster cannot give is refused at start."""

from __future__ import annotations

import pandas as pd
import pytest
import ray
from ray.cluster_utils import Cluster

from evaluation.placement import NO_PLACEMENT, Placement, parse_labels
from evaluation.runner import StudyError, run_study
from evaluation.study import StudyConfig

try:
    from tests.fault_injection import NodeLabelRunner
except ImportError:  # pytest's default rootdir-less import mode puts tests/ itself on sys.path
    from fault_injection import NodeLabelRunner

CONFIG = StudyConfig(name="placement", instances=3, trials=1, treatments=("A", "C"), replications=100,
                     opt_replications=100, opt_search_replications=50, dp_max_states=20_000)


def test_labels_parse_and_bad_ones_name_the_option():
    assert parse_labels("askopt.io/pool=cpu, zone=a") == {"askopt.io/pool": "cpu", "zone": "a"}
    assert parse_labels(None) == {} and NO_PLACEMENT.task_options(scoring=True) == {}
    p = Placement({"askopt.io/pool": "!gpu"}, scoring_gpus=0.25)
    assert p.task_options() == {"label_selector": {"askopt.io/pool": "!gpu"}}
    assert p.task_options(scoring=True) == {"label_selector": {"askopt.io/pool": "!gpu"}, "num_gpus": 0.25}
    for bad in ("pool", "=cpu", "pool="):
        with pytest.raises(ValueError, match="node-labels"):
            parse_labels(bad)
    with pytest.raises(ValueError, match="node-labels"):
        Placement({"pool": "a b"})
    with pytest.raises(ValueError, match="scoring-gpus"):
        Placement(scoring_gpus=-1)


def test_study_runs_only_on_the_labelled_node_group(tmp_path):
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    cluster.add_node(num_cpus=1, labels={"askopt.io/pool": "gpu"})  # stands for the model-serving group
    cluster.add_node(num_cpus=1, labels={"askopt.io/pool": "cpu"})
    cluster.wait_for_nodes()
    try:
        s = run_study(CONFIG, tmp_path / "run", address=cluster.address, progress=False, include_dashboard=False,
                      runner=NodeLabelRunner(), placement=Placement({"askopt.io/pool": "cpu"}))
        with pytest.raises(StudyError, match="scoring-gpus: 0.5 is not allowed; the cluster has 0 GPUs"):
            run_study(CONFIG, tmp_path / "gpu", address=cluster.address, progress=False, include_dashboard=False,
                      placement=Placement(scoring_gpus=0.5))
    finally:
        ray.shutdown()
        cluster.shutdown()
    rows = pd.concat([pd.read_parquet(f) for f in (tmp_path / "run" / "units").glob("batch-*.parquet")])
    assert s.failed == 0 and len(rows) == 6
    assert set(rows["note"].str.strip()) == {"askopt.io/pool=cpu"}
    assert not (tmp_path / "gpu" / "units").exists() or not list((tmp_path / "gpu" / "units").glob("*.parquet"))
