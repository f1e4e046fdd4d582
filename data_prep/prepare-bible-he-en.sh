#!/usr/bin/env bash
# Hebrew->English Bible corpus (PyPI bible-alignments, manual gold alignments for valid/test)
# prepared for fairseq-train --task translation_reorder with DPE reorder positions.
#
#   data_prep/prepare-bible-he-en.sh [--xlpe] OUTDIR
#
# --xlpe (or XLPE=1) also prepares XL PE (Ding et al. 2020, step 6): BTG oracle positions,
# a source-only preorderer trained on them and scored on test, and OUTDIR/data-bin-xlpe.
#
# Needs xlpe-fairseq installed in the active environment (xlpe-* and fairseq-preprocess on
# PATH). A rerun skips each step whose outputs were made from the present content of its
# inputs and from the same settings, whatever the files' times (data_prep/lib.sh).
# Environment: WORKERS (default: all cores), MERGES (default: 8000), XLPE (1: as --xlpe),
# XLPE_TRAIN_POSITIONS (oracle, the default: BTG positions from the alignment for train;
# predicted: the preorderer's, as at test time, cross-fitted over PREORDER_FOLDS (default 2)
# folds by xlpe-preorder-crossfit; mixed: oracle or cross-fitted per sentence, half each), ALIGN_SEED (eflomal's seed, default 1),
# PREORDER_EPOCHS (default 3), PREORDER_THREADS (the preorderer's torch threads, default 2).
#
# The output depends only on these settings and the installed tools (eflomal's build, torch),
# not on WORKERS, the machine's cores or its load: every step but eflomal and the preorderer
# is deterministic, eflomal runs seeded, and the preorderer trains a fixed number of epochs
# with a fixed thread count (torch rounds differently with another one).
set -euo pipefail
# fresh, stamp, timed, skipped, and the option checks of options.sh
source "$(dirname "$0")/lib.sh"

XLPE=${XLPE:-0}
positional=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --xlpe) XLPE=1; shift ;;
        -h | --help) show_help "$0" ;;
        --) shift; positional+=("$@"); break ;;
        -*) echo "unknown option $1 (see $0 --help)" >&2; exit 2 ;;
        *) positional+=("$1"); shift ;;
    esac
