#!/usr/bin/env bash
# Start a local Ray cluster for `askopt submit` / `askopt study --address auto`.
#
# Ray 2.60 turns token authentication on by default. For a cluster used only from this machine we start it
# with RAY_AUTH_MODE=disabled, so `askopt submit` (Ray Jobs API) and `ray job submit` work without a token.
# For anything reachable from other machines keep the default (token) mode instead:
#   RAY_AUTH_MODE=token cluster/start_local.sh    # then export RAY_AUTH_MODE=token and the token from
#                                                 # ~/.ray/auth_token on every client (see docs/study.md)
#
# Usage: cluster/start_local.sh [NUM_CPUS]     (stop with: .venv/bin/ray stop)
set -euo pipefail
cd "$(dirname "$0")/.."
NUM_CPUS="${1:-$(nproc)}"
RAY="${RAY:-.venv/bin/ray}"
export RAY_AUTH_MODE="${RAY_AUTH_MODE:-disabled}"
"$RAY" start --head --num-cpus "$NUM_CPUS" --dashboard-host 127.0.0.1 --dashboard-port 8265 \
    --include-dashboard true --disable-usage-stats
echo
echo "Ray head started (RAY_AUTH_MODE=$RAY_AUTH_MODE, $NUM_CPUS CPUs). Dashboard: http://127.0.0.1:8265"
echo "Submit a study:   RAY_AUTH_MODE=$RAY_AUTH_MODE .venv/bin/askopt submit -- askopt study --instances 70 --trials 3 --out runs/big --address auto"
echo "Or drive it here: .venv/bin/askopt study --address auto --instances 70 --out runs/big"
