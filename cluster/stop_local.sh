#!/usr/bin/env bash
# Stop the cluster started by cluster/start_local.sh, and only it: every process whose command line names its temp dir
# or its GCS address (the Ray client server names only the address), and every descendant of those (the raylet's
# DashboardAgent, RuntimeEnvAgent, workers, Serve actors). Ray's own stop command is not used: it would stop every
# Ray instance on the machine, other people's too.
set -euo pipefail
TMP="${ASKOPT_RAY_TMP:-/tmp/askopt-ray}"
GCS=""
[ -f "$TMP/askopt-cluster.env" ] && GCS="$(sed -n 's/^export ASKOPT_RAY_GCS=127\.0\.0\.1:\([0-9]*\)$/\1/p' "$TMP/askopt-cluster.env")"

ours() {  # the cluster's root processes, then all their descendants
  local roots
  roots="$(pgrep -f -- "$TMP" || true)"
  [ -n "$GCS" ] && roots="$roots $(pgrep -f -- ":$GCS( |$)" || true)"
  roots="$(echo $roots | tr ' ' '\n' | grep -v "^$$\$" | sort -u)"
  [ -z "$roots" ] && return 0
  ps -ww -eo pid=,ppid= | awk -v roots="$roots" '
    BEGIN { n = split(roots, r, "\n"); for (i = 1; i <= n; i++) keep[r[i]] = 1 }
    { parent[$1] = $2 }
    END { changed = 1
          while (changed) { changed = 0
            for (p in parent) if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; changed = 1 } }
          for (p in keep) if (p != "") print p }'
}

PIDS="$(ours | sort -n | tr '\n' ' ')"
if [ -z "${PIDS// /}" ]; then echo "no askopt Ray processes under $TMP"; exit 0; fi
echo "stopping: $PIDS"
kill $PIDS 2>/dev/null || true
for _ in $(seq 1 20); do
    sleep 0.5
    LEFT="$(ours | tr '\n' ' ')"
    [ -z "${LEFT// /}" ] && { echo "stopped"; exit 0; }
done
kill -9 $LEFT 2>/dev/null || true
sleep 0.5
LEFT="$(ours | tr '\n' ' ')"
[ -z "${LEFT// /}" ] && { echo "stopped (forced)"; exit 0; }
echo "still running: $LEFT" >&2
exit 1
