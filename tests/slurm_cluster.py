"""A real single-node SLURM for the tests: Debian's ``slurm-wlm`` and ``munge``, installed when
missing (as root, with apt) and started for the test session.

``slurmctld`` and ``slurmd`` run on ports of their own from a ``slurm.conf`` in a fixed folder
of the temporary directory, with the node's real CPUs and memory (``slurmd -C``), processes
tracked through /proc (``proctrack/linuxproc``, ``task/none``: containers have no cgroups to
give) and no accounting database: ``sacct`` is not available, ``squeue`` is. The commands reach
it through ``SLURM_CONF``, which jobs inherit.

pytest-xdist runs test files in several processes: the first to need the cluster starts it, the
last to finish stops it (a shared lock per user), and a cluster left behind by a killed session
is stopped and started afresh. ``munged`` is stopped too where the fixture started it.
"""
import contextlib
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

STATE = Path(tempfile.gettempdir()) / "xlpe-test-slurm"
CONTROLLER_PORT, NODE_PORT = 16817, 16818
PARTITION = "tests"


def slurm_conf(state):
    node = subprocess.run(["slurmd", "-C"], capture_output=True, text=True,
                          check=True).stdout.splitlines()[0]
    # the daemons reach each other on the loopback, whether or not the host name resolves
    return "\n".join([
        "ClusterName=xlpe-tests",
        f"SlurmctldHost={socket.gethostname()}(127.0.0.1)",
        f"SlurmctldPort={CONTROLLER_PORT}", f"SlurmdPort={NODE_PORT}",
        "SlurmUser=root", "SlurmdUser=root", "AuthType=auth/munge",
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
        "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core_Memory",
        "SchedulerType=sched/backfill", "MpiDefault=none", "ReturnToService=2",
        "JobRequeue=1", "KillWait=5", "MinJobAge=600", "DefMemPerCPU=1000",
        "AccountingStorageType=accounting_storage/none", "JobAcctGatherType=jobacct_gather/none",
        f"StateSaveLocation={state / 'ctld'}", f"SlurmdSpoolDir={state / 'spool'}",
        f"SlurmctldPidFile={state / 'slurmctld.pid'}", f"SlurmdPidFile={state / 'slurmd.pid'}",
        f"SlurmctldLogFile={state / 'slurmctld.log'}", f"SlurmdLogFile={state / 'slurmd.log'}",
        f"{node} NodeAddr=127.0.0.1",
        f"PartitionName={PARTITION} Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        "",
    ])


def unavailable():
    """Why this machine cannot run the cluster, or None."""
    if os.geteuid() != 0:
        return "a real SLURM needs root (to install and start munged, slurmctld and slurmd)"
    if not shutil.which("slurmctld") and not shutil.which("apt-get"):
        return "SLURM is not installed and there is no apt-get to install it"
    return None


def install():
    if all(shutil.which(command) for command in ("slurmctld", "slurmd", "sbatch", "munged")):
        return
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"],
                    ["apt-get", "install", "-y", "-qq", "slurm-wlm", "munge"]):
        result = subprocess.run(command, env=env, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed (exit {result.returncode}): "
                               f"{result.stderr.strip()[-2000:]}")


def munge_works():
    encoded = subprocess.run(["munge", "-n"], capture_output=True)
    return encoded.returncode == 0 and subprocess.run(
        ["unmunge"], input=encoded.stdout, capture_output=True).returncode == 0


def start_munge():
    if munge_works():
        return
    key = Path("/etc/munge/munge.key")
    if not key.exists():
        subprocess.run(["mungekey", "--create"], check=True)
        shutil.chown(key, "munge", "munge")
    Path("/run/munge").mkdir(parents=True, exist_ok=True)
    shutil.chown("/run/munge", "munge", "munge")
    subprocess.run(["runuser", "-u", "munge", "--", "munged"], check=True)
    (STATE / "munged.started").touch()
    wait_for(munge_works, "munged")


def wait_for(ready, what, seconds=60):
    deadline = time.monotonic() + seconds
    while not ready():
        if time.monotonic() > deadline:
            logs = "".join(f"\n--- {log}:\n{log.read_text()[-2000:]}"
                           for log in STATE.glob("*.log"))
            raise RuntimeError(f"{what} did not come up in {seconds} s{logs}")
        time.sleep(0.5)


def node_idle():
    out = subprocess.run(["sinfo", "--noheader", "--format=%t"], capture_output=True, text=True)
    return out.returncode == 0 and out.stdout.split() == ["idle"]


def stop_daemons(munge=False):
    """Stop the slurmctld and slurmd this fixture started (their pid files), and wait; with
    ``munge``, munged too if the fixture started it."""
    pid_files = [STATE / "slurmd.pid", STATE / "slurmctld.pid"]
    if munge and (STATE / "munged.started").exists():
        pid_files.append(Path("/run/munge/munged.pid"))
        (STATE / "munged.started").unlink()
    for pid_file in pid_files:
        with contextlib.suppress(FileNotFoundError, ValueError, ProcessLookupError):
            pid = int(pid_file.read_text())
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 30
            while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
                time.sleep(0.2)
            if Path(f"/proc/{pid}").exists():
                os.kill(pid, signal.SIGKILL)


def start_cluster():
    """Start slurmctld and slurmd on a fresh state folder; returns the slurm.conf's path."""
    stop_daemons()
    for folder in ("ctld", "spool"):
        shutil.rmtree(STATE / folder, ignore_errors=True)
        (STATE / folder).mkdir(parents=True)
    for log in STATE.glob("*.log"):
        log.unlink()
    conf = STATE / "slurm.conf"
    conf.write_text(slurm_conf(STATE))
    # both daemonize; -c: a fresh controller state, no jobs of an earlier session
    subprocess.run(["slurmctld", "-c", "-f", str(conf)], check=True)
    subprocess.run(["slurmd", "-f", str(conf)], check=True)
    wait_for(node_idle, "the SLURM node")
    return conf


@contextlib.contextmanager
def slurm_cluster():
    """A running single-node SLURM shared by this user's test processes; SLURM_CONF is set."""
    STATE.mkdir(exist_ok=True)
    with open(STATE / "start.lock", "w") as start_lock, open(STATE / "users.lock", "w") as users:
        fcntl.flock(start_lock, fcntl.LOCK_EX)
        try:
            install()
            start_munge()
            os.environ["SLURM_CONF"] = str(STATE / "slurm.conf")
            try:
                fcntl.flock(users, fcntl.LOCK_EX | fcntl.LOCK_NB)
                alone = True
            except BlockingIOError:
                alone = False
            if alone:  # no other session uses it: whatever runs there is left from a killed one
                start_cluster()
            fcntl.flock(users, fcntl.LOCK_SH)
        finally:
            fcntl.flock(start_lock, fcntl.LOCK_UN)
        try:
            yield STATE / "slurm.conf"
        finally:
            fcntl.flock(start_lock, fcntl.LOCK_EX)
            fcntl.flock(users, fcntl.LOCK_UN)
            try:
                fcntl.flock(users, fcntl.LOCK_EX | fcntl.LOCK_NB)
                stop_daemons(munge=True)
            except BlockingIOError:
                pass  # another test process still uses it
            fcntl.flock(start_lock, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def slurm():
    """The path of the running cluster's slurm.conf (skips where there can be none)."""
    reason = unavailable()
    if reason:
        pytest.skip(reason)
    with slurm_cluster() as conf:
        yield conf
