"""``xlpe-user-dir``: print the installed plugin's folder, for ``--user-dir $(xlpe-user-dir)``.

fairseq imports a plugin from a path, not a module name, so ``--user-dir xlpe_fairseq`` works
only from the repository root; this path works from anywhere.
"""
import argparse
from pathlib import Path

from .help_format import HelpFormatter

# the folder fairseq's --user-dir imports the plugin from
PLUGIN_DIR = str(Path(__file__).resolve().parent)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="xlpe-user-dir", description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.parse_args(argv)
    print(PLUGIN_DIR)


if __name__ == "__main__":
    main()
