"""The plugin's and fairseq's commands as the tests run them, started in a fraction of a
second: each forked from a server that has imported torch, fairseq and the plugin.

Every process that imports the plugin imports fairseq and torch with it: about 5 s, far more
than the tiny work of a test. The server (one per test process, started by ``start_server``)
imports them once, runs no torch op (so forking it is safe), and forks one process per command.
The tests reach it through ``run_module`` (``python -m MODULE ARGS...``) and through stand-ins
(``stand_ins``) for this Python and for the console commands (``xlpe-*``, ``fairseq-*``), which
the suite puts first on PATH and makes ``sys.executable`` (tests/conftest.py): so ``python -m``
of a module of PACKAGES, as a test, a shell script or a command starts it, and a console
command run from PATH, go through the server; anything else runs the real program. A command
starts as a fresh ``python -m MODULE`` or console script would:

- its arguments, environment (``os.environ``), working folder, umask, search path (the module's
  folder or the script's, then PYTHONPATH), warnings filters (Python's, PYTHONWARNINGS's, and
  those the imports added) and standard streams are the caller's;
- the signals the caller ignores stay ignored (SIGINT under ``nohup`` or in a script's
  background job), the others take their default (SIGINT: ``KeyboardInterrupt``), and those the
  stand-in gets go to the command;
- logging: importing fairseq configures the root logger (one of its modules calls
  ``logging.basicConfig``, on stderr), fairseq's commands configure it (on stdout) before they
  import fairseq: the command starts with the root logger of a fresh Python, and gets fairseq's
  configuration when it first imports fairseq or the plugin;
- ``--user-dir`` naming the plugin imports it as in a fresh process, where fairseq says nothing
  (it logs that a user folder is already imported only where the command imported it first);
- its exit status is the command's (an uncaught exception goes through ``sys.excepthook``, an
  uncaught ``KeyboardInterrupt`` ends it by SIGINT), after its threads and ``atexit`` handlers.

The command's process has the server's OpenMP threads (one); the warnings the imports gave in
the server are not shown again; it is a child of the server, not of its caller, in the server's
process group. So what a process prints as it starts, process trees and signals are tested
with real processes: such a test runs ``REAL_PYTHON``, or gives ``real_processes(env)`` to what
it starts, with which the stand-ins run the real programs.

This module imports only the standard library at its top: the stand-ins import it with
``python -S``.
"""
import atexit
import builtins
import importlib
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent
# this Python, whatever sys.executable becomes (the tests' conftest makes it Python's stand-in)
REAL_PYTHON = sys.executable
# what the commands import first, in this order; none runs a torch op on import
PRELOAD = ["torch", "numpy", "scipy.stats", "sklearn.metrics", "hydra", "omegaconf", "sacrebleu",
           "fairseq", "xlpe_fairseq"]
# read when torch loads its OpenMP runtime, so the server must have it
SERVER_ENVIRONMENT = {"OMP_NUM_THREADS": "1"}
# read when Python starts, so each command sets them up from its own environment
COMMAND_ENVIRONMENT = ("PYTHONPATH", "PYTHONWARNINGS")
# the server's socket, in the environment of the tests (and so of the stand-ins they start)
SERVER_VARIABLE = "XLPE_TEST_WARM_SERVER"
# the signals a caller may ignore and a command inherits ignored
INHERITED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
# the packages whose console commands get a stand-in
PACKAGES = ("xlpe_fairseq_cli", "xlpe_fairseq", "fairseq_cli", "fairseq")
SERVER_START_SECONDS = 600

_server = {}


class ServerNotStarted(Exception):
    """The address names no server that was started: the stand-ins run the real program."""


# --- the caller's side: a test (run_module) or a stand-in (run_console_script) ---------------

def _connect(address, deadline):
    """A connection to the server at ``address``, waiting while it starts."""
    while True:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            connection.connect(address)
            return connection
        except (FileNotFoundError, ConnectionRefusedError):
            connection.close()
            running = _server_running(address)
            if running is None:
                raise ServerNotStarted(address) from None
            if not running:
                raise RuntimeError(f"the warm server at {address} has ended") from None
            if time.monotonic() > deadline:
                raise RuntimeError(f"the warm server at {address} did not answer") from None
            time.sleep(0.05)


def _server_running(address):
    """Whether the server at ``address`` runs (None: it has not been started)."""
    server = _server.get("process")
    if server is not None:
        return server.poll() is None
    try:
        os.kill(int(Path(address).with_name("pid").read_text()), 0)
    except FileNotFoundError:
        return None
    except (ValueError, ProcessLookupError):
        return False
    return True


