"""``python -m xlpe_fairseq_cli.fairseq COMMAND ARGS...``: one of fairseq's commands
(fairseq-train, -generate, -interactive, -preprocess) as the xlpe-* commands run it, in a
process set up as theirs (``launch.set_up_process``: fairseq's stack's warnings that a user
cannot act on stay out of the report they show). fairseq's module runs as its console script
runs it, as ``__main__`` with nothing of fairseq or the plugin imported before: fairseq-train
sets up its logging before it imports fairseq, and ``--user-dir`` imports the plugin."""
import runpy
import sys

from .launch import set_up_process

MODULES = {
    "fairseq-train": "fairseq_cli.train",
    "fairseq-generate": "fairseq_cli.generate",
    "fairseq-interactive": "fairseq_cli.interactive",
    "fairseq-preprocess": "fairseq_cli.preprocess",
}


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in MODULES:
        sys.exit(f"usage: python -m xlpe_fairseq_cli.fairseq {{{','.join(MODULES)}}} ARGS...")
    command = sys.argv[1]
    sys.argv = [command, *sys.argv[2:]]
    set_up_process()
    runpy.run_module(MODULES[command], run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
