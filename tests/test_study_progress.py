"""`askopt study` progress: a tqdm bar only on a terminal, periodic plain lines otherwise (job logs), and the Ray
dashboard's URL printed when Ray runs one."""

import io
import os
import subprocess
import sys

import pytest

from evaluation.progress import PlainProgress, progress_bar


class _Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_plain_lines_are_periodic_not_per_update():
    out, clock = io.StringIO(), _Clock()
    bar = PlainProgress(100, "study demo", out, interval=30, clock=clock)
    for _ in range(50):  # 50 updates within 25 s: no line yet
        clock.t += 0.5
        bar.update(1)
    assert out.getvalue() == ""
    clock.t += 10  # 35 s since start: the next update prints one line
    bar.set_postfix({"B": "+4.2%"})
    bar.update(10)
    lines = out.getvalue().splitlines()
    assert lines == ["study demo: 60/100 units (60%), 102.9 units/min, under a minute left, gap B +4.2%"]
    bar.update(40)  # same moment: no new line (the interval has not passed)
    bar.close()
    bar.close()  # idempotent
    done = PlainProgress(2, "d", io.StringIO(), interval=0, clock=clock)
    done.update(2)
    done.close()
    assert len(done.stream.getvalue().splitlines()) == 1  # the last line already gave the final count
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and lines[-1].startswith("study demo: 100/100 units (100%)") and "\r" not in out.getvalue()


def test_progress_bar_picks_by_terminal():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    assert isinstance(progress_bar(5, "x", True, io.StringIO()), PlainProgress)
    assert type(progress_bar(5, "x", True, Tty())).__name__ == "tqdm"
    assert not isinstance(progress_bar(5, "x", False, io.StringIO()), PlainProgress)


@pytest.mark.slow
def test_study_job_log_has_dashboard_url_and_plain_lines(tmp_path):
    env = {**os.environ, "ASKOPT_PROGRESS_SECONDS": "0"}
    proc = subprocess.run([sys.executable, "-m", "experiments.cli", "study", "--instances", "2", "--treatments", "A",
                           "--out", str(tmp_path / "run"), "--num-cpus", "2", "--dashboard"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    err = proc.stderr
    assert "Ray dashboard: http://" in err, err[-2000:]
    progress = [ln for ln in err.splitlines() if ln.startswith("study run: ")]
    assert progress and progress[-1].startswith("study run: 2/2 units (100%)") and len(set(progress)) == len(progress)
    assert "\r" not in err  # no tqdm redraws in a log