def _start(address, command, streams):
    """Ask the server to start ``command`` (a dict, see ``_run_command``) on ``streams`` (three
    file descriptors); return the connection, the file of its replies and the command's pid."""
    command = {**command, "umask": _umask(), "cwd": os.fspath(command.get("cwd") or os.getcwd()),
               "ignored": [s.name for s in INHERITED_SIGNALS
                           if signal.getsignal(s) is signal.SIG_IGN]}
    payload = json.dumps(command).encode()
    connection = _connect(address, time.monotonic() + SERVER_START_SECONDS)
    socket.send_fds(connection, [struct.pack("!I", len(payload))], list(streams))
    connection.sendall(payload)
    replies = connection.makefile("rb")
    return connection, replies, int(replies.readline())


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _wait_status(replies):
    line = replies.readline()
    if not line:
        raise RuntimeError("the warm server's process ended without an exit status")
    return int(line)


def _returncode(status):
    """``subprocess``'s return code of a wait status: the exit status, or minus the signal."""
    return os.waitstatus_to_exitcode(status)


def run_module(module, args, stdin=None, env=None, cwd=None):
    """``subprocess.run([python, "-m", module, *args], capture_output=True, text=True, ...)``,
    forked from the warm server: a ``CompletedProcess`` with the command's exit status and
    output."""
    args = [str(arg) for arg in args]
    with tempfile.TemporaryDirectory() as folder:
        paths = [os.path.join(folder, name) for name in ("stdin", "stdout", "stderr")]
        Path(paths[0]).write_text(stdin or "", encoding="utf-8")
        streams = [os.open(paths[0], os.O_RDONLY),
                   *(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600) for path in paths[1:])]
        try:
            connection, replies, _ = _start(start_server(), {
                "module": module, "args": args, "cwd": cwd,
                "env": dict(os.environ if env is None else env)}, streams)
        finally:
            for fd in streams:
                os.close(fd)
        with connection, replies:
            status = _wait_status(replies)
        stdout, stderr = (Path(path).read_text(encoding="utf-8", errors="replace")
                          for path in paths[1:])
    return subprocess.CompletedProcess([sys.executable, "-m", module, *args],
                                       _returncode(status), stdout, stderr)


def run_console_script(entry, real):
    """A console command's stand-in: console script ``real`` (its entry point ``entry``) forked
    from the server named in the environment, else ``real`` itself."""
    _run_stand_in({"entry": entry, "argv0": sys.argv[0], "args": sys.argv[1:], "script": real},
                  real, sys.argv[1:])


def run_python(real):
    """Python's stand-in: ``python -m MODULE ARGS...`` of a module of PACKAGES forked from the
    server named in the environment, anything else Python ``real`` itself."""
    args = sys.argv[1:]
    if len(args) > 1 and args[0] == "-m" and args[1].partition(".")[0] in PACKAGES:
        _run_stand_in({"module": args[1], "args": args[2:]}, real, args)
    os.execv(real, [real, *args])


def _run_stand_in(command, real, args):
    """Run ``command`` through the server, else ``real`` with ``args``. The signals this
    process gets go to the command; it ends as the command ends."""
    address = os.environ.get(SERVER_VARIABLE)
    try:
        if not address:
            raise ServerNotStarted
        connection, replies, pid = _start(address, {**command, "env": dict(os.environ)},
                                          [0, 1, 2])
    except ServerNotStarted:
        os.execv(real, [real, *args])
    except (OSError, RuntimeError) as error:
        sys.exit(f"{os.path.basename(sys.argv[0])}: the tests' warm server: {error}")
    for signum in INHERITED_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, lambda number, frame: os.kill(pid, number))
    status = _wait_status(replies)
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(_returncode(status) % 256)


# --- the tests' side: the server and the stand-ins --------------------------------------------

def real_processes(environment):
    """``environment`` without the server: the stand-ins run the real commands, for a test of
    signals, process trees or what a process prints as it starts."""
    return {name: value for name, value in environment.items() if name != SERVER_VARIABLE}


