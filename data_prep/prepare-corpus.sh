#!/usr/bin/env bash
# Your own parallel corpus, from raw text to the data-bins of every model family.
#
#   data_prep/prepare-corpus.sh --src SRC --tgt TGT [options] RAW_DIR OUT
#
# RAW_DIR holds untokenized text, one sentence a line, line i of one language the translation
# of line i of the other: train.SRC and train.TGT, and valid.* and test.* if you have them.
# A missing valid or test split is held out of train at random (seed 1; each min(1000, 5%)
# of the pairs), written with the rest of train to OUT/raw. Any language pair works:
# Moses rules tokenize every language, zh is segmented with jieba and ja with MeCab
# (pip install 'xlpe-fairseq[zh]' / '[ja]'); languages written without spaces other than these
# two are not segmented. OUT receives (data_prep/pipeline.sh has the details)
#   data-bin/text   transformer, re-encoder, re-decoder, re-both
#   data-bin/dpe    dpe: DPE target positions of train and valid from the word alignment
#   data-bin/xlpe   xlpe-*: BTG oracle positions for train, the preorderer's for valid/test
#   bpe/codes, preorderer.pt, recipe.env: what xlpe-translate --corpus OUT and
#                   examples/evaluate.sh read; reference/: the references evaluate.sh scores
#   provenance.json what OUT was made from (written last; checked by train.sh, evaluate.sh
#                   and xlpe-translate). OUT may not be empty, /, a system folder or a file,
#                   and one run at a time writes it (docs/input-rules.md, "Provenance")
# Next: examples/train.sh MODEL OUT/data-bin CHECKPOINTS, examples/evaluate.sh OUT CHECKPOINTS
# --model MODEL, and xlpe-translate --corpus OUT --checkpoint ... for new text.
#
# Options (in any order, before or after the operands; after --, operands only):
#   --merges N            joint BPE merges (default by the training pairs P left after the
#                         split: 5000 under 20k, 10000 under 200k as fairseq's IWSLT'14,
#                         20000 under 1M, else 32000 as the WMT setups)
#   --max-len N           train pairs with more tokens a side are dropped (default:
#                         175 under 1M pairs as fairseq's IWSLT'14, else 250 as its WMT'14)
#   --max-ratio R         train pairs whose length ratio (target tokens per source token)
#                         is more than R times off the typical ratio, either way, are dropped
#                         (default 1.5; under the corpus rule a short pair gets 5 tokens of
#                         slack a side)
#   --ratio-rule RULE     corpus (default): the typical ratio is the corpus's own, measured
#                         first (MeCab gives Japanese ~1.4 times English's tokens); fixed: 1,
#                         Moses' clean-corpus-n as fairseq's scripts run it. The run says how
#                         many pairs it kept and warns when over 5% go (docs/pipeline.md)
#   --lowercase           lowercase both sides (evaluation then scores lowercased text)
#   --joined-dictionary   one dictionary for both sides (scripts that share most symbols);
#                         examples/train.sh then shares all embeddings
#   --workers N           processes (default and most: all cores)
#   -h, --help            this text
# The preorderer (XL PE's test positions) follows the corpus: an ensemble of PREORDER_SEEDS=4
# structured-loss models (3 from 35,000 to 50,000 pairs), PREORDER_EPOCHS=9,
# PREORDER_BATCH_TOKENS=2000, PREORDER_MAX_LENGTH=150, trained as one-thread processes side
# by side (PREORDER_THREADS=1, PREORDER_JOBS=the cores); above 50,000 training pairs the same
# four members on one seeded sample of PREORDER_SAMPLE=35000 pairs, so 3 to 13 minutes on 2
# fast CPU cores (up to three times that on slow ones) at any size (docs/preorderer.md). Each
# of them, and the other environment settings of data_prep/pipeline.sh, can be set:
# PREORDER_SECONDS=3600 (a cap), PREORDER_DEVICE=cpu (or cuda), PREORDER_LOSS (pairwise,
# structured or both), XLPE_TRAIN_POSITIONS=oracle (or predicted, mixed), PREORDER_FOLDS=2.
# An option wins over its variable (MERGES, MAX_LEN, MAX_RATIO, RATIO_RULE, LOWERCASE,
# JOINED_DICT, WORKERS). Every value is checked before any work starts.
# A rerun into the same OUT skips each step whose inputs and settings are those its outputs
# were made from (by content, whatever the files' times) and redoes the others.
# At the end, the advice line names the model to train beside the baseline, with the command:
# xlpe-inxl where the preorderer's test positions close 10% or more of the way from the source
# order to the alignment's, re-both where they do not (docs/preorderer.md).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh"
source "$HERE/pipeline.sh"

