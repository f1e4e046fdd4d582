"""``xlpe-user-dir``: print the installed plugin's folder, for ``--user-dir $(xlpe-user-dir)``.

fairseq imports a plugin from a path, not a module name, so ``--user-dir xlpe_fairseq`` works
only from the repository root; this path works from anywhere. The folder is found without
importing the plugin (torch and fairseq), so that the command answers at once.
"""
import argparse
import importlib.util
import os


def plugin_dir():
    """The folder the ``xlpe_fairseq`` package is imported from."""
    locations = importlib.util.find_spec("xlpe_fairseq").submodule_search_locations
    return os.path.realpath(list(locations)[0])


def main(argv=None):
    parser = argparse.ArgumentParser(prog="xlpe-user-dir", description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    print(plugin_dir())


if __name__ == "__main__":
    main()
