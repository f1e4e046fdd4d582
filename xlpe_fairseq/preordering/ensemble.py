"""``xlpe-preorder-ensemble``: several trained preorderers as one checkpoint.

The ensemble decodes with the BTG search on the members' mean pair scores
(:class:`~.preorderer.PreordererEnsemble`), so its predictions stay BTG-consistent; members
trained with other seeds make other errors, which the mean partly cancels. Its checkpoint
goes wherever a preorderer's does (``xlpe-preorder``, ``--preorderer`` of fairseq-generate,
fairseq-interactive and ``xlpe-translate``).
"""
import argparse
import sys

from ..help_format import HelpFormatter
from ..io import (
    InputError,
    check_outputs,
    require_files,
    run_command,
)
from .corpus import read_source_with_reorder
from .metrics import corpus_scores
from .preorderer import Preorderer, PreordererEnsemble
from .train import (
    add_device_arguments,
    format_scores,
    parse_with_valid_pair,
    torch_threads,
    tune_penalty,
)


def log(line):
    print(f"xlpe-preorder-ensemble: {line}", file=sys.stderr, flush=True)


def ensemble_files(preorderers, save, valid_source=None, valid_reorder=None, device="cpu",
                   threads=1):
    """``xlpe-preorder-ensemble``: the checkpoints ``preorderers`` as one, saved to ``save``,
    its inversion penalty tuned on ``valid_source``/``valid_reorder`` if given (else the
    members' mean), on ``threads`` of torch's."""
    with torch_threads(threads):
        valid_files = [valid_source, valid_reorder] if valid_source else []
        require_files(preorderers + valid_files)
        check_outputs([save], preorderers + valid_files)
        members = []
        for path in preorderers:
            member = Preorderer.load(path, device=device)
            if isinstance(member, PreordererEnsemble):
                raise InputError(f"{path}: an ensemble; give its members' checkpoints")
            members.append(member)
        ensemble = PreordererEnsemble(
            members, inversion_penalty=sum(m.inversion_penalty for m in members) / len(members))
        if valid_source:
            valid = read_source_with_reorder(valid_source, valid_reorder)
            for path, member in zip(preorderers, members):
                scores = corpus_scores(member.predict(valid[0]), valid[1])
                log(f"{path}: valid {format_scores(scores)}")
            ensemble.inversion_penalty = tune_penalty(ensemble, valid, log)
        ensemble.save(save)
        log(f"wrote {len(members)} preorderers, inversion penalty "
            f"{ensemble.inversion_penalty:g}, to {save}")


def build_parser():
    parser = argparse.ArgumentParser(
        prog="xlpe-preorder-ensemble",
        description="Combine preorderers of xlpe-preorder-train (e.g. trained with other "
        "--seed) into one checkpoint that decodes on their mean pair scores; with a "
        "validation set, its inversion penalty is tuned there as xlpe-preorder-train tunes "
        "a single model's.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--preorderers", nargs="+", required=True, metavar="CHECKPOINT",
                        help="two or more checkpoints of xlpe-preorder-train")
    parser.add_argument("--valid-source", help="validation source BPE text")
    parser.add_argument("--valid-reorder", help="validation reorder file (oracle positions); "
                        "without a validation set the penalty is the members' mean")
    parser.add_argument("--save", required=True, help="ensemble checkpoint to write")
    add_device_arguments(parser)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parse_with_valid_pair(parser, argv)
    if len(args.preorderers) < 2:
        parser.error("--preorderers: an ensemble needs two or more checkpoints")
    run_command(lambda: ensemble_files(args.preorderers, args.save, args.valid_source,
                                       args.valid_reorder, args.device, args.threads),
                "xlpe-preorder-ensemble")


if __name__ == "__main__":
    main()
