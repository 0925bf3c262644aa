"""Cluster operations as a team would run them: manifests that deploy as written, a launcher config Ray accepts,
a local cluster that stops completely, and monitoring that a real Prometheus scrapes."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "k8s"
MONITORING = ROOT / "cluster" / "monitoring"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _manifests() -> list[dict]:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    docs = []
    for name in kustomization["resources"]:
        docs += [d for d in yaml.safe_load_all((K8S / name).read_text()) if d]
    return docs


def _pod_specs(obj, found=None):
    """Every pod template spec (dicts holding `containers`) anywhere in a manifest."""
    found = [] if found is None else found
    if isinstance(obj, dict):
        if "containers" in obj:
            found.append(obj)
        for v in obj.values():
            _pod_specs(v, found)
    elif isinstance(obj, list):
        for v in obj:
            _pod_specs(v, found)
    return found


def test_kustomization_renders_with_kubectl():
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl not installed (Debian: kubernetes-client): the YAML checks below still run")
    out = subprocess.run([kubectl, "kustomize", str(K8S)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    kinds = [d["kind"] for d in yaml.safe_load_all(out.stdout) if d]
    assert sorted(kinds) == ["PersistentVolumeClaim", "RayCluster", "RayJob", "RayService"]
    assert "image: askopt:0.1.0" in out.stdout and "image: askopt\n" not in out.stdout
    assert "image: askopt:0.1.0-gpu" in out.stdout and "askopt-gpu" not in out.stdout.replace("name: askopt-gpu", "")


def test_manifests_are_consistent():
    docs = _manifests()
    claims = {d["metadata"]["name"] for d in docs if d["kind"] == "PersistentVolumeClaim"}
    assert claims == {"askopt-runs"}
    for doc in docs:
        if not doc["kind"].startswith("Ray"):
            continue
        for spec in _pod_specs(doc):
            for c in spec["containers"]:
                gpu = "nvidia.com/gpu" in c.get("resources", {}).get("limits", {})
                assert c["image"] == ("askopt-gpu" if gpu else "askopt"), f"{doc['metadata']['name']}: {c['image']}"
                env = {e["name"]: e for e in c.get("env", [])}
                # token auth on every node, the token from the one secret (never a literal in the manifest)
                assert env["RAY_AUTH_MODE"]["value"] == "token"
                ref = env["RAY_AUTH_TOKEN"]["valueFrom"]["secretKeyRef"]
                assert ref == {"name": "askopt-ray-token", "key": "auth_token"}
            for vol in spec.get("volumes", []):
                assert vol["persistentVolumeClaim"]["claimName"] in claims
        cluster = doc["spec"].get("rayClusterConfig") or doc["spec"].get("rayClusterSpec") or doc["spec"]
        for group in cluster["workerGroupSpecs"]:
            if group["minReplicas"] < group["maxReplicas"]:
                assert cluster.get("enableInTreeAutoscaling") is True, f"{doc['metadata']['name']}: replicas range"


def test_rayjob_entrypoint_is_a_valid_askopt_command():
    from experiments.cli import build_parser

    job = next(d for d in _manifests() if d["kind"] == "RayJob")
    argv = shlex.split(job["spec"]["entrypoint"])
    assert argv[0] == "askopt"
    args = build_parser().parse_args(argv[1:])
    assert args.command == "study" and args.address == "auto"  # joins the job's cluster, no nested local Ray
    assert Path(args.out).is_absolute()  # a relative --out would land in the cluster's working directory


def test_rayservice_serve_config_builds_the_app():
    from ray.serve.schema import ServeDeploySchema

    svc = next(d for d in _manifests() if d["kind"] == "RayService")
    schema = ServeDeploySchema.model_validate(yaml.safe_load(svc["spec"]["serveConfigV2"]))
    (app,) = schema.applications
    module, attr = app.import_path.split(":")
    builder = getattr(__import__(module, fromlist=[attr]), attr)
    from ray.serve import Application

    assert isinstance(builder(app.args or {}), Application)  # Serve passes the args dict: must not raise


def test_cluster_launcher_config_passes_rays_own_validation():
    from ray.autoscaler._private.util import prepare_config, validate_config

    config = prepare_config(yaml.safe_load((ROOT / "cluster" / "askopt-cluster.yaml").read_text()))
    validate_config(config)
    assert config["provider"]["type"] == "local"
    assert all("RAY_AUTH_MODE=token" in cmd for cmd in config["head_start_ray_commands"][1:])


def test_dockerfile_installs_from_the_lock_files():
    text = (ROOT / "Dockerfile").read_text()
    for lock in re.findall(r"-r (requirements[\w-]*\.lock)", text):
        assert (ROOT / lock).exists(), lock
    assert "-r requirements.lock" in text and "-r requirements-gpu.lock" in text
    assert "torch==2.13.0" in text and "AS cpu" in text and "AS gpu" in text


def test_stop_local_stops_every_process_it_started():
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="askopt-ray-", dir="/tmp"))  # short: Ray's socket paths must fit 107 bytes
    env = {**os.environ, "ASKOPT_RAY_TMP": str(tmp)}
    start = subprocess.run(["bash", str(ROOT / "cluster" / "start_local.sh"), "1"], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=180)
    gcs = (tmp / "askopt-cluster.env").read_text().split("ASKOPT_RAY_GCS=127.0.0.1:")[1].split()[0]
    try:
        assert start.returncode == 0, start.stderr[-2000:]
        assert _processes_of(str(tmp), gcs), start.stdout[-3000:]  # something to stop
    finally:
        stop = subprocess.run(["bash", str(ROOT / "cluster" / "stop_local.sh")], env=env, capture_output=True,
                              text=True, timeout=60)
    assert stop.returncode == 0, stop.stderr
    assert _processes_of(str(tmp), gcs) == []  # client server, agents and workers included
    shutil.rmtree(tmp, ignore_errors=True)


def _processes_of(tmp: str, gcs_port: str) -> list[str]:
    ps = subprocess.run(["ps", "-ww", "-eo", "args="], capture_output=True, text=True).stdout.splitlines()
    return [p for p in ps if tmp in p or re.search(rf":{gcs_port}( |$)", p)]


def test_grafana_dashboard_queries_the_study_metrics():
    dash = json.loads((MONITORING / "grafana-askopt-study.json").read_text())
    assert dash["uid"] == "askopt-study" and dash["panels"]
    for panel in dash["panels"]:
        assert panel["title"] and panel["targets"] and panel["description"]
        for target in panel["targets"]:
            assert re.search(r"ray_askopt_study_\w+", target["expr"])


def _study_metric_names(metrics_port: int, timeout: float = 60) -> set[str]:
    deadline = time.time() + timeout
    names: set[str] = set()
    while time.time() < deadline:
        text = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).read().decode()
        names = {line.split("{")[0].split(" ")[0] for line in text.splitlines()
                 if line.startswith("ray_askopt_study_")}
        if {"ray_askopt_study_units_total", "ray_askopt_study_progress"} <= names:
            return names
        time.sleep(1)
    return names


def test_prometheus_scrapes_the_study_metrics_the_dashboard_shows(tmp_path):
    prometheus, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if prometheus is None or promtool is None:
        pytest.skip("prometheus not installed (Debian: apt-get install prometheus); dashboard JSON checked above")
    import ray

    from evaluation.runner import StudyMetrics

    metrics_port, prom_port = _free_port(), _free_port()
    ray.init(address="local", num_cpus=1, include_dashboard=False, _metrics_export_port=metrics_port, configure_logging=False)
    prom = None
    try:
        m = StudyMetrics("opstest", 4)
        m.record([{"treatment": t, "status": "ok", "instance_id": "i1", "trial": 0, "mc_cost": c,
                   "prompt_tokens": 10, "completion_tokens": 5} for t, c in (("A", 10.0), ("B", 12.0))])
        scraped = _study_metric_names(metrics_port)
        dash = json.loads((MONITORING / "grafana-askopt-study.json").read_text())
        shown = {n for p in dash["panels"] for t in p["targets"] for n in re.findall(r"ray_askopt_study_\w+", t["expr"])}
        assert shown - {"ray_askopt_study_infra_retries_total"} <= scraped, shown - scraped

        # the shipped template, filled in the way start_monitoring.sh does, passes promtool; a real Prometheus
        # scraping this node through Ray's own service-discovery file answers a study query
        sd = tmp_path / "prom_metrics_service_discovery.json"
        sd.write_text(json.dumps([{"labels": {"job": "ray"}, "targets": [f"127.0.0.1:{metrics_port}"]}]))
        cfg = tmp_path / "prometheus.yml"
        cfg.write_text((MONITORING / "prometheus.yml.tmpl").read_text().replace("__RAY_TMP__", str(tmp_path))
                       .replace("scrape_interval: 10s", "scrape_interval: 1s"))
        check = subprocess.run([promtool, "check", "config", str(cfg)], capture_output=True, text=True, timeout=60)
        assert check.returncode == 0, check.stdout + check.stderr
        prom = subprocess.Popen([prometheus, f"--config.file={cfg}", f"--storage.tsdb.path={tmp_path / 'data'}",
                                 f"--web.listen-address=127.0.0.1:{prom_port}"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        query = f"http://127.0.0.1:{prom_port}/api/v1/query?query=ray_askopt_study_progress"
        result: list = []
        deadline = time.time() + 60
        while time.time() < deadline and not result:
            time.sleep(1)
            try:
                result = json.loads(urllib.request.urlopen(query, timeout=5).read())["data"]["result"]
            except OSError:
                continue
        assert result and result[0]["metric"]["study"] == "opstest"
        assert float(result[0]["value"][1]) == pytest.approx(0.5)  # 2 of 4 units
    finally:
        if prom is not None:
            prom.terminate()
            prom.wait(timeout=30)
        ray.shutdown()


def test_cpu_and_gpu_pools_carry_the_labels_the_study_selects():
    """`askopt study --node-labels askopt.io/pool=cpu` (evaluation.placement) must match every node with CPUs
    for the study and no GPU node."""
    rc = next(d for d in _manifests() if d["kind"] == "RayCluster")
    groups = [("head", rc["spec"]["headGroupSpec"])] + [(g["groupName"], g) for g in rc["spec"]["workerGroupSpecs"]]
    pools = {name: g["rayStartParams"].get("labels") for name, g in groups}
    gpus = {name: "num-gpus" in g["rayStartParams"] for name, g in groups}
    assert {pools[n] for n in pools if gpus[n]} == {"askopt.io/pool=gpu"}
    assert {pools[n] for n in pools if not gpus[n]} == {"askopt.io/pool=cpu"}
    from evaluation.placement import parse_labels

    assert parse_labels("askopt.io/pool=cpu") == dict([pools["cpu-workers"].split("=")])


def test_every_data_file_of_the_packages_is_in_the_wheel():
    """A wheel carries only what package-data names: the web page's assets, Alembic's template, data files.
    Every non-Python file inside an installed package must match a pattern (else `pip install .` breaks it)."""
    import fnmatch
    import tomllib

    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = cfg["package-data"]
    roots = [p.rstrip("*") for p in cfg["packages"]["find"]["include"]]
    missing = []
    for top in roots:
        for f in (ROOT / top).rglob("*"):
            if not f.is_file() or f.suffix in (".py", ".pyc") or "__pycache__" in f.parts:
                continue
            rel_pkg = f.relative_to(ROOT / top).as_posix()
            ok = any(fnmatch.fnmatch(f.name, pat) for pat in patterns.get("*", []))
            ok = ok or any(fnmatch.fnmatch(rel_pkg, pat) for pat in patterns.get(top, []))
            if not ok:
                missing.append(f.relative_to(ROOT).as_posix())
    assert not missing, f"not in the wheel (add to [tool.setuptools.package-data]): {missing}"


def test_every_ray_init_names_its_cluster():
    """A bare `ray.init(num_cpus=...)` joins any Ray cluster running on the machine (Ray looks for live GCS
    processes), then refuses num_cpus: a flaky failure whenever another cluster is up. Every call names one."""
    calls = []
    for top in ("agents", "evaluation", "experiments", "rl", "serving", "ordebug", "inventory", "tests", "benchmarks"):
        for f in (ROOT / top).rglob("*.py"):
            if f.name == "test_ops.py":
                continue
            for m in re.finditer(r"\bray\.init\(([^)]*)\)", f.read_text()):
                if "address=" not in m.group(1) and m.group(1).strip():
                    calls.append(f"{f.relative_to(ROOT)}: ray.init({m.group(1)[:60]})")
    assert not calls, calls
