"""``xlpe-user-dir``: print the installed plugin's folder, for ``--user-dir $(xlpe-user-dir)``.

fairseq imports a plugin from a path, not a module name, so ``--user-dir xlpe_fairseq`` works
only from the repository root; this path works from anywhere.
"""
import argparse
from pathlib import Path

from .help_format import HelpFormatter


def main(argv=None):
    parser = argparse.ArgumentParser(prog="xlpe-user-dir", description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.parse_args(argv)
    print(Path(__file__).resolve().parent)


if __name__ == "__main__":
    main()
