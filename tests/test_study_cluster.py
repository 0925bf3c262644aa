"""cluster/ and k8s/: valid YAML that points at the real entrypoints."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import yaml

from experiments import cli
from experiments.cli_study import submit_entrypoint

ROOT = Path(__file__).resolve().parents[1]


def load(name: str) -> dict:
    return yaml.safe_load((ROOT / name).read_text())


def test_k8s_manifests_parse_and_reference_entrypoints():
    rc, job, svc = load("k8s/raycluster.yaml"), load("k8s/rayjob.yaml"), load("k8s/rayservice.yaml")
    assert (rc["kind"], job["kind"], svc["kind"]) == ("RayCluster", "RayJob", "RayService")
    assert all(d["apiVersion"] == "ray.io/v1" for d in (rc, job, svc))
    assert rc["spec"]["rayVersion"] == job["spec"]["rayClusterSpec"]["rayVersion"] == "2.60.0"
    # the RayJob's entrypoint is a valid `askopt study` command line
    argv = shlex.split(job["spec"]["entrypoint"])
    assert argv[:2] == ["askopt", "study"]
    args = cli.build_parser().parse_args(argv[1:])
    assert args.instances == 70 and args.trials == 3 and args.address == "auto" and args.resume
    serve = yaml.safe_load(svc["spec"]["serveConfigV2"])
    module, attr = serve["applications"][0]["import_path"].split(":")
    assert (ROOT / (module.replace(".", "/") + ".py")).exists()
    assert f"def {attr}(" in (ROOT / (module.replace(".", "/") + ".py")).read_text()


def test_cluster_launcher_and_local_script():
    c = load("cluster/askopt-cluster.yaml")
    # on-premise: Ray builds the single node type itself and refuses available_node_types (tests/test_ops.py runs
    # Ray's own validation on this file)
    assert c["cluster_name"] and c["provider"]["type"] == "local" and "available_node_types" not in c
    assert any("ray start --head" in cmd for cmd in c["head_start_ray_commands"])
    for name in ("start_local.sh", "stop_local.sh"):
        assert subprocess.run(["bash", "-n", str(ROOT / "cluster" / name)]).returncode == 0
    text = (ROOT / "cluster" / "start_local.sh").read_text()
    assert "RAY_AUTH_MODE" in text and "--temp-dir" in text and "free(8265)" in text
    assert "ray stop" not in (ROOT / "cluster" / "stop_local.sh").read_text()  # never stop other people's Ray


def test_submit_entrypoint_is_quoted():
    assert submit_entrypoint(["--", "askopt", "study", "--out", "runs/a b"]) == "askopt study --out 'runs/a b'"
    local = submit_entrypoint(["--", "askopt", "report", "x"], local=True)
    assert local.endswith("/askopt report x") and local.startswith("/")  # this venv's script for a local cluster
