"""Run one step of data preparation and log what it cost: wall time, CPU time, peak memory.

``python -m xlpe_fairseq.io.stage_usage --log FILE --name STEP -- COMMAND...`` runs COMMAND and
appends one JSON line to FILE: the step's name, when it started (seconds since the epoch),
its wall and CPU seconds (user + system, of
COMMAND and every process it waited for), the peak resident memory of its largest process
(the kernel's count, exact) and the peak of its whole process tree (proportional set sizes,
so that pages shared by forked workers count once; sampled every ``--interval`` seconds, so
a peak shorter than that can be missed). Its exit status is COMMAND's. The recipes run every
timed step through it when ``XLPE_STAGE_LOG`` names a file (``data_prep/lib.sh``); a step that
is a shell function, which it cannot run, the shell times and logs here with ``--wall
SECONDS`` and no command: its wall time only.
"""
import argparse
import json
import os
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
    """The largest summed memory of a process tree, sampled in a thread until ``stop``."""

    def __init__(self, root, interval):
        self.root, self.interval, self.peak = root, interval, 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self):
        while not self._done.is_set():
            self.peak = max(self.peak, sum(memory_of(pid) for pid in tree_pids(self.root)))
            self._done.wait(self.interval)

    def stop(self):
        self._done.set()
        self._thread.join()
        return self.peak


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
        prog="python -m xlpe_fairseq.io.stage_usage",
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
    # one write in append mode: steps that log at once do not interleave their lines
    with open(args.log, "a", encoding="utf-8") as log:
        log.write(json.dumps({"step": args.name, **usage, "status": status}) + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