def server_address():
    """The address of this test process's server, which ``start_server`` starts."""
    if "address" not in _server:
        folder = tempfile.mkdtemp(prefix="xlpe-warm-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _server["address"] = os.path.join(folder, "socket")
    return _server["address"]


def start_server():
    """Start this test process's server (once; it ends with this process) and return the
    address of its socket. It imports PRELOAD meanwhile: a command waits for it."""
    address = server_address()
    if "process" not in _server:
        folder = os.path.dirname(address)
        code = (f"import sys; sys.path.insert(0, {str(TESTS)!r}); import warm_python; "
                f"warm_python.serve({address!r})")
        environment = {name: value for name, value in os.environ.items()
                       if name not in (*COMMAND_ENVIRONMENT, SERVER_VARIABLE)}
        process = subprocess.Popen([REAL_PYTHON, "-c", code], cwd=folder,
                                   env={**environment, **SERVER_ENVIRONMENT},
                                   stdin=subprocess.DEVNULL, preexec_fn=_end_with_parent)
        Path(folder, "pid").write_text(str(process.pid))
        _server["process"] = process

        @atexit.register
        def stop():
            process.kill()
            process.wait()
    return address


def _end_with_parent():
    if sys.platform.startswith("linux"):
        import ctypes
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def stand_ins(folder):
    """Write into ``folder`` a stand-in for this Python (``python``, ``python3``) and for each
    console command of PACKAGES installed beside it; return ``folder``. On PATH before the real
    ones, they run the commands through the server named by SERVER_VARIABLE."""
    from importlib.metadata import entry_points

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    bin_folder = Path(REAL_PYTHON).parent
    body = {name: f"run_python({REAL_PYTHON!r})" for name in ("python", "python3")}
    for entry in entry_points(group="console_scripts"):
        real = bin_folder / entry.name
        if entry.module.partition(".")[0] in PACKAGES and real.exists():
            body[entry.name] = f"run_console_script({entry.value!r}, {str(real)!r})"
    for name, call in body.items():
        stand_in = folder / name
        stand_in.write_text(f"#!{REAL_PYTHON} -S\nimport sys\n"
                            f"sys.path.insert(0, {str(TESTS)!r})\nimport warm_python\n"
                            f"warm_python.{call}\n")
        stand_in.chmod(0o755)
    return folder


# --- the server ---------------------------------------------------------------------------------

def serve(address):
    """Import PRELOAD, then fork a handler for each connection to ``address``."""
    import warnings

    base_path = [path for path in sys.path if path not in ("", str(TESTS))]
    pristine = (list(logging_root().handlers), logging_root().level)
    python_filters = list(warnings.filters)
    warnings.simplefilter("ignore")  # the imports' warnings: a fresh process prints them
    for name in PRELOAD:
        importlib.import_module(name)
    warnings.filters.remove(("ignore", None, Warning, None, 0))
    filters = ([f for f in warnings.filters if f not in python_filters], python_filters)
    configured = (list(logging_root().handlers), logging_root().level)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address + ".new")
    listener.listen(64)
    os.rename(address + ".new", address)  # callers connect once it is ready
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # handlers are reaped as they end
    sys.stdout.flush()
    sys.stderr.flush()
    while True:
        connection, _ = listener.accept()
        if os.fork() == 0:
            listener.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            _handle(connection, base_path, filters, pristine, configured)
        connection.close()


def logging_root():
    import logging
    return logging.getLogger()


def _handle(connection, base_path, filters, pristine, configured):
    """In a handler: start the command, tell its pid, wait for it, tell its wait status."""
    try:
        header, streams, _, _ = socket.recv_fds(connection, 4, 3)
        size = struct.unpack("!I", header)[0]
        payload = b""
        while len(payload) < size:
            payload += connection.recv(size - len(payload))
        command = json.loads(payload)
        pid = os.fork()
        if pid == 0:
            connection.close()
            _run_command(command, streams, base_path, filters, pristine, configured)
        for fd in streams:
            os.close(fd)
        connection.sendall(b"%d\n" % pid)
        _, status = os.waitpid(pid, 0)
        connection.sendall(b"%d\n" % status)
    finally:
        os._exit(0)