usage() {
    echo "usage: $0 --src SRC --tgt TGT [--merges N] [--max-len N] [--max-ratio R]" \
        "[--ratio-rule corpus|fixed] [--lowercase]" \
        "[--joined-dictionary] [--workers N] RAW_DIR OUT" >&2
    exit 2
}
# check_ratio NAME VALUE: fail (status 2) unless VALUE is a number above 1 (a factor either way)
check_ratio() {
    check_positive "$1" "$2" 2>/dev/null && awk -v v="$2" 'BEGIN { exit !(v + 0 > 1) }' && return
    echo "$1 must be a number above 1, not '$2'" >&2
    return 2
}
# fail MESSAGE: a one-line error
fail() {
    echo "prepare-corpus.sh: $*" >&2
    exit 1
}

RECIPE_COMMAND=("$0" "$@")
SRC="" TGT="" OPERANDS=()
# each option checked as it is read, an empty value too; then every setting, before any work
while [[ $# -gt 0 ]]; do
    case $1 in
        --src | --tgt | --merges | --max-len | --max-ratio | --ratio-rule | --workers)
            need_value "$1" $# || exit 2
            case $1 in
                --src) check_language --src "$2" || exit 2; SRC=$2 ;;
                --tgt) check_language --tgt "$2" || exit 2; TGT=$2 ;;
                --merges) check_whole --merges "$2" 1 || exit 2; MERGES=$WHOLE ;;
                --max-len) check_whole --max-len "$2" 1 || exit 2; MAX_LEN=$WHOLE ;;
                --max-ratio) check_ratio --max-ratio "$2" || exit 2; MAX_RATIO=$2 ;;
                --ratio-rule) check_choice --ratio-rule "$2" corpus fixed || exit 2
                    RATIO_RULE=$2 ;;
                --workers) check_whole --workers "$2" 1 "$(cores)" || exit 2; WORKERS=$WHOLE ;;
            esac
            shift 2 ;;
        --lowercase) LOWERCASE=1; shift ;;
        --joined-dictionary) JOINED_DICT=1; shift ;;
        -h | --help) show_help "$0" ;;
        --) shift; OPERANDS+=("$@"); break ;;
        -*) echo "unknown option $1 (--help lists them)" >&2; exit 2 ;;
        *) OPERANDS+=("$1"); shift ;;
    esac
