"""Several calls of one xlpe command in a single Python process.

    python -m xlpe_fairseq.in_one_process MODULE ARGS... [--then ARGS...]...

calls ``MODULE.main(ARGS)`` once per argument list, in order, because importing fairseq and
torch costs seconds per command: the recipes binarize or preorder every split in one process.
The first call that fails ends the process with its exit status; later calls do not run.
"""
import importlib
import sys


def split_calls(arguments):
    """``ARGS [--then ARGS]...`` -> one argument list per call."""
    calls = [[]]
    for argument in arguments:
        if argument == "--then":
            calls.append([])
        else:
            calls[-1].append(argument)
    return calls


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        sys.exit("usage: python -m xlpe_fairseq.in_one_process MODULE ARGS... [--then ARGS...]...")
    try:
        module = importlib.import_module(argv[0])
    except ModuleNotFoundError as err:
        if err.name is None or not f"{argv[0]}.".startswith(f"{err.name}."):
            raise  # the module exists; one it imports is missing
        module = None
    command = getattr(module, "main", None)
    if command is None:
        sys.exit(f"xlpe_fairseq.in_one_process: {argv[0]} is not a module with a main()")
    for arguments in split_calls(argv[1:]):
        command(arguments)


if __name__ == "__main__":
    main()
