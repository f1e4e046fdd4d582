"""Running a command body: errors become one message and exit status 1, signals an exception.

The commands run by ``run_command`` remove their temporary files on SIGTERM, SIGHUP and SIGINT
too: the signal is raised as ``Terminated`` and unwinds through their ``with`` blocks. A reader
that closes the command's stdout early (``| head -1``) ends it quietly, as SIGPIPE ends other
programs: exit status 141, no traceback. An error of the system (a full disk, a folder that
cannot be written, a failing device) is one line naming the file, exit status 1.
"""
import contextlib
import os
import select
import signal
import sys
import threading

from .errors import InputError, OptionError, ToolError


class Terminated(SystemExit):
    """SIGTERM, SIGHUP or SIGINT (Ctrl-C) as an exception, so that temporary files and folders
    are removed on the way out; the exit status is the shell's 128 + signal number."""


_deferred_termination = {"depth": 0, "signal": None}


@contextlib.contextmanager
def termination_deferred():
    """Hold a signal that ``run_command`` turns into ``Terminated`` until the block
    ends, then raise it.

    Forking runs Python's at-fork hooks: ``Terminated`` raised inside one is printed and
    dropped (the command would go on and exit 0), and one raised just after the fork leaves a
    worker that nobody terminates.
    """
    _deferred_termination["depth"] += 1
    try:
        yield
    finally:
        _deferred_termination["depth"] -= 1
        signum = _deferred_termination["signal"]
        if not _deferred_termination["depth"] and signum is not None:
            _deferred_termination["signal"] = None
            raise Terminated(128 + signum)


def run_command(main_body, prog):
    """Run a command body, turning bad-input, tool and system errors into a message and exit
    status 1, and an option found out of range after parsing into one and status 2, as
    argparse's."""
    main_pid = os.getpid()

    def terminate(signum, frame):
        if os.getpid() != main_pid:  # a forked worker: die as the signal says
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
        if _deferred_termination["depth"]:
            _deferred_termination["signal"] = signum
            return
        raise Terminated(128 + signum)

    # only the main thread may set handlers (a command called from another thread keeps
    # the default action); a signal the caller ignores (nohup's SIGHUP, SIGINT in a background
    # job) stays ignored
    handled = [signum for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
               if threading.current_thread() is threading.main_thread()
               and signal.getsignal(signum) is not signal.SIG_IGN]
    previous = {signum: signal.signal(signum, terminate) for signum in handled}
    try:
        try:
            main_body()
            sys.stdout.flush()  # a closed stdout found here, not at exit, where it is a traceback
        except BrokenPipeError:
            if not stdout_closed():
                raise  # another pipe: a tool the command writes to has ended
            end_on_closed_stdout()
    except (InputError, ToolError, OptionError) as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        sys.exit(err.exit_status)
    except OSError as err:
        print(f"{prog}: error: {os_error_line(err)}", file=sys.stderr)
        sys.exit(1)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def os_error_line(err):
    """An error of the system in words: the file it names (both, of a rename) and the
    system's reason (``No space left on device``)."""
    reason = err.strerror or str(err)
    names = [os.fsdecode(name) for name in (err.filename, err.filename2)
             if isinstance(name, (str, bytes))]
    return f"{' and '.join(names)}: {reason}" if names else reason


def stdout_closed():
    """Whether the reader of stdout has gone (``| head -1`` after its line): a pipe without
    a reader polls as an error."""
    try:
        descriptor = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # replaced by an object without one
        return False
    poller = select.poll()
    poller.register(descriptor, select.POLLOUT)
    return any(events & select.POLLERR for _, events in poller.poll(0))


def end_on_closed_stdout():
    """Exit as a program that SIGPIPE ends (128 + 13), without a message. stdout goes to
    /dev/null first, so that Python's final flush of what is still buffered does not fail
    again (the Python documentation's advice on SIGPIPE)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    sys.exit(128 + signal.SIGPIPE)
