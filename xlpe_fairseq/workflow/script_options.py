"""What the workflow commands (xlpe-prepare, xlpe-train, xlpe-evaluate) share on their command
lines: the shell entry points' rules for values, folder names and settings files, and their
one-line refusals."""
import argparse
import os
import re
import shlex

from ..help_format import HelpFormatter
from ..io import InputError, text_lines


class Refused(InputError):
    """A check failed: ``run_command`` says so in one line, ``PROG: error: MESSAGE``, as every
    error of the commands, and the run ends with ``status`` (2: the command line is wrong)."""

    def __init__(self, message, status):
        super().__init__(message)
        self.exit_status = status


def whole(minimum, maximum=None):
    """The type of a count option: its value as a decimal string without leading zeros, if a
    whole number from ``minimum`` (to ``maximum``), no more than 18 digits (the shell entry
    points' rule, docs/input-rules.md)."""
    def checked(value, flag):
        digits = value.lstrip("0") or "0"
        if (re.fullmatch(r"[0-9]+", value) and len(digits) <= 18 and int(digits) >= minimum
                and (maximum is None or int(digits) <= maximum)):
            return digits
        if maximum is not None:
            raise Refused(f"{flag} must be a whole number from {minimum} to {maximum}, not "
                          f"'{value}'", 2)
        raise Refused(f"{flag} must be a whole number of at least {minimum}, not '{value}'", 2)
    return checked


# a number written in digits without a sign: 1, 0.5, 5e-4
UNSIGNED_NUMBER = re.compile(r"([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?")


def positive(value, flag):
    """A number above 0 written in digits (1, 0.5, 5e-4), below 1e300: ``value`` unchanged."""
    if UNSIGNED_NUMBER.fullmatch(value) and 0 < float(value) < 1e300:
        return value
    raise Refused(f"{flag} must be a number above 0, not '{value}'", 2)


def number(value, flag):
    """The type of a number option: ``value`` unchanged if a finite number written in digits,
    of magnitude below 1e300."""
    if (re.fullmatch(r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?", value)
            and abs(float(value)) < 1e300):
        return value
    raise Refused(f"{flag} must be a number, not '{value}'", 2)


def one_of(choices):
    def checked(value, flag):
        if value not in choices:
            raise Refused(f"{flag} must be one of: {' '.join(choices)}, not '{value}'", 2)
        return value
    return checked


class ScriptHelpFormatter(HelpFormatter, argparse.RawDescriptionHelpFormatter):
    """The project's help (defaults shown), the description kept as it is written."""


def check_folder_name(path, what):
    """InputError for an empty folder name (an unset variable), or one fairseq cannot be
    given: ':' (fairseq reads a list of folders or checkpoints split at it) or a line break
    (its outputs and every message are read line by line)."""
    if not path:
        raise InputError(f"'': an empty name, expected a folder for {what} (an unset variable?)")
    if "\n" in path or "\r" in path:
        raise InputError(f"{path!r}: {what} has a line break in its name, which fairseq's "
                         "outputs and these messages cannot carry: rename it")
    if os.pathsep in path:
        raise InputError(f"{path}: {what} has '{os.pathsep}' in its name, which fairseq reads "
                         "as a list of paths: rename it")


def check_outside_corpus(save_dir, data, name):
    """A checkpoint folder may not be the corpus (OUT) or a folder in it: fairseq's commands
    would fill the corpus with checkpoints and outputs, and a run would hold OUT's lock to
    read it and to write it at once."""
    real, corpus = os.path.realpath(save_dir), os.path.realpath(data)
    if real == corpus or real.startswith(corpus.rstrip(os.sep) + os.sep):
        raise InputError(f"{save_dir}: the checkpoints ({name}) would go into the corpus {data} "
                         "(OUT); use a folder outside it")


def read_settings(path, names):
    """``{NAME: value}`` of the ``NAME=value`` lines of a settings file written by the shell
    scripts (recipe.env, schedule.env; values shell-quoted), read, never run."""
    settings = {}
    with text_lines(path) as lines:
        for number, line in enumerate(lines, start=1):
            name, found, value = line.partition("=")
            if found and name in names:
                try:
                    settings[name] = " ".join(shlex.split(value))
                except ValueError:
                    raise InputError(f"{path} line {number}: expected {name}=VALUE, got "
                                     f"{line!r}") from None
    return settings


def wrapper_name(argv, default):
    """(the program's name, the rest of ``argv``): a shell wrapper passes its own name first
    (``--prog "$0"``), for its usage, messages and records; else ``default``."""
    if argv[:1] == ["--prog"] and len(argv) >= 2:
        return argv[1], argv[2:]
    return default, argv
