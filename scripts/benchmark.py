#!/usr/bin/env python
"""Speed and memory of the plugin's models relative to fairseq's ``transformer``, in one run.

Not a test: it prints ratios (model / transformer of the same size, same batch, same run),
the ceiling that arithmetic allows for each model, and with ``--prep`` the throughput of the
data-preparation steps on a corpus of at least a million pairs.

    python scripts/benchmark.py --size base                 # training + decoding ratios
    python scripts/benchmark.py --prep-only --prep-corpus work/demo/data/bpe \
        --prep-files train.he train.en train.align          # pairs/s, 1M pairs by default
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from argparse import Namespace
from pathlib import Path
from types import SimpleNamespace

import torch
from fairseq.data import Dictionary
from fairseq.models import ARCH_CONFIG_REGISTRY, ARCH_MODEL_REGISTRY
from fairseq.sequence_generator import SequenceGenerator
from fairseq.utils import apply_to_sample

import xlpe_fairseq  # noqa: F401  (registers the plugin)
from xlpe_fairseq.help_format import HelpFormatter
from xlpe_fairseq.model_registry import MODELS
from xlpe_fairseq.criterions.label_smoothed_cross_entropy_with_order import (
    LabelSmoothedCrossEntropyWithOrderCriterion,
)

SIZES = {
    "base": dict(embed=512, ffn=2048, heads=8, encoder_layers=6, decoder_layers=6),
    "small": dict(embed=256, ffn=1024, heads=2, encoder_layers=2, decoder_layers=2),
    "tiny": dict(embed=64, ffn=128, heads=2, encoder_layers=1, decoder_layers=1),
}

# the models benchmarked (the registry's names), each as its architecture and the options that
# are not the size's (the size is the benchmark's own); only registered architectures are run
VARIANTS = {name: (MODELS[name].arch, {flag[2:].replace("-", "_"): value
                                       for flag, value in MODELS[name].options
                                       if not value.startswith("{")})
            for name in ("transformer", "dpe", "xlpe-inxl", "xlpe-headxl", "xlpe-combination",
                         "re-encoder", "re-decoder", "re-both", "relpe", "rope", "alibi",
                         "t5-bias", "lstm")}


def matmul_work_per_token(label, size, vocab):
    """Multiply-adds per (source + target) token pair: the arithmetic ceiling's input.

    Attention score products are left out (short sentences); they are the same in every model.
    XL PE's InXL and Combination apply U and V (d x d each) to every source token's two
    sinusoids.
    Shaw et al.'s relative positions meet the ``2k + 1`` table rows (k = 16, the default) once
    per query for keys and once for values in every self-attention layer; rotary positions,
    ALiBi and T5's bias are elementwise (a rotation per query and key, an add per score).
    fairseq's LSTM (hidden size = width): 4 gates of ``(input + hidden) x hidden`` per layer;
    the decoder's first layer also reads the previous attention output (input feeding), and its
    attention projects the query (d x d) and the output (2d x d).
    """
    d, f = size["embed"], size["ffn"]
    if label == "lstm":
        encoder = size["encoder_layers"] * 8 * d * d
        decoder = 12 * d * d + (size["decoder_layers"] - 1) * 8 * d * d + 3 * d * d
        return encoder + decoder + d * vocab
    encoder_layer = 4 * d * d + 2 * d * f
    decoder_layer = 8 * d * d + 2 * d * f
    work = size["encoder_layers"] * encoder_layer + size["decoder_layers"] * decoder_layer + d * vocab
    if label == "dpe":
        work += 2 * encoder_layer
    if label in ("re-encoder", "re-both"):
        work += size["encoder_layers"] * 3 * d * d
    if label in ("re-decoder", "re-both"):
        work += size["decoder_layers"] * 3 * d * d
    if label in ("xlpe-inxl", "xlpe-combination"):
        work += 2 * d * d
    if label == "relpe":
        work += (size["encoder_layers"] + size["decoder_layers"]) * 2 * (2 * 16 + 1) * d
    return work


def build(label, size, vocab_size, device, fp16):
    arch, extra = VARIANTS[label]
    vocab = Dictionary()
    for i in range(vocab_size - len(vocab)):
        vocab.add_symbol(f"w{i}")
    task = SimpleNamespace(source_dictionary=vocab, target_dictionary=vocab)
    args = Namespace(
        encoder_embed_dim=size["embed"], decoder_embed_dim=size["embed"],
        encoder_ffn_embed_dim=size["ffn"], decoder_ffn_embed_dim=size["ffn"],
        encoder_attention_heads=size["heads"], decoder_attention_heads=size["heads"],
        encoder_layers=size["encoder_layers"], decoder_layers=size["decoder_layers"],
        share_all_embeddings=True, **extra,
    )
    if arch.startswith("lstm"):
        # the preset's 1024 units and 6 layers give way to the benchmark's size
        args.encoder_hidden_size = args.decoder_hidden_size = size["embed"]
        args.decoder_out_embed_dim = size["embed"]
        args.criterion = "label_smoothed_cross_entropy"  # fairseq's LSTM reads it
    if arch == "transformer_xlpe":
        # the paper's tau=4 of 8 heads; half the heads at other sizes
        args.xlpe_heads = min(4, size["heads"] // 2)
    ARCH_CONFIG_REGISTRY[arch](args)
    torch.manual_seed(0)
    model = ARCH_MODEL_REGISTRY[arch].build_model(args, task).to(device)
    if fp16:
        model = model.half()
    criterion = LabelSmoothedCrossEntropyWithOrderCriterion(task, False, 0.1, 0.5)
    return model, criterion, vocab


def random_batch(vocab, sentences, length, device, takes_positions):
    generator = torch.Generator().manual_seed(1)
    low, high = vocab.nspecial, len(vocab)
    src = torch.randint(low, high, (sentences, length), generator=generator)
    src[:, -1] = vocab.eos()
    tgt = torch.randint(low, high, (sentences, length), generator=generator)
    tgt[:, -1] = vocab.eos()
    prev = torch.cat([tgt.new_full((sentences, 1), vocab.eos()), tgt[:, :-1]], dim=1)
    positions = torch.stack([
        torch.cat([torch.randperm(length - 1, generator=generator), torch.tensor([length - 1])])
        for _ in range(sentences)
    ])
    net_input = {"src_tokens": src, "src_lengths": torch.full((sentences,), length),
                 "prev_output_tokens": prev}
    if takes_positions:
        net_input["reorder_positions"] = positions
    sample = {"net_input": net_input, "target": tgt, "ntokens": tgt.numel(),
              "reorder_positions": positions}
    return apply_to_sample(lambda tensor: tensor.to(device), sample)


def synchronize(device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def training_seconds(model, criterion, optimizer, sample, steps, device):
    model.train()
    synchronize(device)
    start = time.perf_counter()
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=True)
        loss, _, _ = criterion(model, sample)
        # per token, as fairseq's trainer scales it: a summed fp16 gradient of 32k tokens
        # overflows, and the NaN weights then never decode an end of sentence
        (loss / sample["ntokens"]).backward()
        optimizer.step()
    synchronize(device)
    return (time.perf_counter() - start) / max(steps, 1)


def decoding_seconds(model, vocab, sample, beam, device):
    model.eval()
    length = sample["net_input"]["src_tokens"].size(1)
    # untrained models stop at random lengths; a fixed output length makes every model
    # decode the same number of steps, so the ratio compares the cost per step
    generator = SequenceGenerator([model], vocab, beam_size=beam, max_len_b=length, min_len=length)
    net_input = {k: v for k, v in sample["net_input"].items() if k != "prev_output_tokens"}
    synchronize(device)
    start = time.perf_counter()
    with torch.no_grad():
        generator.generate([model], {"net_input": net_input})
    synchronize(device)
    return time.perf_counter() - start


def benchmark_models(args):
    size = SIZES[args.size]
    labels = [label for label in args.models if VARIANTS[label][0] in ARCH_MODEL_REGISTRY]
    built = {}
    for label in labels:
        model, criterion, vocab = build(label, size, args.vocab, args.device, args.fp16)
        takes_positions = getattr(model, "reorder_positions_role", None) == "input"
        sample = random_batch(vocab, args.tokens // args.length, args.length, args.device, takes_positions)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, eps=1e-4 if args.fp16 else 1e-8)
        training_seconds(model, criterion, optimizer, sample, args.warmup, args.device)
        built[label] = (model, criterion, optimizer, sample, vocab)

    train_times = {label: [] for label in labels}
    decode_times = {label: [] for label in labels}
    # interleaved rounds, so that machine noise hits every model alike
    for _ in range(args.rounds):
        for label, (model, criterion, optimizer, sample, vocab) in built.items():
            train_times[label].append(training_seconds(model, criterion, optimizer, sample, args.steps, args.device))
            if args.decode_sentences:
                small = {**sample, "net_input": {k: v[: args.decode_sentences] for k, v in sample["net_input"].items()}}
                decode_times[label].append(decoding_seconds(model, vocab, small, args.beam, args.device))

    base_train = statistics.median(train_times["transformer"])
    base_decode = statistics.median(decode_times["transformer"]) if args.decode_sentences else None
    base_work = matmul_work_per_token("transformer", size, args.vocab)
    rows = []
    for label in labels:
        model = built[label][0]
        train_time = statistics.median(train_times[label])
        ceiling = base_work / matmul_work_per_token(label, size, args.vocab)
        row = {
            "model": label,
            "params": sum(p.numel() for p in model.parameters()),
            "train_words_per_s": round(args.tokens / train_time),
            "train_ratio": round(base_train / train_time, 3),
            "ceiling": round(ceiling, 3),
            "train_ratio_of_ceiling": round(base_train / train_time / ceiling, 3),
            # how far the rounds' own ratios spread: repeats agree when this is small
            "train_ratio_spread": round(ratio_spread(train_times["transformer"], train_times[label]), 3),
        }
        if args.decode_sentences:
            decode_time = statistics.median(decode_times[label])
            row["decode_sentences_per_s"] = round(args.decode_sentences / decode_time, 1)
            row["decode_ratio"] = round(base_decode / decode_time, 3)
            row["decode_ratio_spread"] = round(
                ratio_spread(decode_times["transformer"], decode_times[label]), 3)
        rows.append(row)
    return rows


def ratio_spread(base_times, times):
    """(max - min) / median of the per-round ratios base / model: 0.02 means the rounds agree
    within 2%."""
    ratios = [base / time for base, time in zip(base_times, times)]
    return (max(ratios) - min(ratios)) / statistics.median(ratios)


def device_name(device):
    if device.startswith("cuda"):
        return torch.cuda.get_device_name(torch.device(device))
    return platform.processor() or platform.machine()


def peak_memory_mb(label, args):
    """Peak memory of training steps for one model, in a fresh process for a clean peak."""
    command = [sys.executable, __file__, "--memory-probe", label, "--size", args.size,
               "--tokens", str(args.tokens), "--length", str(args.length), "--vocab", str(args.vocab),
               "--device", args.device] + (["--fp16"] if args.fp16 else [])
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return float(output.strip().splitlines()[-1])


def memory_probe(args):
    size = SIZES[args.size]
    if not args.device.startswith("cuda"):
        # Linux keeps ru_maxrss across fork and exec (the probe would report its parent's
        # peak): reset this process's peak RSS (VmHWM) instead, and measure from here
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")
        before_kb = _vm_kb("VmRSS")
    model, criterion, vocab = build(args.memory_probe, size, args.vocab, args.device, args.fp16)
    takes_positions = getattr(model, "reorder_positions_role", None) == "input"
    sample = random_batch(vocab, args.tokens // args.length, args.length, args.device, takes_positions)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    if args.device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    training_seconds(model, criterion, optimizer, sample, 2, args.device)
    if args.device.startswith("cuda"):
        print(torch.cuda.max_memory_allocated() / 2**20)
    else:
        print(max(_vm_kb("VmHWM") - before_kb, 0) / 1024)


def _vm_kb(field):
    """A memory field of /proc/self/status (VmRSS, VmHWM), in kB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


