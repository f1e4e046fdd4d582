#!/usr/bin/env bash
# The README's demo (`make demo`): real Hebrew->English data from PyPI, prepared by
# xlpe-prepare (data_prep/prepare-bible-he-en.sh); fairseq's `transformer` and the plugin's
# models trained by xlpe-train at the demo size, on the demo schedule (identical settings for
# every model); the whole test split translated and scored by xlpe-evaluate (detokenized
# sacreBLEU and chrF).
#
#   examples/demo.sh [--updates N] [--models "transformer dpe ..."] [--work DIR] [--gpu]
#
# --updates   training updates per model (default 500, the demo schedule's: about four
#             minutes each on 2 cores)
# --models    any of xlpe-study's models (default "transformer dpe"; docs/models.md):
#               transformer       fairseq's transformer
#               dpe               transformer_dpe (Zheng et al. 2021)
#               re-encoder re-decoder re-both
#                                 transformer_reorder_emb (Chen et al. 2019)
#               xlpe-inxl xlpe-headxl xlpe-combination
#                                 transformer_xlpe (Ding et al. 2020), tau = 1 of 4 heads
#               transformer-deep  baseline: 4 encoder layers, as many as DPE's 2 + 2 (DPE Table 5);
#                                 the name xlpe-study gives it (transformer-4e is an alias)
#               encoder-free encoder-free-inxl
#                                 baselines: no encoder layers, absolute PE or InXL PE (XL PE Table 4)
#               encoder-free-nopos encoder-free-relpe
#                                 baselines: no encoder layers, no source PE, then + Shaw relative
#                                 PE in the decoder (XL PE Table 4 "noEnc-noPos", "+ Relative PE")
#               lstm              baseline: XL PE Table 4's LSTM (lstm_6l_wmt_en_de) at the
#                                 demo's width and depth
#               relpe rope alibi t5-bias
#                                 position baselines: transformer_relpe (Shaw et al. 2018),
#                                 transformer_rope, transformer_alibi, transformer_t5_bias
#               two-pass          baseline: reordering + translation Transformers (DPE §3.1,
#                                 examples/two_pass.sh)
#             The xlpe-* models and encoder-free-inxl read DIR/data/data-bin/xlpe (BTG oracle
#             positions for train, preorderer ones for valid/test); the preorderer is trained
#             only when one of them is asked for; XLPE_TRAIN_POSITIONS=predicted in the
#             environment trains them on the preorderer's positions instead (see xlpe-prepare)
# --work      output folder (default work/demo); data preparation is reused on rerun, the
#             listed models are trained afresh, each into DIR/MODEL/checkpoints (xlpe-train's
#             and xlpe-evaluate's files); DIR/results.md lists every model in DIR
# --gpu       train and decode on the GPU, training with --fp16 (use with a larger --updates)
#
# On one machine and stack, a CPU run's numbers depend neither on its cores nor on its load:
# eflomal runs seeded, and examples/demo_settings.sh fixes torch's thread count (DEMO_THREADS
# in the environment, default 2, as for the README's numbers) and kernels (AVX2). Other CPU
# models give numbers a few tenths apart (docs/reproducibility.md). GPU runs (--gpu)
# are not made repeatable: CUDA kernels differ between GPUs, and some sum in varying order.
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
WORK=work/demo
source "$HERE/data_prep/options.sh"
source "$HERE/examples/demo_settings.sh"
UPDATES=$DEMO_UPDATES
MODELS="transformer dpe"
TRAIN_DEVICE=(--cpu)
EVALUATE_DEVICE=(--cpu)
GPU_FLAG=()
# each value checked as it is read, an empty one too, before any work
while [[ $# -gt 0 ]]; do
    case $1 in
        --updates | --models | --work) need_value "$1" $# || exit 2 ;;&
        --updates) check_whole --updates "$2" 1 || exit 2; UPDATES=$WHOLE; shift 2 ;;
        --models)
            if [[ -z ${2//[[:space:]]/} ]]; then
                echo "--models must name at least one model, not '$2'" >&2
                exit 2
            fi
            MODELS=$2
            shift 2 ;;
        --work)
            if [[ -z $2 ]]; then
                echo "--work must name a folder, not ''" >&2
                exit 2
            fi
            WORK=$2
            shift 2 ;;
        --gpu) TRAIN_DEVICE=(--fp16); EVALUATE_DEVICE=(); GPU_FLAG=(--gpu); shift ;;
        -h | --help) show_help "$0" ;;
        *) echo "unknown option $1 (see $0 --help)" >&2; exit 2 ;;
    esac
done
export PYTHONWARNINGS=ignore
DATA=$WORK/data