done
if [[ ${#positional[@]} -ne 1 || -z ${positional[0]} ]]; then
    echo "usage: $0 [--xlpe] OUTDIR" >&2
    exit 2
fi
OUT=${positional[0]}
# a folder named like an option (after --) is passed on as a path, not as an option
[[ $OUT != -* ]] || OUT=./$OUT
XLPE_TRAIN_POSITIONS=${XLPE_TRAIN_POSITIONS:-oracle}
if [[ $XLPE_TRAIN_POSITIONS != @(oracle|predicted|mixed) ]]; then
    echo "XLPE_TRAIN_POSITIONS must be oracle, predicted or mixed, not" \
        "'$XLPE_TRAIN_POSITIONS'" >&2
    exit 2
fi
# xlpe-preorder-train keeps the epoch with the best valid tau; valid tau peaked at epoch 2
# here. Epochs, not a time budget: how many epochs fit in a budget depends on the machine.
PREORDER_EPOCHS=${PREORDER_EPOCHS:-3}
PREORDER_THREADS=${PREORDER_THREADS:-2}
ALIGN_SEED=${ALIGN_SEED:-1}
WORKERS=${WORKERS:-$(cores)}
# ~21k verse pairs, ~1M word tokens, ~50k word types over both languages: 8000 joint merges
# keep a few thousand symbols per side, small enough that each occurs often in 21k pairs,
# while frequent words stay whole (cf. 10k merges for the 160k-pair IWSLT'14 setups).
MERGES=${MERGES:-8000}
SRC=he
TGT=en
CORPUS=$OUT/corpus
BPE=$OUT/bpe
BIN=$OUT/data-bin
SPLITS=(train valid test)
# every setting checked before any work (whole numbers read as decimals: 08 is 8)
check_choice XLPE "$XLPE" 0 1 || exit 2
# (PREORDER_THREADS' default of 2, which the README's numbers were measured with, runs on one
# core too)
for setting in WORKERS:1:$(cores) MERGES:1: PREORDER_EPOCHS:1: \
        PREORDER_THREADS:1:$(($(cores) > 2 ? $(cores) : 2)) ALIGN_SEED:0:4294967295; do
    IFS=: read -r name min max <<<"$setting"
    check_whole "$name" "${!name}" "$min" "$max" || exit 2
    printf -v "$name" %s "$WHOLE"
done

mkdir -p "$CORPUS" "$BPE" "$BIN"

# 1. Corpus. Already tokenized on both sides (Hebrew morphemes, BSB words and punctuation),
#    and the gold alignments index exactly these tokens, so there is no tokenization step.
corpus_files=()
for split in "${SPLITS[@]}"; do
    corpus_files+=("$CORPUS/$split.$SRC" "$CORPUS/$split.$TGT" "$CORPUS/$split.ids")
done
corpus_files+=("$CORPUS/valid.gold.align" "$CORPUS/test.gold.align")
if fresh "${corpus_files[@]}" --; then
    skipped corpus
else
    timed corpus xlpe-bible-corpus --out "$CORPUS"
    made "${corpus_files[0]}"
fi

# 2. Joint BPE codes learned on the training text of both sides, applied to every split.
bpe_splits "$CORPUS" "$BPE" "$SRC" "$TGT" "${SPLITS[@]}"

# align_splits SPLIT...: align the pairs of all SPLITs in one aligner run and cut the links
# back into $BPE/SPLIT.align, so that every split gets the lexical statistics of all of them.
align_splits() {
    local tmp split lines first=1
    tmp=$(mktemp -d "$BPE/.align-splits.XXXXXX")
    for split in "$@"; do
        cat "$BPE/$split.$SRC" >>"$tmp/all.$SRC"
        cat "$BPE/$split.$TGT" >>"$tmp/all.$TGT"
    done
    xlpe-align --source "$tmp/all.$SRC" --target "$tmp/all.$TGT" --output "$tmp/all.align" \
        --seed "$ALIGN_SEED" --workers "$WORKERS" --verbose
    for split in "$@"; do
        lines=$(wc -l <"$BPE/$split.$SRC")
        sed -n "$first,$((first + lines - 1))p" "$tmp/all.align" >"$tmp/$split.align"
        first=$((first + lines))
    done
    for split in "$@"; do
        mv "$tmp/$split.align" "$BPE/$split.align"
    done
    rm -r "$tmp"
}

# 3. Word alignment over BPE tokens (eflomal, grow-diag-final-and). DPE needs train, and valid
#    for its order loss on held-out text (the learning diagnostics of the criterion). XL PE
#    also needs a BTG oracle for test (the preorderer's score). eflomal estimates its lexical
#    statistics from the corpus it is given, so the 1000-pair test set aligned on its own
#    aligns worse (AER against the gold links .58, against .49 aligned with train and valid):
#    the splits that need links are aligned in one run. Switching XL PE on over a default
#    preparation realigns train too (and so redoes the DPE positions).
ALIGN_SPLITS=(train valid)
[[ $XLPE == 1 ]] && ALIGN_SPLITS=(train valid test)
align_inputs=()
align_outputs=()
for split in "${ALIGN_SPLITS[@]}"; do
    align_inputs+=("$BPE/$split.$SRC" "$BPE/$split.$TGT")
    align_outputs+=("$BPE/$split.align")
done
if fresh "${align_outputs[@]}" -- "${align_inputs[@]}"; then
    skipped "align ${ALIGN_SPLITS[*]}"
else
    timed "align ${ALIGN_SPLITS[*]}" align_splits "${ALIGN_SPLITS[@]}"
    made "${align_outputs[0]}"
fi

# 4. DPE reorder positions: train's supervise the order loss; valid's measure it on held-out
#    text. Test needs none (DPE takes no side input).
for split in train valid; do
    reorder_positions dpe "$BPE" "$split" "$SRC" "$TGT" "$BPE/$split.reorder"
done

# 5. fairseq binarization. Separate dictionaries: Hebrew and English share no symbols, so a
#    joined dictionary would only enlarge both embedding tables and the output softmax.
bin_inputs=()
for split in "${SPLITS[@]}"; do
    bin_inputs+=("$BPE/$split.$SRC" "$BPE/$split.$TGT")
done
if fresh "$BIN/dict.$SRC.txt" "$BIN/dict.$TGT.txt" "$BIN/test.$SRC-$TGT.$TGT.idx" -- \
        "${bin_inputs[@]}"; then
    skipped fairseq-preprocess
else
    # fairseq-preprocess refuses to overwrite its dictionaries
    rm -f "$BIN/dict.$SRC.txt" "$BIN/dict.$TGT.txt"
    timed fairseq-preprocess fairseq-preprocess --source-lang "$SRC" --target-lang "$TGT" \
        --trainpref "$BPE/train" --validpref "$BPE/valid" --testpref "$BPE/test" \
        --destdir "$BIN" --workers "$WORKERS"
    made "$BIN/dict.$SRC.txt"
fi

calls=() names=() binarized=()
for split in train valid; do
    reorder_bin=$BIN/$split.reorder.$SRC-$TGT
    if fresh "$reorder_bin.bin" "$reorder_bin.idx" -- "$BPE/$split.reorder" "$BPE/$split.$SRC"
    then
        skipped "binarize $split.reorder"
    else
        ((${#calls[@]})) && calls+=(--then)
        calls+=(--reorder "$BPE/$split.reorder" --source "$BPE/$split.$SRC" --destdir "$BIN"
            --split "$split" --source-lang "$SRC" --target-lang "$TGT")
        names+=("$split.reorder")
        binarized+=("$reorder_bin.bin")
    fi
done
if ((${#calls[@]})); then
    # xlpe-binarize for every split in one process: importing fairseq costs seconds a call
    timed "binarize ${names[*]}" \
        python -m xlpe_fairseq.in_one_process xlpe_fairseq.preprocessing.binarize "${calls[@]}"
    for file in "${binarized[@]}"; do
        made "$file"
    done
fi

echo "== done: $BIN (gold word alignments: $CORPUS/{valid,test}.gold.align)" >&2
[[ $XLPE == 1 ]] || exit 0

# 6. XL PE. Training takes pos_XL from a BTG tree consistent with the alignment; valid and
#    test, as any new source text, from the source-only preorderer trained on those trees.
for split in "${SPLITS[@]}"; do
    reorder_positions btg "$BPE" "$split" "$SRC" "$TGT" "$BPE/$split.btg.reorder"
done

PREORDERER=$OUT/preorderer.pt
# Train under another name so that an interrupted run leaves no checkpoint that a rerun
# would take as finished.
train_preorderer() {
    xlpe-preorder-train --source "$BPE/train.$SRC" --reorder "$BPE/train.btg.reorder" \
        --valid-source "$BPE/valid.$SRC" --valid-reorder "$BPE/valid.btg.reorder" \
        --epochs "$PREORDER_EPOCHS" --threads "$PREORDER_THREADS" --save "$PREORDERER.part"
    mv "$PREORDERER.part" "$PREORDERER"
}
# Torch's thread count changes its sums' order, so a model trained on other threads is another model.
stamp "$OUT/preorderer.settings" "epochs=$PREORDER_EPOCHS threads=$PREORDER_THREADS"
if fresh "$PREORDERER" -- "$BPE/train.$SRC" "$BPE/train.btg.reorder" "$BPE/valid.$SRC" \
        "$BPE/valid.btg.reorder" "$OUT/preorderer.settings"; then
    skipped "train preorderer"
else
    timed "train preorderer ($PREORDER_EPOCHS epochs)" train_preorderer
    made "$PREORDERER"
fi

# Predicted positions are BTG-consistent (xlpe-preorder always searches BTG trees), the shape
# of the oracle ones the translation model trains on, as the BTG parser of Ding et al. gives.
for split in valid test; do
    if fresh "$BPE/$split.pred.reorder" -- "$PREORDERER" "$BPE/$split.$SRC"; then
        skipped "predict $split positions"
    else
        OMP_NUM_THREADS=$PREORDER_THREADS timed "predict $split positions" \
            xlpe-preorder --preorderer "$PREORDERER" \
            --source "$BPE/$split.$SRC" --output "$BPE/$split.pred.reorder"
        made "$BPE/$split.pred.reorder"
    fi
done

# Train positions as at test time: each fold predicted by a preorderer trained on the others.
if [[ $XLPE_TRAIN_POSITIONS != oracle ]]; then
    cross_fit_train_positions "$BPE" "$SRC" "${PREORDER_FOLDS:-2}" --epochs "$PREORDER_EPOCHS" \
        --threads "$PREORDER_THREADS"
fi

SCORE=$OUT/preorderer.test-score.txt
score_preorderer() {
    xlpe-reorder-score --hypothesis "$BPE/test.pred.reorder" \
        --reference "$BPE/test.btg.reorder" >"$SCORE.part"
    mv "$SCORE.part" "$SCORE"
}
if fresh "$SCORE" -- "$BPE/test.pred.reorder" "$BPE/test.btg.reorder"; then
    skipped "score preorderer"
else
    timed "score preorderer" score_preorderer
    made "$SCORE"
fi
echo "== preorderer on test vs the BTG oracle ($SCORE):" >&2
cat "$SCORE" >&2

# fairseq's dictionaries and binarized text are those of $BIN. Relative links keep OUTDIR
# relocatable (cp -a, mv) without the copy pointing back at the original.
XBIN=$OUT/data-bin-xlpe
mkdir -p "$XBIN"
for file in "dict.$SRC.txt" "dict.$TGT.txt"; do
    ln -sfn "../${BIN##*/}/$file" "$XBIN/$file"
done
for split in "${SPLITS[@]}"; do
    for lang in "$SRC" "$TGT"; do
        for ext in bin idx; do
            ln -sfn "../${BIN##*/}/$split.$SRC-$TGT.$lang.$ext" "$XBIN/$split.$SRC-$TGT.$lang.$ext"
        done
    done
done

# The stamp is rewritten only when XLPE_TRAIN_POSITIONS changes, so that switching it
# rebinarizes train although neither positions file changed.
stamp=$XBIN/train.reorder.positions
if [[ ! -e $stamp || $(<"$stamp") != "$XLPE_TRAIN_POSITIONS" ]]; then
    echo "$XLPE_TRAIN_POSITIONS" >"$stamp"
fi
calls=() names=() binarized=()
for split in "${SPLITS[@]}"; do
    positions=$BPE/$split.pred.reorder
    inputs=()
    if [[ $split == train ]]; then
        case $XLPE_TRAIN_POSITIONS in
            oracle) positions=$BPE/train.btg.reorder ;;
            mixed) positions=$BPE/train.mixed.reorder ;;
        esac
        inputs=("$stamp")
    fi
    inputs+=("$positions" "$BPE/$split.$SRC")
    reorder_bin=$XBIN/$split.reorder.$SRC-$TGT
    if fresh "$reorder_bin.bin" "$reorder_bin.idx" -- "${inputs[@]}"; then
        skipped "binarize $split.reorder (xlpe)"
    else
        ((${#calls[@]})) && calls+=(--then)
        calls+=(--reorder "$positions" --source "$BPE/$split.$SRC" --destdir "$XBIN"
            --split "$split" --source-lang "$SRC" --target-lang "$TGT")
        names+=("$split.reorder from ${positions##*/}")
        binarized+=("$reorder_bin.bin")
    fi
done
if ((${#calls[@]})); then
    timed "binarize (xlpe) ${names[*]}" \
        python -m xlpe_fairseq.in_one_process xlpe_fairseq.preprocessing.binarize "${calls[@]}"
    for file in "${binarized[@]}"; do
        made "$file"
    done
fi

echo "== done: $XBIN (train pos_XL: $XLPE_TRAIN_POSITIONS; valid/test: preorderer)" >&2
