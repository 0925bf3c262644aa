"""`askopt demo`: the paper's two worked examples, then a small offline study on local Ray, then its report."""

from __future__ import annotations

import shutil
import time
from pathlib import Path


def examples_text() -> str:
    """askopt's policy vs the end-to-end LLM's advice from the paper, on the paper's two examples."""
    from experiments.examples import examples_report

    return examples_report()


def run_demo(out: Path, instances: int = 12, trials: int = 1, num_cpus: int | None = None,
             fresh: bool = False) -> Path:
    from evaluation.report import write_report
    from evaluation.runner import StudyError, run_study
    from evaluation.study import StudyConfig

    t0 = time.perf_counter()
    print(examples_text(), flush=True)
    out = Path(out)
    if fresh and out.exists():
        shutil.rmtree(out)
    config = StudyConfig(name="demo", instances=instances, trials=trials)
    print(f"Study: {instances} instances x {len(config.treatments)} treatments x {trials} trial(s), offline "
          "(B, C: textbook consultant (offline stand-in for the LLM)), local Ray", flush=True)
    try:
        s = run_study(config, out, resume=True, num_cpus=num_cpus)
    except StudyError as exc:  # an older demo with other settings: start over
        print(f"({exc}; starting {out} afresh)")
        shutil.rmtree(out)
        s = run_study(config, out, resume=True, num_cpus=num_cpus)
    print(f"{s.executed} units run ({s.failed} failed), {s.skipped} already done, {s.seconds:.1f} s")
    path = write_report(out)
    _, headline = _headline(out)
    print(headline)
    print(f"demo finished in {time.perf_counter() - t0:.1f} s")
    return path


def _headline(out: Path) -> tuple[dict, str]:
    from evaluation.report import build_report
    from evaluation.runner import load_results
    from evaluation.study import read_config

    _, h = build_report(load_results(out), read_config(out))
    lines = []
    for other in ("B", "C"):
        r = h.get(f"A_vs_{other}") or {}
        if r.get("n"):
            lines.append(f"A over {other}: mean cost reduction {100 * r['mean']:+.1f}% "
                         f"(sd {100 * r['sd']:.1f}%), win rate {100 * r['win_rate']:.0f}% over {r['n']} pairs")
    return h, "\n".join(lines)
