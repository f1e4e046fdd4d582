"""What a refusal looks like: one ``PROG: error: MESSAGE`` line last on stderr, the exit status
of its kind (1 bad input, 2 a wrong command line), no traceback. The checks name the message's
key tokens (flag, file, line, value), not its whole sentence, so that rewording a message does
not break a test that holds what a user relies on."""


def assert_one_line_error(result, status, *tokens, prog=None):
    """``result`` (a ``CompletedProcess``, or anything with ``returncode`` and ``stderr``)
    exited with ``status`` on one error line that holds each of ``tokens``, after
    ``PROG: error: `` (``prog`` given: that PROG)."""
    stderr = result.stderr or ""
    assert result.returncode == status, \
        f"exit {result.returncode}, expected {status}:\n{stderr[-3000:]}"
    assert "Traceback" not in stderr, stderr[-3000:]
    lines = stderr.strip().splitlines()
    last = lines[-1] if lines else ""
    start = f"{prog}: error: " if prog else ": error: "
    assert (last.startswith(start) if prog else start in last), \
        f"no {start.strip()!r} line last on stderr:\n{stderr[-3000:]}"
    missing = [token for token in tokens if str(token) not in last]
    assert not missing, f"{missing} not in the error line {last!r}"


def assert_plugin_error(result, status, *tokens):
    """A fairseq command that one of the plugin's errors ended, as fairseq reports any
    exception: a traceback whose last line is that error, of the kind the xlpe-* commands that
    run fairseq's report with exit ``status`` (an OptionError 2, an InputError 1), holding each
    of ``tokens``."""
    from xlpe_fairseq.plugin_errors import error_in_report

    stderr = result.stderr or ""
    assert result.returncode != 0, f"the command should have failed:\n{stderr[-3000:]}"
    lines = stderr.strip().splitlines()
    found = error_in_report(lines[-1:])
    assert found, f"the command did not end in one of the plugin's errors:\n{stderr[-3000:]}"
    kinds = {1: "InputError", 2: "OptionError"}
    assert found[1] == status, f"an {kinds[found[1]]}, expected an {kinds[status]}: {lines[-1]}"
    missing = [token for token in tokens if str(token) not in found[0]]
    assert not missing, f"{missing} not in the error {found[0]!r}"
