"""One step of data preparation and what it cost: wall time, CPU time, peak memory.

Each step appends one JSON line to a log: the step's name, when it started (seconds since the
epoch), its wall and CPU seconds (user + system), the peak resident memory of its largest
process (the kernel's count) and the peak of its whole process tree (proportional set sizes,
so that pages shared by forked workers count once; sampled every ``interval`` seconds, so a
peak shorter than that can be missed), and its exit status.

- ``measured(log, name)``: a step that runs in this process (xlpe-prepare's steps, with
  ``XLPE_STAGE_LOG`` naming the log): its CPU time is this process's and its children's over
  the step (``getrusage`` before and after), its largest process this process, whose peak the
  kernel restarts at the step's start (``/proc/self/clear_refs``), or a child that ended in the
  step holding more than any child before it; its tree this process and its children.
- ``python -m xlpe_fairseq_cli.stage_usage --log FILE --name STEP -- COMMAND...`` runs
  COMMAND as a step of its own (the shell recipes' download steps, ``data_prep/lib.sh``), its
  CPU time that of COMMAND and every process it waited for, its exit status COMMAND's; a step
  that is a shell function, which it cannot run, the shell times and logs there with ``--wall
  SECONDS`` and no command: its wall time only. This module imports nothing but the standard
  library, so that that command runs it without loading the plugin (whose memory Linux would
  count into COMMAND's).
"""
import argparse
import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time

PAGE = os.sysconf("SC_PAGE_SIZE")


def tree_pids(root):
    """``root`` and every process below it now (a child that ends meanwhile is skipped)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                # the field after the ")" closing the command name: state, then the parent
                parent = int(stat.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def memory_of(pid):
    """A process's proportional set size in bytes (its RSS where the kernel has no rollup)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as rollup:
            for line in rollup:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


class TreeMemory:
    """The largest summed memory of a process tree (and of its root alone, ``own_peak``),
    sampled in a thread until ``stop``."""

    def __init__(self, root, interval):
        self.root, self.interval, self.peak, self.own_peak = root, interval, 0, 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self):
        while not self._done.is_set():
            sizes = {pid: memory_of(pid) for pid in tree_pids(self.root)}
            self.peak = max(self.peak, sum(sizes.values()))
            self.own_peak = max(self.own_peak, sizes.get(self.root, 0))
            self._done.wait(self.interval)

    def stop(self):
        self._done.set()
        self._thread.join()
        return self.peak


def _own_peak_kib():
    """This process's peak resident memory in KiB (VmHWM), None where /proc has none."""
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _restart_own_peak():
    """Restart the kernel's count of this process's peak memory from its present size (Linux
    4.0 and later); False where it cannot."""
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")
        return True
    except OSError:
        return False


# the usage of a process before it started
ZERO_USAGE = resource.struct_rusage((0.0,) * 2 + (0,) * 14)


def _cpu_seconds(usage):
    return usage.ru_utime + usage.ru_stime


@contextlib.contextmanager
def measured(log, name, interval=0.5, started=None):
    """Append the usage of the block, a step run in this process, to ``log`` as a line named
    ``name`` (nothing without a log), also when it fails (its exit status: a SystemExit's code,
    1 for any other error). With ``started`` (seconds since the epoch) the step began then, in
    the process that started this one for it (a preorderer member): its wall time from then,
    its CPU time and largest process this process's whole, its start-up included."""
    if not log:
        yield
        return
    whole = started is not None
    started = started if whole else time.time()
    start = time.monotonic() - (time.time() - started)
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                          resource.RUSAGE_CHILDREN))
    if whole:
        own = children = ZERO_USAGE
    restarted = whole or _restart_own_peak()
    sampler = TreeMemory(os.getpid(), interval)
    status = 1
    try:
        yield
        status = 0
    except SystemExit as ended:
        status = ended.code if isinstance(ended.code, int) else 1
        raise
    finally:
        tree_peak = sampler.stop()
        own_after, children_after = (resource.getrusage(who) for who in (
            resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
        peak_kib = (_own_peak_kib() if restarted else None) or sampler.own_peak / 1024
        # ru_maxrss of the children is the largest any has held: known for this step only
        # where a child of it set a new high
        if children_after.ru_maxrss > children.ru_maxrss:
            peak_kib = max(peak_kib, children_after.ru_maxrss)
        append(log, name, {
            "started": round(started, 2),
            "wall_s": round(time.monotonic() - start, 2),
            "cpu_s": round(_cpu_seconds(own_after) - _cpu_seconds(own)
                           + _cpu_seconds(children_after) - _cpu_seconds(children), 2),
            "max_rss_mib": round(peak_kib / 1024, 1),
            "tree_peak_mib": round(tree_peak / 2**20, 1),
        }, status)


def append(log, name, usage, status):
    """One line for the step, in one write in append mode: steps that log at once (members
    side by side) do not interleave their lines."""
    with open(log, "a", encoding="utf-8") as stream:
        stream.write(json.dumps({"step": name, **usage, "status": status}) + "\n")


def run_step(command, interval=0.5):
    """Run ``command``; return its exit status and its usage (a dict, seconds and MiB)."""
    started, start = time.time(), time.monotonic()
    process = subprocess.Popen(command)
    sampler = TreeMemory(process.pid, interval)
    # the shell's Ctrl-C reaches the step too: wait for it rather than die before it
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        _, status, usage = os.wait4(process.pid, 0)
    finally:
        signal.signal(signal.SIGINT, previous)
    process.returncode = os.waitstatus_to_exitcode(status)
    tree_peak = sampler.stop()
    return process.returncode, {
        "started": round(started, 2),
        "wall_s": round(time.monotonic() - start, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        # ru_maxrss is in KiB on Linux: the largest single process of the step
        "max_rss_mib": round(usage.ru_maxrss / 1024, 1),
        "tree_peak_mib": round(tree_peak / 2**20, 1),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m xlpe_fairseq_cli.stage_usage",
        description="Run COMMAND and append its wall time, CPU time and peak memory to a "
        "JSON-lines log (one line a step).")
    parser.add_argument("--log", required=True, help="JSON-lines file to append to")
    parser.add_argument("--name", required=True, help="the step's name in the log")
    parser.add_argument("--interval", type=float, default=0.5,
                        help="seconds between samples of the process tree's memory")
    parser.add_argument("--wall", type=float,
                        help="log a step timed elsewhere, with this wall time and no command")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARG...]")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if (args.wall is None) == (not command):
        parser.error("expected -- COMMAND [ARG...] or --wall SECONDS, one of them")
    if command:
        try:
            status, usage = run_step(command, args.interval)
        except OSError as err:
            sys.exit(f"{parser.prog}: error: {command[0]}: {err.strerror}")
    else:
        status, usage = 0, {"wall_s": round(args.wall, 2), "cpu_s": None, "max_rss_mib": None,
                            "tree_peak_mib": None}
    append(args.log, args.name, usage, status)
    return status


if __name__ == "__main__":
    sys.exit(main())
