#!/usr/bin/env bash
# Prometheus for the cluster started by cluster/start_local.sh (Debian: apt-get install prometheus).
# It scrapes every Ray node through Ray's service-discovery file; the study's metrics are ray_askopt_study_*.
# Import cluster/monitoring/grafana-askopt-study.json into Grafana (data source: this Prometheus) for the dashboard.
# cluster/stop_local.sh stops it with the cluster (its files live in the cluster's temp dir).
set -euo pipefail
cd "$(dirname "$0")/.."
TMP="${ASKOPT_RAY_TMP:-/tmp/askopt-ray}"
PORT="${PROMETHEUS_PORT:-9090}"
PROM="${PROMETHEUS:-$(command -v prometheus || true)}"
[ -n "$PROM" ] || { echo "prometheus is not installed (Debian: apt-get install prometheus)" >&2; exit 2; }
[ -d "$TMP" ] || { echo "no cluster under $TMP: run cluster/start_local.sh first" >&2; exit 2; }
sed "s#__RAY_TMP__#$TMP#" cluster/monitoring/prometheus.yml.tmpl > "$TMP/prometheus.yml"
nohup "$PROM" --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/prometheus-data" \
    --web.listen-address="127.0.0.1:$PORT" > "$TMP/prometheus.log" 2>&1 &
echo "Prometheus: http://127.0.0.1:$PORT  (query ray_askopt_study_progress; log $TMP/prometheus.log)"
