"""``python -m xlpe_fairseq.evaluation.study``: the ``xlpe-study`` command."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
