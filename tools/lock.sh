#!/usr/bin/env bash
# Re-resolve the lock files from pyproject.toml. Run after changing a dependency; commit the result.
#   requirements.lock      base + dev: what `make demo` and `make test` install (CPU; torch 2.13.0 CPU wheel)
#   requirements-train.lock  base + dev + train + scip: the LoRA imitator and SCIP IIS stacks, CPU
#   requirements-gpu.lock  base + gpu (Ray Serve LLM + vLLM, CUDA): resolved here, installed on a GPU machine
# torch is locked as 2.13.0 (the local CPU wheel satisfies it; `pip install torch==2.13.0` runs first so pip never
# reaches for the CUDA build). uv only resolves; pip installs.
set -euo pipefail
cd "$(dirname "$0")/.."
UV=${UV:-.venv/bin/uv}
[ -x "$UV" ] || { .venv/bin/pip install -q uv; }
common=(--python-version 3.11 --python-platform x86_64-manylinux_2_28 --no-header --quiet)
cpu_torch=$(mktemp); echo "torch==2.13.0+cpu" > "$cpu_torch"
# stockpyl (dev: the exact (s,S) reference of a test and a benchmark) declares its documentation stack (Sphinx) as
# runtime requirements but never imports it. sphinx-jinja2-compat's .pth hook then imports jinja2 in every Python
# process (~0.35 s per start, measured: `python -c pass` 0.37 s against 0.02 s without site hooks), which every
# CLI command, test subprocess and Ray worker pays. A never-true marker removes the stack from the CPU locks;
# the Makefile installs the locks with --no-deps, so nothing pulls it back.
cat >> "$cpu_torch" <<'OVR'
sphinx ; python_version < "0"
sphinx-rtd-theme ; python_version < "0"
sphinx-toolbox ; python_version < "0"
OVR
compile() {  # out, extras...
  local out=$1; shift
  local args=(); for e in "$@"; do args+=(--extra "$e"); done
  "$UV" pip compile pyproject.toml "${args[@]}" "${common[@]}" --find-links /opt/wheels --override "$cpu_torch" -o "$out"
  sed -i 's/^torch==2\.13\.0+cpu$/torch==2.13.0/' "$out"
}
compile requirements.lock dev
compile requirements-train.lock dev train scip
"$UV" pip compile pyproject.toml --extra gpu "${common[@]}" -o requirements-gpu.lock
rm -f "$cpu_torch"
echo "locked: $(grep -c '==' requirements.lock) (base+dev), $(grep -c '==' requirements-train.lock) (train), $(grep -c '==' requirements-gpu.lock) (gpu) packages"
