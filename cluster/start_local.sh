#!/usr/bin/env bash
# Start a local Ray cluster for `askopt submit` / `askopt study --address ...`.
#
# Auth: Ray 2.60 turns token authentication on by default. For a cluster used only from this machine we start
# it with RAY_AUTH_MODE=disabled so `askopt submit` (Ray Jobs API) works without a token. For anything
# reachable from other machines keep token mode: `RAY_AUTH_MODE=token cluster/start_local.sh`, then on every
# client `export RAY_AUTH_MODE=token` and make the token (~/.ray/auth_token on the head) available.
#
# Shared machines: other Ray instances may hold the default ports (6379, 8265, the agent's 52365), which makes a
# second head come up without a working job agent ("No available agent to submit job"). So every port is chosen
# free here (8265 for the dashboard when it is free), and the cluster gets its own temp dir, so
# cluster/stop_local.sh stops exactly this cluster and never anyone else's (unlike `ray stop`).
#
# Usage: cluster/start_local.sh [NUM_CPUS]      writes $ASKOPT_RAY_TMP/askopt-cluster.env (RAY_ADDRESS etc.)
set -euo pipefail
cd "$(dirname "$0")/.."
NUM_CPUS="${1:-$(nproc)}"
RAY="${RAY:-.venv/bin/ray}"
PY="${PY:-.venv/bin/python}"
TMP="${ASKOPT_RAY_TMP:-/tmp/askopt-ray}"
export RAY_AUTH_MODE="${RAY_AUTH_MODE:-disabled}"
read -r GCS DASH AGENT AGENT_GRPC METRICS NODE_MGR OBJ_MGR RT_ENV <<<"$("$PY" - <<'PYEOF'
import socket
def free(preferred=0):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", preferred))
    except OSError:
        s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port
ports = [free(), free(8265)] + [free() for _ in range(6)]
print(*ports)
PYEOF
)"
mkdir -p "$TMP"
# Written before `ray start`, so cluster/stop_local.sh can find a half-started cluster by its GCS address too.
cat >"$TMP/askopt-cluster.env" <<ENVEOF
export RAY_AUTH_MODE=$RAY_AUTH_MODE
export RAY_ADDRESS=http://127.0.0.1:$DASH
export ASKOPT_RAY_GCS=127.0.0.1:$GCS
export ASKOPT_RAY_METRICS=127.0.0.1:$METRICS
ENVEOF
"$RAY" start --head --num-cpus "$NUM_CPUS" --temp-dir "$TMP" --port "$GCS" \
    --include-dashboard true --dashboard-host 127.0.0.1 --dashboard-port "$DASH" \
    --dashboard-agent-listen-port "$AGENT" --dashboard-agent-grpc-port "$AGENT_GRPC" \
    --metrics-export-port "$METRICS" --node-manager-port "$NODE_MGR" --object-manager-port "$OBJ_MGR" \
    --runtime-env-agent-port "$RT_ENV" --disable-usage-stats
echo
echo "Ray head started (RAY_AUTH_MODE=$RAY_AUTH_MODE, $NUM_CPUS CPUs, temp dir $TMP)."
echo "Dashboard (metrics: askopt_study_*): http://127.0.0.1:$DASH     GCS: 127.0.0.1:$GCS"
echo "Submit a study:  source $TMP/askopt-cluster.env && .venv/bin/askopt submit -- askopt study --instances 70 --trials 3 --out $PWD/runs/big --address auto"
echo "Monitoring:      cluster/start_monitoring.sh   (Prometheus scraping this cluster, if installed)"
echo "Stop it:         cluster/stop_local.sh"