def replicate_corpus(files, pairs, directory):
    """Concatenate copies of parallel files until they hold at least ``pairs`` lines."""
    lines = sum(1 for _ in open(files[0], encoding="utf-8"))
    copies = -(-pairs // lines)
    replicated = []
    Path(directory).mkdir(parents=True, exist_ok=True)
    for path in files:
        target = Path(directory) / Path(path).name
        with open(target, "wb") as out:
            for _ in range(copies):
                with open(path, "rb") as source:
                    shutil.copyfileobj(source, out)
        replicated.append(target)
    return replicated, copies * lines


def timed(command):
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def benchmark_preparation(args):
    corpus = Path(args.prep_corpus)
    source, target, alignment = (corpus / name for name in args.prep_files)
    rows = []
    cores = len(os.sched_getaffinity(0))
    with open(source, encoding="utf-8") as f:
        lines = f.readlines()
    tokens_per_pair = round(sum(len(line.split()) for line in lines) / max(len(lines), 1), 1)

    def row(step, pairs, seconds):
        return {"step": step, "pairs": pairs, "source tokens/pair": tokens_per_pair,
                "cores": cores, "pairs_per_s": round(pairs / seconds),
                "pairs_per_s_per_core": round(pairs / seconds / cores)}

    with tempfile.TemporaryDirectory(dir=args.prep_tmp) as tmp:
        (big_source, big_target, big_alignment), pairs = replicate_corpus(
            [source, target, alignment], args.prep_pairs, tmp)
        for method in ("dpe", "btg"):
            seconds = timed(["xlpe-reorder", "--method", method, "--source", str(big_source),
                             "--target", str(big_target), "--alignment", str(big_alignment),
                             "--output", os.path.join(tmp, f"{method}.reorder")])
            rows.append(row(f"reorder --method {method}", pairs, seconds))
        if args.align_pairs:
            (align_source, align_target), align_pairs = replicate_corpus(
                [source, target], args.align_pairs, os.path.join(tmp, "align"))
            seconds = timed(["xlpe-align", "--source", str(align_source), "--target",
                             str(align_target), "--output", os.path.join(tmp, "out.align")])
            rows.append(row("align (eflomal, both directions + gdfa)", align_pairs, seconds))
    return rows


def print_table(rows):
    if not rows:
        return
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row.get(k, "")) for k in keys) + " |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    parser.add_argument("--size", choices=SIZES, default="base", help="model size for all models")
    parser.add_argument("--models", nargs="+", choices=VARIANTS, default=list(VARIANTS),
                        help="variants to compare (transformer is always included)")
    parser.add_argument("--tokens", type=int, default=4096, help="target tokens per training batch")
    parser.add_argument("--length", type=int, default=32, help="tokens per sentence")
    parser.add_argument("--vocab", type=int, default=10000, help="joined vocabulary size")
    parser.add_argument("--steps", type=int, default=3, help="training steps per measurement")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps per model")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved measurement rounds")
    parser.add_argument("--decode-sentences", type=int, default=16, help="sentences to beam-decode (0: skip)")
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--fp16", action="store_true", help="half precision (GPU)")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory probes")
    parser.add_argument("--prep", action="store_true", help="also measure data preparation")
    parser.add_argument("--prep-only", action="store_true",
                        help="measure data preparation only (implies --prep)")
    parser.add_argument("--prep-corpus", help="folder with the prepared corpus (BPE text + alignment)")
    parser.add_argument("--prep-files", nargs=3, default=["train.bpe.he", "train.bpe.en", "train.align"],
                        metavar=("SOURCE", "TARGET", "ALIGNMENT"), help="file names inside --prep-corpus")
    parser.add_argument("--prep-pairs", type=int, default=1_000_000, help="pairs for reorder extraction")
    parser.add_argument("--align-pairs", type=int, default=1_000_000, help="pairs for alignment (0: skip)")
    parser.add_argument("--prep-tmp", default=None, help="scratch folder for the replicated corpus")
    parser.add_argument("--json", help="write all results to this JSON file")
    parser.add_argument("--memory-probe", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.memory_probe:
        memory_probe(args)
        return
    if args.prep_only:
        args.prep, args.models = True, []
    elif "transformer" not in args.models:
        args.models = ["transformer"] + args.models
    rows = []
    name = device_name(args.device)
    if args.models:
        print(f"device {args.device} ({name}), size {args.size} {SIZES[args.size]}, "
              f"{args.tokens} target tokens/batch")
        rows = benchmark_models(args)
    if rows and not args.no_memory:
        base_memory = peak_memory_mb("transformer", args)
        for row in rows:
            memory = base_memory if row["model"] == "transformer" else peak_memory_mb(row["model"], args)
            row["peak_mem_mb"] = round(memory)
            row["mem_ratio"] = round(memory / base_memory, 3) if base_memory else None
    print_table(rows)
    results = {"models": rows, "size": args.size, "device": args.device,
               "device_name": name, "tokens": args.tokens,
               "steps": args.steps, "rounds": args.rounds, "fp16": args.fp16}
    if args.prep:
        prep_rows = benchmark_preparation(args)
        print_table(prep_rows)
        results["preparation"] = prep_rows
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
