"""examples/demo_settings.sh fixes what besides the seed decides a CPU run's numbers."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def torch_after_demo_settings(expression, *prefix, env=None):
    """``expression`` evaluated by torch in a process started after sourcing the settings."""
    script = 'source examples/demo_settings.sh; exec "$0" -c "import torch; print($1)"'
    result = subprocess.run([*prefix, "bash", "-c", script, sys.executable, expression],
                            cwd=REPO, capture_output=True, text=True, env=env, check=True)
    return result.stdout.strip()


@pytest.mark.skipif(shutil.which("taskset") is None, reason="taskset (util-linux) not installed")
def test_torch_threads_do_not_follow_the_cores():
    # on one core torch would take one thread, and one thread rounds differently from two
    assert torch_after_demo_settings("torch.get_num_threads()", "taskset", "-c", "0") == "2"


def test_threads_come_from_demo_threads(monkeypatch):
    monkeypatch.setenv("DEMO_THREADS", "3")
    assert torch_after_demo_settings("torch.get_num_threads()") == "3"


def test_kernels_are_avx2_whatever_the_cpu():
    capability = torch_after_demo_settings("torch.backends.cpu.get_cpu_capability()")
    assert capability in ("AVX2", "DEFAULT", "NO AVX"), \
        f"torch runs {capability} kernels; the README's numbers come from AVX2 ones"


def test_the_demos_default_updates_are_the_demo_schedules():
    from xlpe_fairseq.workflow.schedules import schedule

    result = subprocess.run(["bash", "-c", 'source examples/demo_settings.sh; echo "$DEMO_UPDATES"'],
                            cwd=REPO, capture_output=True, text=True, check=True)
    assert int(result.stdout) == schedule("demo", "demo", "en").max_update