done
[[ ${#OPERANDS[@]} -eq 2 ]] || usage
if [[ -z $SRC || -z $TGT ]]; then
    echo "--src and --tgt are required" >&2
    exit 2
fi
[[ $SRC != "$TGT" ]] || { echo "--src and --tgt are both '$SRC'" >&2; exit 2; }
pipeline_settings || exit 2
# the length filter judges a pair against the corpus's typical length ratio, unless told
RATIO_RULE=${RATIO_RULE:-corpus} MAX_RATIO=${MAX_RATIO:-1.5}
check_choice RATIO_RULE "$RATIO_RULE" corpus fixed || exit 2
check_ratio MAX_RATIO "$MAX_RATIO" || exit 2
RAW_DIR=${OPERANDS[0]}
OUT=${OPERANDS[1]}
[[ -d $RAW_DIR ]] || fail "$RAW_DIR: no such folder"
# a folder named like an option (after --) is passed on as ./-NAME, which no command parses
[[ $RAW_DIR != -* ]] || RAW_DIR=./$RAW_DIR
[[ $OUT != -* ]] || OUT=./$OUT
RAW_ABS=$(cd -- "$RAW_DIR" && pwd)
for lang in "$SRC" "$TGT"; do
    case $lang in
        th | lo | km | my | bo)
            echo "prepare-corpus.sh: warning: $lang is written without spaces and no segmenter" \
                "is wired in for it: its 'words' will be whole phrases" >&2 ;;
    esac
done

# the splits that are there must be complete and parallel; train must be there
[[ -e $RAW_DIR/train.$SRC || -e $RAW_DIR/train.$TGT ]] ||
    fail "$RAW_DIR/train.$SRC and $RAW_DIR/train.$TGT: no such files (raw text, one" \
        "sentence a line)"
held_out=()
for split in "${PIPELINE_SPLITS[@]}"; do
    if [[ $split != train && ! -e $RAW_DIR/$split.$SRC && ! -e $RAW_DIR/$split.$TGT ]]; then
        held_out+=("$split")
        continue
    fi
    need_files "$RAW_DIR/$split.$SRC" "$RAW_DIR/$split.$TGT" || exit 1
    same_line_count "$RAW_DIR/$split.$SRC" "$RAW_DIR/$split.$TGT" || exit 1
done

# before anything is written: a folder of the user's own, and no other run in it
claim_folder prepare-corpus.sh write "$OUT" "the corpus (OUT)"
if ((${#held_out[@]} == 0)); then
    RAW=$RAW_DIR
else
    RAW=$OUT/raw
    mkdir -p "$RAW"
    [[ $RAW_ABS != "$(cd -- "$RAW" && pwd)" ]] ||
        fail "$RAW_DIR is where the held-out splits go: keep the raw files elsewhere"
    outputs=()
    for split in train "${held_out[@]}"; do
        outputs+=("$RAW/$split.$SRC" "$RAW/$split.$TGT")
    done
    if fresh "${outputs[@]}" -- "$RAW_DIR/train.$SRC" "$RAW_DIR/train.$TGT" -- \
            "held_out=${held_out[*]}"; then
        skipped "hold out ${held_out[*]}"
    else
        timed "hold out ${held_out[*]} (seed 1)" \
            python -m xlpe_fairseq.preprocessing.split_corpus --source "$RAW_DIR/train.$SRC" \
            --target "$RAW_DIR/train.$TGT" --out "$RAW" --splits "${held_out[@]}"
        made "${outputs[0]}"
    fi
    for split in "${PIPELINE_SPLITS[@]}"; do
        if [[ " ${held_out[*]} train " != *" $split "* ]]; then
            ln -sfn "$RAW_ABS/$split.$SRC" "$RAW/$split.$SRC"
            ln -sfn "$RAW_ABS/$split.$TGT" "$RAW/$split.$TGT"
        fi
    done
fi

# size-dependent defaults, from the training pairs before the length filter
PAIRS=$(line_count "$RAW/train.$SRC")
if [[ -z ${MERGES:-} ]]; then
    if ((PAIRS < 20000)); then MERGES=5000
    elif ((PAIRS < 200000)); then MERGES=10000
    elif ((PAIRS < 1000000)); then MERGES=20000
    else MERGES=32000
    fi
fi
if [[ -z ${MAX_LEN:-} ]]; then
    ((PAIRS < 1000000)) && MAX_LEN=175 || MAX_LEN=250
fi
echo "prepare-corpus.sh: $SRC-$TGT, $PAIRS training pairs: $MERGES BPE merges, at most" \
    "$MAX_LEN tokens a side" >&2

prepare_corpus "$RAW" "$OUT" "$SRC" "$TGT"
