"""argparse helpers shared by the commands: counts, bounded numbers, --workers and --chunk-size."""
import argparse
import os


def default_workers():
    """Cores this process may run on (respects CPU affinity, unlike os.cpu_count)."""
    return len(os.sched_getaffinity(0))


def positive_int(text):
    """argparse type of counts and sizes (workers, threads, chunk sizes): an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def number_type(accepts, description):
    """An argparse type of a float for which ``accepts(value)`` holds, e.g. ``above 0``."""
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            value = None
        if value is None or not accepts(value):
            raise argparse.ArgumentTypeError(f"expected a number {description}, got {text!r}")
        return value
    return parse


def add_parallel_arguments(parser, chunk_size, unit="lines"):
    """``--workers`` and ``--chunk-size``, the options of every command that runs in chunks."""
    parser.add_argument("--workers", type=positive_int, default=default_workers(),
                        help="worker processes (default: all cores)")
    parser.add_argument("--chunk-size", type=positive_int, default=chunk_size,
                        help=f"{unit} per work unit (default: {chunk_size})")
