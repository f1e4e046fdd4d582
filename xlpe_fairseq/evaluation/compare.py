"""``xlpe-compare``: BLEU, chrF, significance and model size of several systems on one test set.

Each system is a fairseq-generate output (``--generated NAME=FILE``) or a checkpoint that is
translated here (``--checkpoint NAME=CKPT``, with ``--required-batch-size-multiple 1
--remove-bpe`` so no sentence is lost and BPE is undone). Scores are detokenized sacreBLEU and
chrF (``xlpe-bleu``'s ``score``). Each system is tested against the baseline by paired
bootstrap resampling (Koehn 2004): the same resampled test sets score both systems. The
two-sided p-value is how often the resampled difference has the sign opposite to (or equal to)
the observed one, doubled; a system compared with itself gets p = 1. (sacreBLEU's own
``--paired-bs`` gives a system against itself p ≈ 0 by design, which reads wrongly in a table.)
Where an output has ``T-`` lines, the reference must be the one they hold, as for
``xlpe-bleu`` (``reference_check``). Parameter counts come from the checkpoints. The table is
printed as Markdown and written atomically as Markdown and JSON.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np

from ..help_format import HelpFormatter
from ..io import (
    BOOTSTRAP_SAMPLES,
    SEED,
    InputError,
    ToolError,
    atomic_output,
    atomic_outputs,
    check_dictionaries,
    check_outputs,
    fairseq_checkpoint,
    language_code,
    read_lines,
    require_files,
    require_lines,
    run_command,
    shell_words,
)
from ..user_dir import PLUGIN_DIR
from .bleu import add_tokenize_argument, bleu_tokenizer, detokenize, metrics, score
from .generate_output import IncompleteGenerationError, read_generate_output
from .reference_check import check_reference

# state-dict entries that are buffers, not parameters: fairseq's encoder/decoder ``version``
# and the placeholder tensor of older sinusoidal position embeddings
NON_PARAMETER_NAMES = ("version", "_float_tensor")


def named_path(spec):
    """argparse type for ``NAME=PATH``; a bare ``PATH`` is named after its file stem."""
    name, found, path = spec.partition("=")
    if not found:
        name, path = Path(spec).stem, spec
    if not name or not path:
        raise argparse.ArgumentTypeError(f"expected NAME=PATH, got {spec!r}")
    return name, path


def read_checkpoint(checkpoint):
    """A fairseq checkpoint's saved state (weights, ``cfg``, ...), loaded on the CPU."""
    return fairseq_checkpoint(checkpoint)


def parameter_count(checkpoint):
    """Number of trainable parameters stored in a fairseq checkpoint."""
    return stored_parameter_count(read_checkpoint(checkpoint))


def stored_parameter_count(state):
    """Number of trainable parameters in a checkpoint's state (``read_checkpoint``).

    Tied embeddings are saved once per name but share storage, so each storage counts once.
    """
    seen, total = set(), 0
    for name, tensor in state["model"].items():
        if name.rsplit(".", 1)[-1] in NON_PARAMETER_NAMES:
            continue
        key = (tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tensor.numel())
        if key not in seen:
            seen.add(key)
            total += tensor.numel()
    return total


def generate(checkpoint, data_bin, split, output, extra_args, environment=None):
    """Translate ``split`` with fairseq-generate (``environment`` added to this process's); its
    stdout goes to ``output`` (atomically)."""
    command = [
        sys.executable, "-m", "fairseq_cli.generate", str(data_bin), "--user-dir", PLUGIN_DIR,
        "--task", "translation_reorder", "--path", str(checkpoint), "--gen-subset", split,
        # without it fairseq-generate silently drops the last sentences
        "--required-batch-size-multiple", "1", "--remove-bpe", "--num-workers", "0",
        *extra_args,
    ]
    env = {**os.environ, **(environment or {})}
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        # fairseq prints its whole configuration before a traceback: the last line says why,
        # the log keeps the rest
        log = f"{output}.log"
        with atomic_output(log) as out:
            out.write(f"{shlex.join(command)}\n{result.stderr}")
        reason = (result.stderr.strip().splitlines() or ["no message"])[-1]
        raise ToolError(f"fairseq-generate failed on {checkpoint} (exit {result.returncode}): "
                        f"{reason} (its log: {log})")
    with atomic_output(output) as out:
        out.write(result.stdout)


def check_split(data_bin, split):
    """InputError unless ``data_bin`` holds ``split``, before any checkpoint is decoded:
    fairseq-generate would fail after printing its whole configuration."""
    if not os.path.isdir(data_bin):
        raise InputError(f"{data_bin}: no such folder (--data-bin)")
    names = os.listdir(data_bin)
    if not any(name.startswith(f"{split}.") and name.endswith(".idx") for name in names):
        splits = sorted({name.split(".", 1)[0] for name in names if name.endswith(".idx")})
        raise InputError(f"{data_bin}: no {split!r} split (no {split}.*.idx); --gen-subset "
                         f"takes one of its splits: {', '.join(splits) or 'none'}")


