"""The step runner of a preparation (xlpe-prepare, the Bible recipe): each step skipped,
timed, logged, and failing the run as one.

Each step is skipped when its outputs were made from the present content of its inputs and
the same settings, by content, whatever the files' times: a hidden ``.NAME.made-from`` beside
a step's first output holds the digest of what it was made from (the record the shell form
kept, so that an OUT it prepared reruns skipping what is made). A step that runs says
``== NAME``, then ``== NAME: N s`` with its wall time. A step is a function called in this
process; its error ends the run in one line (``io.run_command``), and Ctrl-C or SIGTERM
unwinds it, its outputs being atomic. An external program a step runs (eflomal,
fairseq-preprocess) is a child in its own process group, ended with this command
(``io.children``). With ``XLPE_STAGE_LOG`` naming a file, each step's wall time, CPU time and
peak memory are appended to it (``io.stage_usage.measured``). A temporary file that a killed
run left is removed by the next run (``remove_stale_temporaries_of``).
"""
import hashlib
import os
import re
import sys
import time

from ..io.children import exit_status, run_child
from ..io.digests import file_digest
from ..io.outputs import atomic_output, process_running
from ..io.stage_usage import measured

# a temporary file of a step: .NAME.PID.SUFFIX (atomic_output's and pipeline.align's)
TEMPORARY = re.compile(r"\..+\.([0-9]+)\.[A-Za-z0-9_]+")


class StepFailed(SystemExit):
    """A step's command failed: it has said why; this command ends with its status."""


def wall_time_line(name, start):
    """The line that ends a step: ``== NAME: N s`` since ``start`` (time.monotonic)."""
    return f"== {name}: {time.monotonic() - start:.1f} s"


class Steps:
    """Runs the steps of one preparation: skipping, timing, logging, failing as one."""

    def __init__(self, prog, stage_log=None):
        self.prog = prog
        self.stage_log = stage_log
        self._pending = {}
        self._digests = {}

    def say(self, text):
        print(text, file=sys.stderr, flush=True)

    # freshness by content, as data_prep/lib.sh's fresh and made
    def fresh(self, outs, ins, settings=()):
        """Whether every one of ``outs`` exists and was made from the present content of
        ``ins`` and these ``settings`` (words such as "max_len=175")."""
        digest = "".join(f"{self._content_digest(path)} " for path in ins)
        text = "".join(f"{line}\n" for line in (digest, *settings))
        value = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
        record = made_from_file(outs[0])
        self._pending[record] = value
        if not all(os.path.exists(out) for out in outs):
            return False
        try:
            with open(record, encoding="utf-8") as stream:
                if stream.read().strip() == value:
                    return True
        except OSError:
            pass
        # outputs of other inputs: the step reruns, and a failure leaves no record of them
        remove(record)
        return False

    def made(self, out):
        """Record that the step whose first output is ``out`` has finished."""
        record = made_from_file(out)
        with atomic_output(record) as stream:
            stream.write(self._pending[record] + "\n")

    def _content_digest(self, path):
        try:
            stat = os.stat(path)
        except OSError:
            return "missing"
        key = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, path)
        if key not in self._digests:
            self._digests[key] = file_digest(path)
        return self._digests[key]

    def skipped(self, name):
        self.say(f"== {name}: up to date, skipped")

    def timed(self, name, step, *args, **kwargs):
        """Call ``step(*args, **kwargs)``, saying its name and then its wall time; returns
        what it returns."""
        start = time.monotonic()
        self.say(f"== {name}")
        result = self.measured(name, step, *args, **kwargs)
        self.say(wall_time_line(name, start))
        return result

    def measured(self, name, step, *args, **kwargs):
        """Call ``step(*args, **kwargs)``, its usage logged when XLPE_STAGE_LOG names a log."""
        with measured(self.stage_log, name):
            return step(*args, **kwargs)

    def stamp(self, path, text):
        """``path`` holds ``text``, rewritten only when it changes: settings a step reads as
        an input file."""
        try:
            with open(path, encoding="utf-8") as stream:
                if stream.read() == text + "\n":
                    return
        except OSError:
            pass
        with atomic_output(path) as stream:
            stream.write(text + "\n")


def report(steps, dest, step, title, ins, text, shown_when_skipped=False):
    """The report ``text()`` returns (its lines, each ended) written atomically to ``dest`` and
    shown under ``title`` (when the step is skipped too, with ``shown_when_skipped``)."""
    if steps.fresh([dest], ins):
        steps.skipped(step)
        if not shown_when_skipped:
            return
    else:
        report_text = steps.timed(step, text)
        with atomic_output(dest) as stream:
            stream.write(report_text)
        steps.made(dest)
    steps.say(f"== {title}:")
    with open(dest, encoding="utf-8", errors="replace") as stream:
        sys.stderr.write(stream.read())


def run_program(command, **options):
    """An external program (eflomal, fairseq's commands) as a step or part of one: a child of
    this command (``io.children``); its failure, which it has reported, ends the run with its
    status."""
    status = run_child(command, **options)
    if status:
        raise StepFailed(exit_status(status))


def remove_stale_temporaries_of(out, folders):
    """Remove the temporary files a run that was killed (SIGKILL) left in OUT's ``folders``:
    those of a process that no longer runs."""
    for folder in folders:
        try:
            entries = list(os.scandir(os.path.join(out, folder)))
        except OSError:
            continue
        for entry in entries:
            match = TEMPORARY.fullmatch(entry.name)
            pid = int(match.group(1)) if match else 0
            if (0 < pid < 2**31 and entry.is_file(follow_symlinks=False)
                    and not process_running(pid)):
                remove(entry.path)


def made_from_file(out):
    directory, name = os.path.split(out)
    return os.path.join(directory, f".{name}.made-from")


def remove(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass

