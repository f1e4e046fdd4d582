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