def sentence_statistics(metric, hypotheses, references):
    """Per-sentence sufficient statistics (n-gram matches and lengths) of a sacreBLEU metric.

    sacreBLEU exposes no public API for them; its own significance tests use these methods.
    """
    return np.array(metric._extract_corpus_statistics(hypotheses, [references]), dtype=np.float64)


def corpus_score(metric, statistics):
    return metric._compute_score_from_stats(statistics).score


def sentence_draws(sentences, samples, rng):
    """``(samples, sentences)``: how often each test sentence is drawn in each sample."""
    return rng.multinomial(sentences, np.full(sentences, 1.0 / sentences),
                           size=samples).astype(np.float64)


def paired_bootstrap(metric, baseline_stats, system_stats, resample_counts):
    """Two-sided paired bootstrap p-value of the system-baseline difference of ``metric``.

    ``resample_counts`` is (samples x sentences): how often each sentence is drawn.
    """
    observed = corpus_score(metric, system_stats.sum(0)) - corpus_score(metric, baseline_stats.sum(0))
    differences = np.array([
        corpus_score(metric, system) - corpus_score(metric, baseline)
        for system, baseline in zip(resample_counts @ system_stats, resample_counts @ baseline_stats)
    ])
    return two_sided_p(observed, differences)


def two_sided_p(observed, differences):
    """Bootstrap p-value: twice the share of resampled differences not on the observed side.

    Ties count against the observed direction, so identical systems get p = 1.
    """
    if observed > 0:
        against = np.sum(differences <= 0)
    elif observed < 0:
        against = np.sum(differences >= 0)
    else:
        against = len(differences)
    return min(1.0, 2 * (against + 1) / (len(differences) + 1))


def compare(systems, references, baseline, samples=1000, seed=12345, tokenize="13a"):
    """Scores and p-values against ``baseline`` for ``{name: detokenized hypotheses}``; BLEU
    with sacreBLEU's ``tokenize``."""
    if baseline not in systems:
        raise InputError(f"baseline {baseline!r} is not one of the systems {list(systems)}")
    for name, hypotheses in systems.items():
        if len(hypotheses) != len(references):
            raise InputError(f"{name}: {len(hypotheses)} hypotheses for {len(references)} references")
    scorers = metrics(tokenize)
    rng = np.random.default_rng(seed)
    # one set of resamples for every system and metric: that is what makes the test paired
    resample_counts = sentence_draws(len(references), samples, rng)
    statistics = {
        key: {name: sentence_statistics(metric, hyps, references) for name, hyps in systems.items()}
        for key, metric in scorers.items()
    }
    rows = []
    for name, hypotheses in systems.items():
        row = {"name": name, "baseline": name == baseline, **score(hypotheses, references, tokenize)}
        for key, metric in scorers.items():
            stats = statistics[key]
            row[f"{key}_delta"] = round(
                corpus_score(metric, stats[name].sum(0)) - corpus_score(metric, stats[baseline].sum(0)), 2
            )
            row[f"{key}_p"] = paired_bootstrap(metric, stats[baseline], stats[name], resample_counts)
        rows.append(row)
    return {"baseline": baseline, "bootstrap_samples": samples, "seed": seed, "systems": rows}