# The models by the model registry's names (an alias by its model's), each known, and whether
# one reads XL PE's positions (the preorderer is prepared for it): a wrong name fails now,
# not after data preparation
CHECKED=$(python - "$MODELS" <<'PY'
import sys

from xlpe_fairseq.model_registry import ALIASES, STUDY_MODELS, reads_positions

names = [ALIASES.get(name, name) for name in sys.argv[1].split()]
for name in names:
    if name not in (*STUDY_MODELS, "two-pass"):
        sys.exit(f"unknown model {name}")
print(" ".join(names))
print(int(any(reads_positions(name) for name in names)))
PY
) || exit 2
MODELS=${CHECKED%$'\n'*}
XLPE=${CHECKED##*$'\n'}
# two_pass.sh averages the last 5 checkpoints of its Transformers
if [[ " $MODELS " == *" two-pass "* ]] && ((UPDATES < 5)); then
    echo "--updates must be at least 5 for two-pass (it averages 5 checkpoints), not" \
        "'$UPDATES'" >&2
    exit 2
fi
XLPE=$XLPE bash "$HERE/data_prep/prepare-bible-he-en.sh" "$DATA"

for model in $MODELS; do
    if [[ $model == two-pass ]]; then
        bash "$HERE/examples/two_pass.sh" --data "$DATA" --work "$WORK/two-pass" \
            --updates "$UPDATES" "${GPU_FLAG[@]}"
        continue
    fi
    out=$WORK/$model
    # a rerun trains from scratch: xlpe-train would otherwise continue the run in the folder
    rm -rf "$out"
    mkdir -p "$out"
    echo "== train $model ($UPDATES updates)" >&2
    start=$EPOCHREALTIME
    # fairseq's report goes to CHECKPOINT_DIR/train.log; the schedule and progress to stderr
    xlpe-train "$model" "$DATA/data-bin" "$out/checkpoints" --size demo \
        --max-update "$UPDATES" "${TRAIN_DEVICE[@]}" >/dev/null
    awk -v s="$start" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.0f\n", e - s }' >"$out/train_seconds"
    echo "$UPDATES" >"$out/updates"
    grep -E "\| train \|" "$out/checkpoints/train.log" | tail -1 >&2

    echo "== translate the test split with $model" >&2
    xlpe-evaluate "$DATA" "$out/checkpoints" "${EVALUATE_DEVICE[@]}"
    ln -sfn checkpoints/bleu-test.json "$out/bleu.json"
done

# Every model trained in WORK, in the order of the header's list, with its own update count.
score_file=""
if [[ -f $WORK/xlpe-inxl/bleu.json || -f $WORK/xlpe-headxl/bleu.json || -f $WORK/xlpe-combination/bleu.json ]]; then
    score_file=$DATA/preorderer.test.score
fi
python - "$WORK" "$score_file" "$DATA" "${#GPU_FLAG[@]}" <<'PY'
import hashlib, json, sys
from pathlib import Path

from xlpe_fairseq.preprocessing.word_alignment import eflomal_build

work, score_file, data = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
on_gpu = sys.argv[4] != "0"
# BLEU measured at the defaults on this project's 2-core machine since the demo runs
# xlpe-prepare, xlpe-train and xlpe-evaluate (docs/reproducibility.md); other CPU models move
# one seed by a few tenths with the kernels' rounding
MEASURED = {"transformer": "6.49", "dpe": "5.94"}
order = ["transformer", "dpe", "re-encoder", "re-decoder", "re-both", "xlpe-inxl", "xlpe-headxl",
         "xlpe-combination", "transformer-deep", "encoder-free", "encoder-free-inxl",
         "encoder-free-nopos", "encoder-free-relpe", "lstm", "relpe", "rope", "alibi", "t5-bias",
         "two-pass"]
lines = ["| model | BLEU | chrF | updates | train seconds | test sentences |",
         "|---|---|---|---|---|---|"]
signatures = []
for model in order:
    if not (work / model / "bleu.json").is_file():
        continue
    score = json.loads((work / model / "bleu.json").read_text())
    seconds = (work / model / "train_seconds").read_text().strip()
    updates = (work / model / "updates").read_text().strip()
    lines.append(f"| {model} | {score['bleu']:.2f} | {score['chrf']:.2f} | {updates} | {seconds} "
                 f"| {score['sentences']} |")
    signatures = [f"BLEU: {score['bleu_signature']}", f"chrF: {score['chrf_signature']}"]
lines += ["", *signatures]
# what DPE's positions come from: equal hashes, equal data (docs/reproducibility.md)
digests = ", ".join(f"{name} {hashlib.md5((data / 'bpe' / name).read_bytes()).hexdigest()}"
                    for name in ("codes", "train.align", "train.dpe.reorder"))
build = eflomal_build()
build = "no compiler record" if build is None else build[0] + ("" if build[1] else
        " (built for this CPU: another CPU model aligns differently)")
lines += [f"data md5: {digests}", f"eflomal: {build}"]
measured = [f"{model} {bleu}" for model, bleu in MEASURED.items()
            if not on_gpu and (work / model / "updates").is_file()
            and (work / model / "updates").read_text().strip() == "500"]
if measured:
    lines.append(f"measured at 500 updates on a 2-core CPU: BLEU {', '.join(measured)}; another "
                 "CPU model moves one seed by a few tenths (docs/reproducibility.md)")
if score_file:
    lines += ["", "XL PE test positions: the preorderer vs the BTG oracle of the test alignment",
              "```", Path(score_file).read_text().rstrip(), "```"]
table = "\n".join(lines) + "\n"
(work / "results.md").write_text(table)
print(table)
PY
echo "== results: $WORK/results.md" >&2