def _run_command(command, streams, base_path, filters, pristine, configured):
    """In the command's process: set up as a fresh process, run, exit as Python exits."""
    for target, fd in enumerate(streams):
        os.dup2(fd, target)
        os.close(fd)
    sys.stdin = open(0, encoding=sys.__stdin__.encoding, errors=sys.__stdin__.errors,
                     closefd=False)
    # new streams as a fresh Python makes them: the server's knew their files as seekable or
    # not (a file under nohup, a pipe here), and stdout buffered as a terminal's or not
    sys.stdout = _text_stream(1, sys.__stdout__, sys.__stdout__.errors, os.isatty(1))
    sys.stderr = _text_stream(2, sys.__stderr__, "backslashreplace", True)
    os.environ.clear()
    os.environ.update(command["env"])
    os.chdir(command["cwd"])
    os.umask(command["umask"])
    for signum in INHERITED_SIGNALS:
        signal.signal(signum, signal.SIG_IGN if signum.name in command["ignored"]
                      else signal.default_int_handler if signum == signal.SIGINT
                      else signal.SIG_DFL)
    first = (command["cwd"] if "module" in command
             else os.path.dirname(os.path.realpath(command["script"])))
    extra = [path for path in os.environ.get("PYTHONPATH", "").split(os.pathsep) if path]
    sys.path[:] = [first, *extra, *base_path]
    # the Python the command starts its own commands with: the stand-in on its PATH, if any
    python = shutil.which("python")
    if python and _is_stand_in(python):
        sys.executable = python
    _set_warnings_filters(filters)
    _start_fresh(pristine, configured)
    try:
        if "module" in command:
            sys.argv = [command["module"], *command["args"]]
            # what python -m calls: argv[0] becomes the module's file, as error messages show it
            import runpy
            runpy._run_module_as_main(command["module"])
            status = 0
        else:
            sys.argv = [command["argv0"], *command["args"]]
            module, function = command["entry"].split(":")
            status = _exit_status(SystemExit(getattr(importlib.import_module(module), function)()))
    except SystemExit as stop:
        status = _exit_status(stop)
    except KeyboardInterrupt:
        sys.excepthook(*sys.exc_info())
        status = -signal.SIGINT
    except BaseException:
        sys.excepthook(*sys.exc_info())
        status = 1
    import threading
    threading._shutdown()  # joins the threads left running, as at the end of a program
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    if status == -signal.SIGINT:  # as Python ends on an uncaught KeyboardInterrupt
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(status)


def _text_stream(fd, like, errors, line_buffering):
    """A text stream on ``fd`` with the encoding of ``like``, as Python opens its own."""
    import io
    return io.TextIOWrapper(open(fd, "wb", closefd=False), encoding=like.encoding,
                            errors=errors, line_buffering=line_buffering)


def _is_stand_in(path):
    with open(path, "rb") as f:
        return b"import warm_python" in f.read(300)


def _exit_status(stop):
    """The exit status Python gives a ``SystemExit``: its code, 0 for None, 1 (after printing
    it) for a message."""
    if stop.code is None:
        return 0
    if isinstance(stop.code, int):
        return stop.code
    print(stop.code, file=sys.stderr)
    return 1


def _set_warnings_filters(filters):
    """Those the imports added, then PYTHONWARNINGS's, then Python's own."""
    import warnings

    added, python_filters = filters
    options = [option for option in os.environ.get("PYTHONWARNINGS", "").split(",") if option]
    sys.warnoptions[:] = options
    warnings.filters[:] = python_filters
    warnings._processoptions(options)
    warnings.filters[:0] = added
    warnings._filters_mutated()


def _start_fresh(pristine, configured):
    """The root logger of a fresh Python, fairseq's configuration at the command's first import
    of fairseq or the plugin, and fairseq's first import of the plugin as ``--user-dir`` (see
    the module's docstring)."""
    import fairseq.utils

    root = logging_root()
    root.handlers[:], root.level = pristine[0], pristine[1]
    plugin = os.path.dirname(sys.modules["xlpe_fairseq"].__file__)
    original_import, original_import_module = builtins.__import__, importlib.import_module
    import_user_module = fairseq.utils.import_user_module
    seen = {"fairseq": False, "plugin": False}

    def imported(name):
        top = name.partition(".")[0]
        if top in ("fairseq", "xlpe_fairseq") and not seen["fairseq"]:
            seen["fairseq"] = True
            if not root.handlers:  # what logging.basicConfig does on fairseq's import
                root.handlers[:], root.level = configured[0], configured[1]
        if top == "xlpe_fairseq":
            seen["plugin"] = True
            builtins.__import__, importlib.import_module = original_import, original_import_module

    def tracked_import(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0:
            imported(name)
        return original_import(name, globals, locals, fromlist, level)

    def tracked_import_module(name, package=None):
        if not name.startswith("."):
            imported(name)
        return original_import_module(name, package)

    def user_module_imported_first(args):
        path = getattr(args, "user_dir", None)
        if (path is not None and not seen["plugin"]
                and os.path.abspath(path) == plugin):
            imported("xlpe_fairseq")  # as fairseq's first import of the plugin: silently
            # fairseq keeps its memo on whatever its module's name import_user_module holds
            memo = fairseq.utils.import_user_module
            memo.memo = getattr(memo, "memo", set()) | {plugin}
        return import_user_module(args)

    builtins.__import__, importlib.import_module = tracked_import, tracked_import_module
    fairseq.utils.import_user_module = user_module_imported_first