def markdown_table(result):
    lines = [
        "| system | BLEU | ΔBLEU | p (BLEU) | chrF | ΔchrF | p (chrF) | parameters |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in result["systems"]:
        params = f"{row['parameters']:,}" if row.get("parameters") is not None else "–"
        if row["baseline"]:
            name, bleu_p, chrf_p = f"{row['name']} (baseline)", "–", "–"
        else:
            name, bleu_p, chrf_p = row["name"], f"{row['bleu_p']:.3f}", f"{row['chrf_p']:.3f}"
        lines.append(
            f"| {name} | {row['bleu']:.2f} | {row['bleu_delta']:+.2f} | {bleu_p} "
            f"| {row['chrf']:.2f} | {row['chrf_delta']:+.2f} | {chrf_p} | {params} |"
        )
    first = result["systems"][0]
    lines += [
        "",
        f"p: two-sided paired bootstrap against {result['baseline']} "
        f"({result['bootstrap_samples']} resamples, seed {result['seed']}).",
        f"BLEU: {first['bleu_signature']}",
        f"chrF: {first['chrf_signature']}",
    ]
    return "\n".join(lines) + "\n"


class SystemAction(argparse.Action):
    """Keeps --generated and --checkpoint systems in the order given on the command line."""

    def __call__(self, parser, namespace, values, option_string=None):
        namespace.systems = [*(namespace.systems or []), (self.dest, *values)]


def build_parser():
    parser = argparse.ArgumentParser(prog="xlpe-compare", description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.set_defaults(systems=[])
    parser.add_argument("--generated", type=named_path, action=SystemAction, metavar="NAME=FILE",
                        help="a system's fairseq-generate output (run with --remove-bpe and "
                        "--required-batch-size-multiple 1); repeatable")
    parser.add_argument("--checkpoint", type=named_path, action=SystemAction, metavar="NAME=CKPT",
                        help="a checkpoint to translate with fairseq-generate here; repeatable")
    parser.add_argument("--params", type=named_path, action="append", default=[],
                        metavar="NAME=CKPT", help="checkpoint of a --generated system, for its "
                        "parameter count")
    parser.add_argument("--reference", required=True,
                        help="reference text of the test set, one sentence per line: raw, or "
                        "tokenized with --tokenized-reference; checked against each output's T- "
                        "lines where it has them")
    parser.add_argument("--target-lang", required=True, type=language_code,
                        help="language code for detokenization and sacreBLEU's tokenizer")
    parser.add_argument("--tokenized-reference", action="store_true",
                        help="the reference is tokenized (xlpe-tokenize): detokenize it like the "
                        "hypotheses")
    add_tokenize_argument(parser)
    parser.add_argument("--baseline", help="system the others are tested against (default: first)")
    parser.add_argument("--bootstrap-samples", type=BOOTSTRAP_SAMPLES, default=1000)
    parser.add_argument("--seed", type=SEED, default=12345, help="seed of the bootstrap resampling")
    parser.add_argument("--data-bin", help="binarized data for --checkpoint systems")
    parser.add_argument("--gen-subset", default="test", help="split --checkpoint systems translate")
    parser.add_argument("--generate-args", type=shell_words, default="--beam 5 --max-tokens 4000",
                        help="further fairseq-generate options for --checkpoint systems, one "
                        "string (default: %(default)s)")
    parser.add_argument("--output-dir", default=".",
                        help="where --checkpoint systems' fairseq-generate outputs go, as NAME.gen")
    parser.add_argument("--markdown", help="write the table to this Markdown file")
    parser.add_argument("--json", help="write the table to this JSON file")
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    names = [name for _, name, _ in args.systems]
    if not names:
        parser.error("give at least one --generated or --checkpoint system")
    if len(set(names)) != len(names):
        parser.error(f"system names must be unique, got {names}")
    if any(kind == "checkpoint" for kind, _, _ in args.systems) and not args.data_bin:
        parser.error("--checkpoint systems need --data-bin")
    unknown = [name for name, _ in args.params if name not in names]
    if unknown:
        parser.error(f"--params for unknown systems {unknown}")
    run_command(lambda: _compare_systems(args), parser.prog)
    return 0


def _compare_systems(args):
    inputs = [args.reference, *(path for _, _, path in args.systems),
              *(path for _, path in args.params)]
    generated = [os.path.join(args.output_dir, f"{name}.gen")
                 for kind, name, _ in args.systems if kind == "checkpoint"]
    check_outputs([args.markdown, args.json, *generated], inputs)
    tokenize = bleu_tokenizer(args.target_lang, args.tokenize)
    references = read_lines(args.reference)
    require_lines(args.reference, len(references))
    if args.data_bin:
        check_dictionaries(args.data_bin)
        if any(kind == "checkpoint" for kind, _, _ in args.systems):
            check_split(args.data_bin, args.gen_subset)
    raw_references = references
    if args.tokenized_reference:
        references = detokenize(references)
    systems, checkpoints = {}, dict(args.params)
    for kind, name, path in args.systems:
        if kind == "checkpoint":
            checkpoints[name] = path
            output = os.path.join(args.output_dir, f"{name}.gen")
            generate(path, args.data_bin, args.gen_subset, output, shlex.split(args.generate_args))
            path = output
        require_files([path])
        try:
            generated = read_generate_output(path, len(references), args.reference)
        except IncompleteGenerationError as err:
            raise InputError(str(err)) from err
        check_reference(raw_references, generated.targets, args.reference, path)
        systems[name] = detokenize(generated.hypotheses)
    result = compare(systems, references, args.baseline or next(iter(systems)),
                     args.bootstrap_samples, args.seed, tokenize)
    for row in result["systems"]:
        checkpoint = checkpoints.get(row["name"])
        row["parameters"] = parameter_count(checkpoint) if checkpoint else None
    table = markdown_table(result)
    print(table, end="")
    # both files appear together, or neither
    written = {path: text for path, text in ((args.markdown, table),
                                             (args.json, json.dumps(result, indent=2)))
               if path}
    with atomic_outputs(written) as outs:
        for out, text in zip(outs, written.values()):
            out.write(text)


if __name__ == "__main__":
    sys.exit(main())
