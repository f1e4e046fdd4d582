"""Option values checked where they are parsed. Numeric options, one rule for all: every command's argparse options and the plugin's fairseq
options take a value that is a number of the right kind, finite, and inside its range, whose
upper bound fits the machine (--workers no more than the cores, sizes no larger than memory
can hold); anything else is a usage error of one line naming the option. Options that hold further
options as one string must split into shell words; a language code is a code, not a path.
"""
import argparse
import math
import os
import re
import shlex

from .errors import OptionError


def default_workers():
    """Cores this process may run on (respects CPU affinity, unlike os.cpu_count)."""
    return len(os.sched_getaffinity(0))


class Number:
    """The range of a numeric option: ``Number(int, minimum=1)`` is a whole number of at least
    1; ``Number(float, above=0)`` a finite number above 0. ``minimum``/``maximum`` are
    inclusive bounds, ``above``/``below`` exclusive ones; ``why`` says where the upper bound
    comes from.

    Called with the option's text, it is an argparse ``type``; ``check`` refuses a value that
    came another way (a fairseq option, a checkpoint's arguments) with an OptionError.
    """

    def __init__(self, kind, minimum=None, maximum=None, above=None, below=None, why=None):
        self.kind, self.minimum, self.maximum = kind, minimum, maximum
        self.above, self.below, self.why = above, below, why

    def describe(self):
        if self.kind is int:
            if self.maximum is not None:
                text = f"a whole number from {self.minimum} to {self.maximum}"
            else:
                text = f"a whole number of at least {self.minimum}"
        else:
            bounds = [f"of at least {self.minimum}" if self.minimum is not None else "",
                      f"above {self.above}" if self.above is not None else "",
                      f"at most {self.maximum}" if self.maximum is not None else "",
                      f"below {self.below}" if self.below is not None else ""]
            text = " ".join(["a finite number", " and ".join(b for b in bounds if b)]).strip()
        return f"{text} ({self.why})" if self.why else text

    def accepts(self, value):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if isinstance(value, float) and not (
                math.isfinite(value) and (self.kind is float or value.is_integer())):
            return False
        return ((self.minimum is None or value >= self.minimum)
                and (self.maximum is None or value <= self.maximum)
                and (self.above is None or value > self.above)
                and (self.below is None or value < self.below))

    def __call__(self, text):
        try:
            value = self.kind(text.strip())
        except (ValueError, OverflowError):
            value = None
        if value is None or not self.accepts(value):
            raise argparse.ArgumentTypeError(f"expected {self.describe()}, got {text!r}")
        return value

    def check(self, flag, value):
        """``value`` unchanged; OptionError naming ``flag`` unless it is in range."""
        if not self.accepts(value):
            raise OptionError(f"{flag} must be {self.describe()}, got {value!r}")
        return value


# counts and sizes (chunk sizes, beams, batches, token budgets): no more than an index of
# Python (itertools.islice) and NumPy (int64) holds
positive_int = Number(int, minimum=1, maximum=2 ** 63 - 1)
# seeds of Python's, NumPy's and torch's generators (NumPy takes no more than 32 bits)
SEED = Number(int, minimum=0, maximum=2 ** 32 - 1)
# processes and threads: one a core; more only slow the machine down
WORKERS = Number(int, minimum=1, maximum=default_workers(),
                 why="the cores this process may use")
# resamples of a bootstrap test: each holds an index per sentence, and beyond this many the
# p-value's precision no longer changes its verdict
BOOTSTRAP_SAMPLES = Number(int, minimum=1, maximum=100000)
NON_NEGATIVE = Number(int, minimum=0)
# any finite number (a weight, a length penalty)
FINITE = Number(float)


def shell_words(text):
    """argparse type of options passed on as one shell-quoted string: ``text`` unchanged
    once it splits into words (an unbalanced quote is a usage error, not a traceback)."""
    try:
        shlex.split(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(
            f"expected options as one shell-quoted string, got {text!r} ({err})") from None
    return text


# en, pt-BR, sr_Latn, english: a code becomes part of file names and picks rules
LANGUAGE_CODE = re.compile(r"[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8})*")


def option_value(options, name):
    """The value of the last ``name VALUE`` or ``name=VALUE`` in a list of command-line words,
    None when absent."""
    value = None
    for k, option in enumerate(options):
        if option == name and k + 1 < len(options):
            value = options[k + 1]
        elif option.startswith(name + "="):
            value = option.partition("=")[2]
    return value


def language_code(text):
    """argparse type of a language code: letters, then subtags after '-' or '_' (no path,
    dot or space)."""
    if not LANGUAGE_CODE.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"expected a language code such as en or pt-BR, got {text!r}")
    return text


def add_parallel_arguments(parser, chunk_size, unit="lines"):
    """``--workers`` and ``--chunk-size``, the options of every command that runs in chunks."""
    parser.add_argument("--workers", type=WORKERS, default=default_workers(),
                        help="worker processes (default: all cores)")
    parser.add_argument("--chunk-size", type=positive_int, default=chunk_size,
                        help=f"{unit} per work unit (default: {chunk_size})")
