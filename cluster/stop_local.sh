#!/usr/bin/env bash
# Stop the cluster started by cluster/start_local.sh -- only its processes (found by its own temp dir), by id.
set -euo pipefail
TMP="${ASKOPT_RAY_TMP:-/tmp/askopt-ray}"
PIDS="$(pgrep -f -- "$TMP" || true)"
if [ -z "$PIDS" ]; then echo "no askopt Ray processes under $TMP"; exit 0; fi
echo "stopping: $(echo $PIDS)"
kill $PIDS 2>/dev/null || true
for _ in $(seq 1 20); do
    sleep 0.5
    LEFT="$(pgrep -f -- "$TMP" || true)"
    [ -z "$LEFT" ] && { echo "stopped"; exit 0; }
done
kill -9 $LEFT 2>/dev/null || true
echo "stopped (forced)"
