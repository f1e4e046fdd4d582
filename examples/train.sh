#!/usr/bin/env bash
# Train one model family on any corpus of data_prep/prepare-corpus.sh (or another recipe).
#
#   examples/train.sh MODEL DATA_DIR CHECKPOINT_DIR [--size small|base|big] [options...]
#
# MODEL       transformer | xlpe-inxl | xlpe-headxl | xlpe-combination | dpe |
#             re-encoder | re-decoder | re-both (or a baseline of examples/train_common.sh)
# DATA_DIR    the recipe's OUT/data-bin (OUT works too): the model reads its variant, text,
#             dpe or xlpe; the languages come from the file names, and a joined dictionary
#             (prepare-corpus.sh --joined-dictionary) shares all embeddings, else the
#             decoder's input and output embeddings are shared
# --size      small (default): 256/1024, 2+2 layers, 2 heads, the DPE paper's IWSLT'14 setup,
#             for up to a few hundred thousand pairs; base: Transformer base (512/2048, 6+6,
#             8 heads) for millions; big: Transformer big. Each size comes with its paper's
#             schedule, printed at the start (see train_common.sh). The small size's:
#             --max-update 15000, --warmup 4000, --lr 5e-4, dropout 0.3, --max-tokens 4096,
#             --update-freq 1, a validation and a checkpoint every 1000 updates, the last 5
#             kept and averaged by evaluate.sh, beam 5.
# --max-update U below the schedule's shortens it: unless given, the warm-up and the
#             checkpoint interval shrink in proportion (--max-update 300 at the small size:
#             warm-up 80, a checkpoint every 20 updates), so that a short first run learns
#             and evaluate.sh finds checkpoints to average
# The other options of examples/train_common.sh work here too (--schedule, --gpus 1, --fp16,
# --bf16, --lr, --warmup, --max-tokens, --update-freq, --dry-run: print the fairseq-train
# command instead of running it; --sbatch [--nodes N]: print an sbatch script that trains it
# over N nodes x --gpus GPUs through SLURM (docs/cluster.md); --restart: start afresh in a CHECKPOINT_DIR that holds
# another run, which is moved into CHECKPOINT_DIR/replaced-TIME; -h, --help: this text); the
# data-bin must be OUT's as prepared (OUT/provenance.json), and a CHECKPOINT_DIR of another
# model or data is refused, not resumed (docs/input-rules.md); any other option goes to
# fairseq-train as it is, after the script's own flags, so it wins (e.g. --patience 5,
# --save-interval-updates 500, --seed 2). Every value is checked before training starts.
#
# e.g. examples/train.sh xlpe-combination data/fr-en/data-bin checkpoints/fr-en/xlpe
# then examples/evaluate.sh data/fr-en checkpoints/fr-en/xlpe
set -euo pipefail
source "$(dirname "$0")/train_common.sh"

for argument in "$@"; do
    [[ $argument != -h && $argument != --help ]] || show_help "$0"
done
if [[ $# -lt 3 || $1 == -* || $2 == -* || $3 == -* ]]; then
    echo "usage: $0 MODEL DATA_DIR CHECKPOINT_DIR [--size small|base|big] [options]" >&2
    echo "MODEL: transformer xlpe-inxl xlpe-headxl xlpe-combination dpe re-encoder" \
        "re-decoder re-both" >&2
    exit 2
fi
MODEL=$1
DATA_BIN=$2
SAVE_DIR=$3
shift 3
[[ -d $DATA_BIN/data-bin ]] && DATA_BIN=$DATA_BIN/data-bin
if [[ ! -d $DATA_BIN/text && -d $DATA_BIN/../text && $(basename "$DATA_BIN") =~ ^(text|dpe|xlpe)$ ]]
then
    # one variant given: each model picks its own variant under the folder above
    parent=$(dirname "$DATA_BIN")
    variant=$(DATA_BIN=$parent model_data_bin "$MODEL")
    echo "$DATA_BIN is one variant of the data-bin: pass $parent, the folder above, from" \
        "which $MODEL reads ${variant##*/}" >&2
    exit 2
fi
if [[ ! -d $DATA_BIN/text ]]; then
    echo "$DATA_BIN/text: no such folder; is $DATA_BIN the data-bin of" \
        "data_prep/prepare-corpus.sh?" >&2
    exit 1
fi
DATA=$(dirname "$DATA_BIN")
# the pair from fairseq-preprocess's file names, train.SRC-TGT.SRC.idx
PAIR=$(find "$DATA_BIN/text" -maxdepth 1 -name 'train.*-*.idx' -printf '%f\n' | head -n 1 |
    cut -d. -f2)
if [[ -z $PAIR ]]; then
    echo "$DATA_BIN/text: no train.SRC-TGT.*.idx (fairseq-preprocess output)" >&2
    exit 1
fi
SRC=${PAIR%-*}
TGT=${PAIR#*-}
DATASET=$(basename "$DATA")
SIZES="small base big"
if cmp -s "$DATA_BIN/text/dict.$SRC.txt" "$DATA_BIN/text/dict.$TGT.txt"; then
    SHARE=--share-all-embeddings
else
    SHARE=--share-decoder-input-output-embed
fi
PASS_UNKNOWN=1 train_main --model "$MODEL" --save-dir "$SAVE_DIR" "$@"
