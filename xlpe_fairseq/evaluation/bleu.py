"""``xlpe-bleu``: detokenized sacreBLEU and chrF of a fairseq-generate run.

The hypotheses come back in corpus order (all of them, or an error), BPE removed by
fairseq's ``--remove-bpe``, then detokenized (``detokenize``: each line as its tokens record
it, so the tokenized reference comes back as the raw one exactly), so that the score is the
standard detokenized BLEU with its sacreBLEU signature. sacreBLEU's tokenizer follows the
target language (``bleu_tokenizer``): 13a splits at spaces and punctuation only, which would
score a Chinese, Japanese or Korean sentence as a handful of long words. Where the output has
``T-`` lines, the reference must be the one they hold (``reference_check``).
"""
import argparse
import json
import sys

import sacrebleu
from ..help_format import HelpFormatter
from ..io import (
    InputError,
    atomic_outputs,
    check_outputs,
    language_code,
    read_lines,
    require_files,
    require_lines,
    run_command,
)
from ..text.detokenization import base_language, detokenize
from .generate_output import IncompleteGenerationError, read_generate_output
from .reference_check import check_reference


# sacreBLEU's tokenizer for a target language (13a for any other), and the pip extra of this
# package (the same name in sacreBLEU's extras) that installs what it needs
LANGUAGE_TOKENIZERS = {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}
TOKENIZER_EXTRAS = {"ja-mecab": "ja", "ko-mecab": "ko"}


def bleu_tokenizer(target_lang, tokenize=None):
    """The sacreBLEU tokenizer to score ``target_lang`` with: ``tokenize`` (a ``--tokenize``
    option) if given, else zh, ja-mecab or ko-mecab by the language, else 13a. Fails with the
    pip extra to install where the tokenizer's dependencies are missing."""
    name = tokenize or LANGUAGE_TOKENIZERS.get(base_language(target_lang), "13a")
    try:
        sacrebleu.metrics.BLEU(tokenize=name)
    except RuntimeError as err:  # sacreBLEU's way of saying a tokenizer's dependency is missing
        extra = TOKENIZER_EXTRAS.get(name)
        hint = f" needs its extra: pip install 'xlpe-fairseq[{extra}]' (or 'sacrebleu[{extra}]')"
        raise InputError(f"BLEU with sacreBLEU's {name} tokenizer{hint if extra else ''}: "
                         f"{err}") from err
    return name


def add_tokenize_argument(parser):
    parser.add_argument("--tokenize", choices=list(sacrebleu.metrics.BLEU.TOKENIZERS),
                        help="sacreBLEU's tokenizer for BLEU (default: by --target-lang: zh for "
                        "zh, ja-mecab for ja, ko-mecab for ko, else 13a)")


def metrics(tokenize="13a", tokenized=False):
    """BLEU with sacreBLEU's ``tokenize`` and chrF (which tokenizes nothing); ``tokenized``:
    the text is tokenized as given (a corpus prepared from tokenized text), which sacreBLEU
    would warn about on every run (``force``, which changes no score)."""
    return {"bleu": sacrebleu.metrics.BLEU(tokenize=tokenize, force=tokenized),
            "chrf": sacrebleu.metrics.CHRF()}


def score(hypotheses, references, tokenize="13a", tokenized=False):
    """Return a dict with BLEU, chrF and their signatures."""
    bleu, chrf = metrics(tokenize, tokenized).values()
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
                        help="reference text, one sentence per line: raw, or tokenized with "
                        "--tokenized-reference; checked against the generate output's T- lines "
                        "where it has them")
    parser.add_argument("--target-lang", required=True, type=language_code,
                        help="language code for detokenization and sacreBLEU's tokenizer")
    parser.add_argument("--tokenized-reference", action="store_true",
                        help="the reference is tokenized (xlpe-tokenize): detokenize it like the "
                        "hypotheses")
    add_tokenize_argument(parser)
    parser.add_argument("--json", help="also write the scores to this JSON file")
    parser.add_argument("--detokenized-output",
                        help="also write the detokenized hypotheses, as scored, to this file, "
                        "one a line in corpus order")
    parser.add_argument("--name", default="",
                        help="label printed before the scores (default: none)")
    args = parser.parse_args(argv)

    run_command(lambda: score_and_write(
        args.generate_output, args.reference, args.target_lang, args.tokenized_reference,
        args.tokenize, args.json, args.detokenized_output, args.name), parser.prog)
    return 0


def score_generate_output(generate_output, reference, target_lang, tokenized_reference=False,
                          tokenize=None):
    """``(scores, detokenized hypotheses)`` of a complete fairseq-generate output against
    ``reference`` (detokenized first where ``tokenized_reference``); InputError for an
    incomplete output or a reference of other sentences."""
    tokenize = bleu_tokenizer(target_lang, tokenize)
    references = read_lines(reference)
    require_lines(reference, len(references))
    try:
        generated = read_generate_output(generate_output, len(references), reference)
    except IncompleteGenerationError as err:
        raise InputError(str(err)) from None
    check_reference(references, generated.targets, reference, generate_output)
    hypotheses = detokenize(generated.hypotheses)
    if tokenized_reference:
        references = detokenize(references)
    return score(hypotheses, references, tokenize, tokenized_reference), hypotheses


def score_and_write(generate_output, reference, target_lang, tokenized_reference=False,
                    tokenize=None, json_output=None, detokenized_output=None, name=""):
    """``xlpe-bleu``: the scores of a complete fairseq-generate run printed (under ``name``),
    and written to ``json_output`` and the detokenized hypotheses to ``detokenized_output``
    where given (both or neither)."""
    require_files([generate_output, reference])
    check_outputs([json_output, detokenized_output], [generate_output, reference])
    result, hypotheses = score_generate_output(generate_output, reference, target_lang,
                                               tokenized_reference, tokenize)
    if name:
        result["name"] = name
    # the scores, then each one's sacreBLEU signature, as xlpe-compare prints them
    print(f"{name + ': ' if name else ''}BLEU {result['bleu']:.2f}  chrF "
          f"{result['chrf']:.2f}  ({result['sentences']} sentences)\n"
          f"BLEU: {result['bleu_signature']}\nchrF: {result['chrf_signature']}")
    writers = {
        json_output: lambda out: json.dump(result, out, indent=2),
        detokenized_output: lambda out: out.writelines(f"{line}\n" for line in hypotheses),
    }
    writers.pop(None, None)
    # both files or neither
    with atomic_outputs(list(writers)) as outs:
        for write, out in zip(writers.values(), outs):
            write(out)


if __name__ == "__main__":
    sys.exit(main())
