#!/usr/bin/env bash
# The noise attack of XL PE (Ding et al. 2020, §4.5, Fig. 4): xlpe-combination models trained
# by xlpe-train at the demo size, with a ratio of their training tokens given a wrong reorder
# position by random swaps of two positions (--reorder-noise; drawn once per sentence), each
# scored on the test split by xlpe-evaluate (with the preorderer's test positions);
# xlpe-noise-curve then writes the BLEU table and plot.
#
#   examples/noise_attack.sh [--data DIR] [--updates N] [--noises "0 0.05 0.1 0.15 0.2"]
#       [--model-args "..."] [--work DIR] [--gpu]
#
# --data         xlpe-prepare's OUT, prepared for XL PE (with its preorderer), e.g. the demo's
#                work/demo/data after a demo with an XL PE model, or
#                data_prep/prepare-bible-he-en.sh --xlpe OUT (default work/demo/data)
# --updates      training updates per model (default: the demo schedule's)
# --noises       --reorder-noise values, one model each (default: the paper's 0 to 0.2)
# --model-args   fairseq-train options appended to xlpe-train's (later options win)
# --work         output folder (default work/noise_attack): noise-R/checkpoints (xlpe-train's
#                and xlpe-evaluate's files), scores.json (BLEU by noise), noise_curve.md and
#                .png; a model whose training finished is not trained again
# --gpu          train and decode on the GPU, training with --fp16
#
# Needs xlpe-fairseq's environment on PATH (xlpe-train, xlpe-evaluate), as `make demo`.
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
source "$HERE/data_prep/options.sh"
source "$HERE/examples/demo_settings.sh"
WORK=work/noise_attack
DATA=work/demo/data
UPDATES=$DEMO_UPDATES
NOISES="0 0.05 0.1 0.15 0.2"
MODEL_ARGS=
TRAIN_DEVICE=(--cpu)
EVALUATE_DEVICE=(--cpu)
# each value checked as it is read, an empty one too, before any work
while [[ $# -gt 0 ]]; do
    case $1 in
        --data | --updates | --noises | --model-args | --work)
            need_value "$1" $# || exit 2 ;;&
        --data | --work)
            if [[ -z $2 ]]; then
                echo "$1 must name a folder, not ''" >&2
                exit 2
            fi ;;&
        --data) DATA=$2; shift 2 ;;
        --updates) check_whole --updates "$2" 1 || exit 2; UPDATES=$WHOLE; shift 2 ;;
        --noises)
            read -r -a noises <<<"$2"
            if ((${#noises[@]} == 0)); then
                echo "--noises must list at least one ratio, not '$2'" >&2
                exit 2
            fi
            for noise in "${noises[@]}"; do
                if ! check_number --noises "$noise" 2>/dev/null ||
                        ! awk -v v="$noise" 'BEGIN { exit !(v >= 0 && v <= 1) }'; then
                    echo "--noises must be ratios from 0 to 1, not '$noise'" >&2
                    exit 2
                fi
            done
            NOISES=$2
            shift 2 ;;
        --model-args) MODEL_ARGS=$2; shift 2 ;;
        --work) WORK=$2; shift 2 ;;
        --gpu) TRAIN_DEVICE=(--fp16); EVALUATE_DEVICE=(); shift ;;
        -h | --help) show_help "$0" ;;
        *) echo "unknown option $1 (see $0 --help)" >&2; exit 2 ;;
    esac
done
export PYTHONWARNINGS=ignore

SCORES=()
for noise in $NOISES; do
    out=$WORK/noise-$noise
    mkdir -p "$out"
    # the record xlpe-train writes when fairseq-train has ended well; an interrupted training
    # is continued
    if [[ ! -f $out/checkpoints/provenance.json ]]; then
        echo "== train xlpe-combination with --reorder-noise $noise ($UPDATES updates)" >&2
        # shellcheck disable=SC2086  # $MODEL_ARGS is a list of options
        xlpe-train xlpe-combination "$DATA/data-bin" "$out/checkpoints" --size demo \
            --max-update "$UPDATES" "${TRAIN_DEVICE[@]}" -- --reorder-noise "$noise" \
            $MODEL_ARGS >/dev/null
    fi
    echo "== translate the test split (noise $noise)" >&2
    xlpe-evaluate "$DATA" "$out/checkpoints" "${EVALUATE_DEVICE[@]}"
    SCORES+=("$noise" "$out/checkpoints/bleu-test.json")
done

# BLEU by noise, as xlpe-evaluate scored it
python - "$WORK/scores.json" "${SCORES[@]}" <<'PY'
import json
import sys

from xlpe_fairseq.io import atomic_output

output, pairs = sys.argv[1], sys.argv[2:]
scores = {}
for noise, path in zip(pairs[::2], pairs[1::2]):
    with open(path, encoding="utf-8") as stream:
        scores[noise] = json.load(stream)["bleu"]
with atomic_output(output) as out:
    json.dump(scores, out, indent=2)
PY
# python -m rather than the xlpe-noise-curve entry point: it works from a checkout whose
# console scripts were installed before the command existed
python -m xlpe_fairseq.evaluation.noise_attack --results "XL PE (combination)=$WORK/scores.json" \
    --output-dir "$WORK"
echo "== results: $WORK/noise_curve.md, $WORK/noise_curve.png" >&2
