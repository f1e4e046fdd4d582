"""``xlpe-bleu``: detokenized sacreBLEU and chrF of a fairseq-generate run.

The hypotheses come back in corpus order (all of them, or an error), BPE removed by
fairseq's ``--remove-bpe``, then detokenized with sacremoses like the reference, so that the
score is the standard detokenized BLEU with its sacreBLEU signature.
"""
import argparse
import json
import sys

import sacrebleu
from sacremoses import MosesDetokenizer

from ..help_format import HelpFormatter
from ..preprocessing.io_utils import (
    InputError,
    atomic_output,
    check_outputs,
    read_lines,
    require_files,
    require_lines,
    run_command,
)
from .generate_output import IncompleteGenerationError, read_hypotheses


def detokenize(lines, language):
    detokenizer = MosesDetokenizer(lang=language)
    return [detokenizer.detokenize(line.split()) for line in lines]


def score(hypotheses, references):
    """Return a dict with BLEU, chrF and their signatures."""
    bleu = sacrebleu.metrics.BLEU()
    chrf = sacrebleu.metrics.CHRF()
    bleu_score = bleu.corpus_score(hypotheses, [references])
    chrf_score = chrf.corpus_score(hypotheses, [references])
    return {
        "bleu": round(bleu_score.score, 2),
        "chrf": round(chrf_score.score, 2),
        "bleu_signature": str(bleu.get_signature()),
        "chrf_signature": str(chrf.get_signature()),
        "sentences": len(hypotheses),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(prog="xlpe-bleu", description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.add_argument("--generate-output", required=True,
                        help="stdout of fairseq-generate (run with --remove-bpe)")
    parser.add_argument("--reference", required=True,
                        help="tokenized reference text, one sentence per line")
    parser.add_argument("--target-lang", required=True, help="language code for detokenization")
    parser.add_argument("--tokenized-reference", action="store_true",
                        help="the reference is Moses-tokenized: detokenize it like the hypotheses")
    parser.add_argument("--json", help="also write the scores to this JSON file")
    parser.add_argument("--name", default="", help="label printed before the scores")
    args = parser.parse_args(argv)

    run_command(lambda: _score_generate_output(args), parser.prog)
    return 0


def _score_generate_output(args):
    require_files([args.generate_output, args.reference])
    check_outputs([args.json], [args.generate_output, args.reference])
    references = read_lines(args.reference)
    require_lines(args.reference, len(references))
    try:
        hypotheses = read_hypotheses(args.generate_output, len(references), args.reference)
    except IncompleteGenerationError as err:
        raise InputError(str(err)) from None
    hypotheses = detokenize(hypotheses, args.target_lang)
    if args.tokenized_reference:
        references = detokenize(references, args.target_lang)
    result = score(hypotheses, references)
    if args.name:
        result["name"] = args.name
    print(f"{args.name + ': ' if args.name else ''}BLEU {result['bleu']:.2f}  chrF {result['chrf']:.2f}"
          f"  ({result['sentences']} sentences; {result['bleu_signature']})")
    if args.json:
        with atomic_output(args.json) as out:
            json.dump(result, out, indent=2)


if __name__ == "__main__":
    sys.exit(main())
