"""``python -m MODULE ARGS...`` for the end-to-end tests, forked from a process that has
already imported torch and the libraries fairseq imports.

A fairseq command spends about 3.5 s importing and 1 s tearing the interpreter down, far more
than the tiny trainings and decodings of these tests take. A multiprocessing forkserver imports
the libraries once (and runs no torch op, so forking it is safe) and starts each command in a
fraction of a second. fairseq and the plugin are not among them: fairseq's commands configure
logging before they import fairseq (one of its modules calls ``logging.basicConfig`` on
import), and the plugin registers itself by the order of imports, so both are imported by the
command as in a fresh process. The command runs as ``python -m`` runs it: ``runpy`` executes
the module as ``__main__`` with the test's environment, working folder and standard streams,
an uncaught exception goes through ``sys.excepthook`` (which prints the plugin's one-line
errors) and the threads and ``atexit`` handlers end before the exit. The command's own
process has the server's OpenMP threads and warnings filters (one thread, warnings ignored,
as the end-to-end tests ask for); the processes it starts take the test's environment. What
happens at interpreter start or finalization (warnings printed on import, signals) is tested
with real processes elsewhere.
"""
import atexit
import multiprocessing
import os
import runpy
import subprocess
import sys
import tempfile
import threading
from multiprocessing import forkserver
from pathlib import Path

# none of them touches logging or the warnings filters on import
PRELOAD = ["torch", "numpy", "scipy.stats", "sklearn.metrics", "hydra", "omegaconf", "sacrebleu"]
# read when torch loads its OpenMP runtime and when Python starts, so the server must have them
SERVER_ENVIRONMENT = {"OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}

_context = []


def forkserver_context():
    """The multiprocessing context whose server has imported PRELOAD (started on first use)."""
    if not _context:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        saved = dict(os.environ)
        os.environ.update(SERVER_ENVIRONMENT)
        try:
            forkserver.ensure_running()
        finally:
            os.environ.clear()
            os.environ.update(saved)
        _context.append(context)
    return _context[0]


def exit_status(stop):
    """The exit status Python gives a ``SystemExit``: its code, 0 for None, 1 (after printing
    it) for a message."""
    if stop.code is None:
        return 0
    if isinstance(stop.code, int):
        return stop.code
    print(stop.code, file=sys.stderr)
    return 1


def run_as_main(module, args, environment, cwd, streams):
    """In the forked process: the command, then what a normal exit of Python does first."""
    os.environ.clear()
    os.environ.update(environment)
    os.chdir(cwd)
    for fd, (path, flags) in enumerate(zip(streams, (os.O_RDONLY, os.O_WRONLY, os.O_WRONLY))):
        opened = os.open(path, flags)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # multiprocessing gave it /dev/null
    sys.argv = [module, *args]
    sys.path.insert(0, cwd)  # as python -m has it
    try:
        # what python -m calls: argv[0] becomes the module's file, as error messages show it
        runpy._run_module_as_main(module)
        status = 0
    except SystemExit as stop:
        status = exit_status(stop)
    except BaseException:
        sys.excepthook(*sys.exc_info())
        status = 1
    threading._shutdown()  # joins the threads left running, as at the end of a program
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def run_module(module, args, stdin=None, env=None, cwd=None):
    """``subprocess.run([python, "-m", module, *args], capture_output=True, text=True, ...)``,
    forked from the warm server: a ``CompletedProcess`` with the command's exit status and
    output."""
    args = [str(arg) for arg in args]
    with tempfile.TemporaryDirectory() as folder:
        streams = [os.path.join(folder, name) for name in ("stdin", "stdout", "stderr")]
        for path, text in zip(streams, (stdin or "", "", "")):
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        process = forkserver_context().Process(
            target=run_as_main,
            args=(module, args, dict(os.environ if env is None else env),
                  os.fspath(cwd or os.getcwd()), streams))
        process.start()
        process.join()
        stdout, stderr = (Path(path).read_text(encoding="utf-8", errors="replace")
                          for path in streams[1:])
    return subprocess.CompletedProcess([sys.executable, "-m", module, *args],
                                       process.exitcode, stdout, stderr)
