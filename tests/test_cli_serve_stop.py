"""The serving commands stop cleanly on SIGTERM (kill, docker stop, Kubernetes), not only on Ctrl-C."""

import signal
import subprocess
import sys
import time


def test_sigterm_ends_the_wait_and_runs_the_cleanup(tmp_path):
    marker = tmp_path / "cleaned"
    code = (
        "import sys\n"
        "from experiments.cli_serve import wait_until_stopped\n"
        "print('serving', flush=True)\n"
        "try:\n"
        "    wait_until_stopped(120)\n"
        "finally:\n"
        f"    open({str(marker)!r}, 'w').write('yes')\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "serving"
    time.sleep(0.5)  # into the wait, where the handler is installed
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0  # a clean exit, not "killed by SIGTERM" (-15)
    assert time.monotonic() - t0 < 5
    assert marker.read_text() == "yes"  # the caller's finally (serve.shutdown, ray.shutdown) ran
