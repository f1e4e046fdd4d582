# The offline part every recipe shares, from raw parallel text to fairseq data-bin with
# reorder positions. Source it after lib.sh and call
#
#   prepare_corpus RAW OUT SRC TGT
#
# RAW holds untokenized {train,valid,test}.{SRC,TGT}, one sentence a line. OUT receives
#   tok/        tokenized text (train length-filtered as in fairseq's prepare scripts)
#   bpe/        BPE text, codes, word alignments, reorder files:
#               {train,valid}.dpe.reorder (DPE target), {split}.btg.reorder (BTG oracle),
#               {valid,test}.pred.reorder (preorderer predictions from the source alone)
#   preorderer.pt, preorderer.test.score (predicted vs oracle BTG order on test; the last
#               line of the run says what it means for XL PE),
#   preorderer.ceiling (xlpe-reorder-ceiling on train: how much a source-only model can predict)
#   data-bin/text  fairseq-preprocess output (baseline Transformer, Reordering Embeddings)
#   data-bin/dpe   text + train and valid positions from the DPE rules (transformer_dpe; the
#                  validation loss then has the order loss too, as the training loss)
#   data-bin/xlpe  text + train positions chosen by XLPE_TRAIN_POSITIONS, preorderer
#                  positions for valid/test
#                  (transformer_xlpe; the test positions are what a deployed model gets)
#   reference/  {valid,test}.TGT as prepared: what examples/evaluate.sh scores against
#   recipe.env  SRC, TGT, LOWERCASE, RAW, for examples/evaluate.sh
#   provenance.json  what OUT was made from: command, settings, the sha256 of the raw
#               files, codes, preorderer, references and every data-bin file; written
#               last, verified by train.sh, evaluate.sh and xlpe-translate --corpus
#
# Settings, from the environment or set by the recipe before the call:
#   WORKERS (all cores), MERGES (32000), LOWERCASE (0; 1 lowercases both sides),
#   MAX_LEN (250 tokens; train pairs outside 1..MAX_LEN or with a length ratio over 1.5 are
#   dropped, as by Moses' clean-corpus-n in fairseq's prepare-iwslt14/wmt14 scripts),
#   RATIO_RULE (fixed, that rule; corpus: the ratio judged against the corpus's typical ratio,
#   prepare-corpus.sh's default) and MAX_RATIO (1.5, the factor allowed either way),
#   JOINED_DICT (0; 1 gives one dictionary for both sides, for --share-all-embeddings),
#   PREORDER_SECONDS (3600): a safety cap, checked after each epoch, that makes the result
#   depend on the machine's speed if it stops training early; PREORDER_DEVICE (cpu, or cuda);
#   PREORDER_THREADS (1): xlpe-preorder-train's --threads; PREORDER_JOBS (the cores over
#   PREORDER_THREADS): members trained side by side, each its own process (threads of one
#   process stall beside other work on the same cores; processes do not).
#   The preorderer's training follows the corpus unless set (preorderer_defaults below):
#   PREORDER_LOSS (pairwise, structured or both: xlpe-preorder-train --loss), PREORDER_SEEDS
#   (N > 1: N preorderers, seeds 1..N, preorderer.seedK.pt, combined by
#   xlpe-preorder-ensemble into preorderer.pt, N times the training time), PREORDER_EPOCHS
#   (with the fixed seeds, this fixes the result), PREORDER_BATCH_TOKENS and
#   PREORDER_MAX_LENGTH (xlpe-preorder-train's --batch-tokens and --max-train-length),
#   PREORDER_SAMPLE (0: all pairs; N: every member trains on one seeded sample of N pairs,
#   xlpe-preorder-train --sample; above 50,000 pairs the default is 35,000).
#   XLPE_TRAIN_POSITIONS: the XL PE training positions in data-bin/xlpe: oracle (default; BTG
#   positions from the alignment), predicted (the preorderer's, cross-fitted over
#   PREORDER_FOLDS (2) folds with xlpe-preorder-crossfit, so that train positions look like
#   test ones) or mixed (per sentence, oracle or cross-fitted at random, half each).

PIPELINE_SPLITS=(train valid test)

# tokenize_split RAW OUT SPLIT LANG: one tokenized file (train goes to tok/train.full.LANG).
tokenize_split() {
    local raw=$1 out=$2 split=$3 lang=$4 dest flags=()
    dest=$out/tok/$split.$lang
    [[ $split == train ]] && dest=$out/tok/train.full.$lang
    if ((LOWERCASE)); then
        flags+=(--lowercase)
    fi
    # the tokenizer's version: placeholders and identifiers kept whole since it changed
    if fresh "$dest" -- "$raw/$split.$lang" -- "lowercase=$LOWERCASE" \
            "tokenizer=placeholders"; then
        skipped "tokenize $split.$lang"
    else
        timed "tokenize $split.$lang" xlpe-tokenize --lang "$lang" "${flags[@]}" \
            --input "$raw/$split.$lang" --output "$dest" --workers "$WORKERS"
        made "$dest"
    fi
}

# clean_train OUT SRC TGT: filter the tokenized training pairs into tok/train.{SRC,TGT}: keep
# pairs with 1..MAX_LEN tokens a side and a length ratio within MAX_RATIO (1.5) of the
# corpus's typical ratio (RATIO_RULE=corpus) or of 1 (RATIO_RULE=fixed, the default here:
# Moses' clean-corpus-n, as in fairseq's prepare scripts); says what it kept, warns when over
# 5% go, fails in one line when none is left.
clean_train() {
    local out=$1 src=$2 tgt=$3 rule=${RATIO_RULE:-fixed} ratio=${MAX_RATIO:-1.5}
    local in_src=$out/tok/train.full.$src in_tgt=$out/tok/train.full.$tgt
    if fresh "$out/tok/train.$src" "$out/tok/train.$tgt" -- "$in_src" "$in_tgt" -- \
            "max_len=$MAX_LEN" "ratio_rule=$rule" "max_ratio=$ratio"; then
        skipped "clean train"
    else
        timed "clean train (1..$MAX_LEN tokens, ratio within $ratio of the $rule ratio)" \
            python -m xlpe_fairseq.preprocessing.length_filter --source "$in_src" \
            --target "$in_tgt" --out-source "$out/tok/train.$src" \
            --out-target "$out/tok/train.$tgt" --max-len "$MAX_LEN" --max-ratio "$ratio" \
            --ratio-rule "$rule" --prog "$(basename "$0")"
        made "$out/tok/train.$src"
    fi
}

# align_all OUT SRC TGT: one aligner run over train+valid+test, split back into
# {split}.align. valid/test are aligned only for the oracle BTG order that the preorderer is
# validated and scored against; the models never see their alignments.
align_all() {
    local out=$1 src=$2 tgt=$3 bpe=$1/bpe split lang ins=() first=1 n
    for split in "${PIPELINE_SPLITS[@]}"; do
        ins+=("$bpe/$split.$src" "$bpe/$split.$tgt")
    done
    if fresh "$bpe/train.align" "$bpe/valid.align" "$bpe/test.align" -- "${ins[@]}"; then
        skipped "align"
        return
    fi
    for lang in "$src" "$tgt"; do
        cat "$bpe/train.$lang" "$bpe/valid.$lang" "$bpe/test.$lang" >"$bpe/all.$lang"
    done
    timed "align train+valid+test" xlpe-align --source "$bpe/all.$src" --target "$bpe/all.$tgt" \
        --output "$bpe/all.align" --workers "$WORKERS"
    for split in "${PIPELINE_SPLITS[@]}"; do
        n=$(wc -l <"$bpe/$split.$src")
        sed -n "${first},$((first + n - 1))p" "$bpe/all.align" >"$bpe/$split.align.tmp"
        mv "$bpe/$split.align.tmp" "$bpe/$split.align"
        first=$((first + n))
    done
    rm -f "$bpe/all.$src" "$bpe/all.$tgt" "$bpe/all.align"
    made "$bpe/train.align"
}

# reorder METHOD SPLIT OUT SRC TGT: oracle positions bpe/SPLIT.METHOD.reorder.
reorder() {
    reorder_positions "$1" "$3/bpe" "$2" "$4" "$5" "$3/bpe/$2.$1.reorder"
}

# preorder OUT SRC: train the source-only preorderer on the BTG oracle, predict valid/test.
preorder() {
    local out=$1 src=$2 bpe=$1/bpe split seed members=()
    # a member depends on its seed and these settings, not on how many members there are
    stamp "$out/preorderer.settings" "${PREORDER_TRAINING[*]} ${PREORDER_SAMPLING[*]}"
    if ((PREORDER_SEEDS == 1)); then
        train_preorderer "$out/preorderer.pt" "$bpe" "$src" "$out/preorderer.settings" 1
    else
        for ((seed = 1; seed <= PREORDER_SEEDS; seed++)); do
            members+=("$out/preorderer.seed$seed.pt")
        done
        train_members "$bpe" "$src" "$out/preorderer.settings" "${members[@]}"
        if fresh "$out/preorderer.pt" -- "${members[@]}" "$bpe/valid.$src" \
                "$bpe/valid.btg.reorder"; then
            skipped "ensemble preorderers"
        else
            timed "ensemble $PREORDER_SEEDS preorderers" xlpe-preorder-ensemble \
                --preorderers "${members[@]}" --valid-source "$bpe/valid.$src" \
                --valid-reorder "$bpe/valid.btg.reorder" --device "$PREORDER_DEVICE" \
                --threads "$PREORDER_THREADS" --save "$out/preorderer.pt"
            made "$out/preorderer.pt"
        fi
    fi
    if [[ $XLPE_TRAIN_POSITIONS != oracle ]]; then
        cross_fit_train_positions "$bpe" "$src" "$PREORDER_FOLDS" "${PREORDER_TRAINING[@]}"
    fi
    local calls=() predicted=()
    for split in valid test; do
        if fresh "$bpe/$split.pred.reorder" -- "$out/preorderer.pt" "$bpe/$split.$src"; then
            skipped "preorder $split"
        else
            ((${#calls[@]})) && calls+=(--then)
            calls+=(--preorderer "$out/preorderer.pt" --source "$bpe/$split.$src"
                --output "$bpe/$split.pred.reorder")
            predicted+=("$bpe/$split.pred.reorder")
        fi
    done
    if ((${#calls[@]})); then
        # as many threads as training took: more stall beside other work on the cores
        OMP_NUM_THREADS=$PREORDER_THREADS timed "preorder valid/test" \
            python -m xlpe_fairseq.in_one_process xlpe_fairseq.preordering.predict "${calls[@]}"
        for split in "${predicted[@]}"; do
            made "$split"
        done
    fi
    report "$out/preorderer.test.score" "score preorderer" "preorderer on test" \
        "$bpe/test.pred.reorder" "$bpe/test.btg.reorder" -- \
        xlpe-reorder-score --hypothesis "$bpe/test.pred.reorder" \
        --reference "$bpe/test.btg.reorder"
    report "$out/preorderer.ceiling" "preorderer ceiling" \
        "the oracle of repeated train sources scored on each other" \
        "$bpe/train.$src" "$bpe/train.btg.reorder" -- \
        xlpe-reorder-ceiling --source "$bpe/train.$src" --reorder "$bpe/train.btg.reorder"
}

# train_preorderer SAVE BPE SRC SETTINGS SEED: one preorderer on the BTG oracle of train (or
# on PREORDER_SAMPLE of its pairs), its epoch and penalty chosen on valid; skipped while SAVE
# was made from its data and SETTINGS.
train_preorderer() {
    local save=$1 bpe=$2 src=$3 settings=$4 seed=$5
    if fresh "$save" -- "$bpe/train.$src" "$bpe/train.btg.reorder" "$bpe/valid.$src" \
            "$bpe/valid.btg.reorder" "$settings"; then
        skipped "train preorderer (seed $seed)"
    else
        timed "train preorderer (seed $seed, at most $PREORDER_EPOCHS epochs, ${PREORDER_SECONDS}s)" \
            xlpe-preorder-train --source "$bpe/train.$src" --reorder "$bpe/train.btg.reorder" \
            --valid-source "$bpe/valid.$src" --valid-reorder "$bpe/valid.btg.reorder" \
            "${PREORDER_TRAINING[@]}" "${PREORDER_SAMPLING[@]}" --seed "$seed" --save "$save"
        made "$save"
    fi
}

# train_members BPE SRC SETTINGS MEMBER...: train_preorderer for each MEMBER
# (OUT/preorderer.seedK.pt, seed K), PREORDER_JOBS processes at a time. Threads of one process
# wait on each other at every operation, and beside a busy process on the same cores they
# stall (epochs ten times as long and more); processes side by side do not. Each member's
# output goes to its log (OUT/preorderer.seedK.log), shown when all have ended; a member
# that failed fails the step, once the others have ended.
train_members() {
    local bpe=$1 src=$2 settings=$3 member seed=0 status failed=()
    shift 3
    if ((PREORDER_JOBS == 1)); then
        for member; do
            seed=$((seed + 1))
            train_preorderer "$member" "$bpe" "$src" "$settings" "$seed"
        done
        return
    fi
    echo "== train $# preorderers, $PREORDER_JOBS side by side ($PREORDER_THREADS thread(s)" \
        "each; logs: ${1%.seed1.pt}.seedK.log)" >&2
    for member; do
        seed=$((seed + 1))
        while (($(jobs -rp | wc -l) >= PREORDER_JOBS)); do
            wait -n || true
        done
        (
            set +e
            (set -e; train_preorderer "$member" "$bpe" "$src" "$settings" "$seed") \
                2>"${member%.pt}.log"
            echo $? >"${member%.pt}.status"
        ) &
    done
    wait
    seed=0
    for member; do
        seed=$((seed + 1))
        cat -- "${member%.pt}.log" >&2
        status=$(<"${member%.pt}.status")
        rm -f -- "${member%.pt}.status"
        ((status == 0)) || failed+=("seed $seed (status $status, ${member%.pt}.log)")
    done
    if ((${#failed[@]})); then
        printf -v status '%s; ' "${failed[@]}"
        echo "$(basename "$0"): error: preorderer training failed: ${status%; }" >&2
        return 1
    fi
}

# report OUT STEP TITLE IN... -- COMMAND...: COMMAND's output written atomically to OUT and
# shown on stderr under TITLE; skipped as STEP while OUT was made from the INs as they are.
report() {
    local dest=$1 step=$2 title=$3 ins=()
    shift 3
    while [[ $1 != -- ]]; do
        ins+=("$1")
        shift
    done
    shift
    if fresh "$dest" -- "${ins[@]}"; then
        skipped "$step"
        return
    fi
    timed "$step" "$@" >"$dest.tmp"
    mv "$dest.tmp" "$dest"
    made "$dest"
    echo "== $title:" >&2
    cat "$dest" >&2
}

# binarize_text OUT SRC TGT: fairseq-preprocess into data-bin/text.
binarize_text() {
    local out=$1 src=$2 tgt=$3 bin=$1/data-bin/text ins=() split flags=()
    for split in "${PIPELINE_SPLITS[@]}"; do
        ins+=("$out/bpe/$split.$src" "$out/bpe/$split.$tgt")
    done
    if fresh "$bin/dict.$src.txt" "$bin/dict.$tgt.txt" "$bin/test.$src-$tgt.$tgt.idx" -- \
            "${ins[@]}" -- "joined_dictionary=$JOINED_DICT"; then
        skipped fairseq-preprocess
        return
    fi
    if ((JOINED_DICT)); then
        flags+=(--joined-dictionary)
    fi
    # fairseq-preprocess refuses to overwrite its dictionaries
    rm -f "$bin/dict.$src.txt" "$bin/dict.$tgt.txt"
    timed fairseq-preprocess fairseq-preprocess --source-lang "$src" --target-lang "$tgt" \
        --trainpref "$out/bpe/train" --validpref "$out/bpe/valid" --testpref "$out/bpe/test" \
        --destdir "$bin" --workers "$WORKERS" "${flags[@]}"
    made "$bin/dict.$src.txt"
}

# link_text_bin OUT SRC TGT VARIANT: data-bin/VARIANT with fairseq's text files linked from
# data-bin/text (one copy on disk); each variant adds its own positions.
link_text_bin() {
    local out=$1 src=$2 tgt=$3 bin=$1/data-bin/$4 file
    mkdir -p "$bin"
    for file in "$out/data-bin/text"/dict.*.txt "$out/data-bin/text"/*.$src-$tgt.*.{bin,idx}; do
        ln -sfn "../text/$(basename "$file")" "$bin/$(basename "$file")"
    done
}

# binarize_positions OUT SRC TGT VARIANT:SPLIT:REORDER...: xlpe-binarize each stale one.
binarize_positions() {
    local out=$1 src=$2 tgt=$3 job variant split positions dest calls=() names=() dests=()
    shift 3
    for job in "$@"; do
        IFS=: read -r variant split positions <<<"$job"
        dest=$out/data-bin/$variant/$split.reorder.$src-$tgt
        if fresh "$dest.bin" "$dest.idx" -- "$positions" "$out/bpe/$split.$src"; then
            skipped "binarize $variant $split positions"
            continue
        fi
        ((${#calls[@]})) && calls+=(--then)
        calls+=(--reorder "$positions" --source "$out/bpe/$split.$src"
            --destdir "$out/data-bin/$variant" --split "$split" --source-lang "$src"
            --target-lang "$tgt")
        names+=("$variant/$split")
        dests+=("$dest.bin")
    done
    if ((${#calls[@]})); then
        timed "binarize positions (${names[*]})" \
            python -m xlpe_fairseq.in_one_process xlpe_fairseq.preprocessing.binarize \
            "${calls[@]}"
        for dest in "${dests[@]}"; do
            made "$dest"
        done
    fi
}

# pipeline_settings: fill in the defaults of the settings above (MERGES and MAX_LEN excepted,
# which prepare_corpus fills in) and check every value, before any work: a bad one is named
# on one line, status 2.
pipeline_settings() {
    WORKERS=${WORKERS:-$(nproc)}
    LOWERCASE=${LOWERCASE:-0}
    JOINED_DICT=${JOINED_DICT:-0}
    PREORDER_SECONDS=${PREORDER_SECONDS:-3600}
    PREORDER_DEVICE=${PREORDER_DEVICE:-cpu}
    PREORDER_FOLDS=${PREORDER_FOLDS:-2}
    PREORDER_THREADS=${PREORDER_THREADS:-1}
    XLPE_TRAIN_POSITIONS=${XLPE_TRAIN_POSITIONS:-oracle}
    case $XLPE_TRAIN_POSITIONS in
        oracle | predicted | mixed) ;;
        *)
            echo "XLPE_TRAIN_POSITIONS must be oracle, predicted or mixed, not" \
                "'$XLPE_TRAIN_POSITIONS'" >&2
            return 2
            ;;
    esac
    local setting min max cores
    # processes and threads: no more than the cores, as the xlpe-* commands take them
    cores=$(cores)
    # the preorderer's settings left unset follow the corpus's size (preorderer_defaults)
    for setting in ${PREORDER_SEEDS:+PREORDER_SEEDS:1:999} \
            ${PREORDER_BATCH_TOKENS:+PREORDER_BATCH_TOKENS:1:9999999} \
            ${PREORDER_MAX_LENGTH:+PREORDER_MAX_LENGTH:1:9999999} PREORDER_THREADS:1:$cores \
            ${PREORDER_JOBS:+PREORDER_JOBS:1:$cores} ${PREORDER_SAMPLE:+PREORDER_SAMPLE:0:} \
            WORKERS:1:$cores ${PREORDER_EPOCHS:+PREORDER_EPOCHS:1:} PREORDER_FOLDS:2: \
            LOWERCASE:0:1 JOINED_DICT:0:1 \
            ${MERGES:+MERGES:1:} ${MAX_LEN:+MAX_LEN:1:}; do
        IFS=: read -r setting min max <<<"$setting"
        check_whole "$setting" "${!setting}" "$min" "$max" || return
        printf -v "$setting" %s "$WHOLE"
    done
    check_positive PREORDER_SECONDS "$PREORDER_SECONDS" || return
    # members side by side on the cores their threads leave
    PREORDER_JOBS=${PREORDER_JOBS:-$((cores / PREORDER_THREADS))}
    if [[ -n ${PREORDER_LOSS:-} ]]; then
        check_choice PREORDER_LOSS "$PREORDER_LOSS" pairwise structured both || return
    fi
    if [[ $PREORDER_DEVICE != cpu ]]; then
        # a device that is not there is found now, not after the alignment
        python -c 'import sys
from xlpe_fairseq.io import InputError
from xlpe_fairseq.preordering.preorderer import check_device
try:
    check_device(sys.argv[1])
except InputError as err:
    sys.exit(f"PREORDER_DEVICE: {err}")' "$PREORDER_DEVICE" || return 2
    fi
}

# preorderer_defaults PAIRS: give each preorderer setting left unset its default for a
# corpus of PAIRS training pairs, say what was chosen, and set PREORDER_TRAINING,
# xlpe-preorder-train's options shared by every preorderer the pipeline trains, and
# PREORDER_SAMPLING, its sample options. What the studies of docs/preorderer.md found best
# ("Defaults by corpus size"): an ensemble of structured-loss models, 9 epochs of small
# batches; four members up to 35,000 pairs, three up to 50,000, so that it trains in at most
# about a quarter of an hour on 2 CPU cores. Above, the same four members on a seeded sample
# of PREORDER_SAMPLE_ABOVE pairs, one sample for all (xlpe-preorder-train --sample): the
# best preorderer of the learning curve, which flattens or slows well before that size, and
# the cost stays that of the sample whatever the corpus's size (docs/preorderer.md, "The
# learning curve").
PREORDER_SAMPLE_ABOVE=35000
preorderer_defaults() {
    local pairs=$1 seeds=4 sample=0
    if ((pairs > 50000)); then
        sample=$PREORDER_SAMPLE_ABOVE
    elif ((pairs > 35000)); then
        seeds=3
    fi
    PREORDER_LOSS=${PREORDER_LOSS:-structured}
    PREORDER_SEEDS=${PREORDER_SEEDS:-$seeds}
    PREORDER_EPOCHS=${PREORDER_EPOCHS:-9}
    PREORDER_BATCH_TOKENS=${PREORDER_BATCH_TOKENS:-2000}
    PREORDER_MAX_LENGTH=${PREORDER_MAX_LENGTH:-150}
    PREORDER_SAMPLE=${PREORDER_SAMPLE:-$sample}
    PREORDER_SAMPLING=()
    local trained="all $pairs"
    if ((PREORDER_SAMPLE > 0 && PREORDER_SAMPLE < pairs)); then
        PREORDER_SAMPLING=(--sample "$PREORDER_SAMPLE" --sample-seed 1)
        trained="a sample of $PREORDER_SAMPLE of the $pairs"
    fi
    echo "preorderer for $pairs training pairs: $PREORDER_SEEDS seed(s), $PREORDER_LOSS" \
        "loss, $PREORDER_EPOCHS epochs, batches of $PREORDER_BATCH_TOKENS tokens, sentences" \
        "up to $PREORDER_MAX_LENGTH tokens, trained on $trained pairs, $PREORDER_JOBS" \
        "member(s) at a time of $PREORDER_THREADS thread(s) (PREORDER_* variables override)" >&2
    PREORDER_TRAINING=(--epochs "$PREORDER_EPOCHS" --max-seconds "$PREORDER_SECONDS"
        --loss "$PREORDER_LOSS" --device "$PREORDER_DEVICE" --batch-tokens "$PREORDER_BATCH_TOKENS"
        --max-train-length "$PREORDER_MAX_LENGTH" --threads "$PREORDER_THREADS")
}

# record_corpus RAW OUT SRC TGT: the last step, once everything else is made: the references
# evaluation scores against, copied into OUT/reference (the raw folder may change later; a
# lowercased corpus is scored against its lowercased tokenized text), recipe.env, and
# OUT/provenance.json, what OUT was made from (xlpe_fairseq/io/provenance.py). A run that fails
# earlier changes neither record.
record_corpus() {
    local raw=$1 out=$2 src=$3 tgt=$4 split from=$1 setting settings=()
    ((LOWERCASE)) && from=$out/tok
    mkdir -p "$out/reference"
    for split in valid test; do
        cp -- "$from/$split.$tgt" "$out/reference/.$split.$tgt.tmp"
        mv -- "$out/reference/.$split.$tgt.tmp" "$out/reference/$split.$tgt"
    done
    printf 'SRC=%s\nTGT=%s\nLOWERCASE=%s\nRAW=%q\n' "$src" "$tgt" "$LOWERCASE" \
        "$(cd -- "$raw" && pwd)" >"$out/.recipe.env.tmp"
    mv -- "$out/.recipe.env.tmp" "$out/recipe.env"
    for setting in MERGES MAX_LEN MAX_RATIO RATIO_RULE LOWERCASE JOINED_DICT \
            XLPE_TRAIN_POSITIONS PREORDER_LOSS PREORDER_SEEDS PREORDER_EPOCHS \
            PREORDER_BATCH_TOKENS PREORDER_MAX_LENGTH PREORDER_SAMPLE PREORDER_THREADS \
            PREORDER_FOLDS PREORDER_SECONDS PREORDER_DEVICE; do
        [[ -z ${!setting:-} ]] || settings+=(--setting "$setting=${!setting}")
    done
    # the user's folder too, where valid and test were held out of its train (prepare-corpus.sh)
    [[ -z ${RAW_ABS:-} || $RAW_ABS == "$(cd -- "$raw" && pwd)" ]] ||
        settings+=(--given "$RAW_ABS")
    measured "record provenance" xlpe-provenance corpus "$out" --raw "$raw" --src "$src" \
        --tgt "$tgt" "${settings[@]}" \
        -- "${RECIPE_COMMAND[@]:-$0}"
}

prepare_corpus() {
    local raw=$1 out=$2 src=$3 tgt=$4 split lang
    pipeline_settings || return
    # a folder of the user's own, and no other run in it (a recipe that claimed it already
    # holds the lock)
    claim_folder "$(basename "$0")" write "$out" "the corpus (OUT)"
    MERGES=${MERGES:-32000}
    MAX_LEN=${MAX_LEN:-250}
    local train_positions
    case $XLPE_TRAIN_POSITIONS in
        oracle) train_positions=$out/bpe/train.btg.reorder ;;
        predicted) train_positions=$out/bpe/train.pred.reorder ;;
        mixed) train_positions=$out/bpe/train.mixed.reorder ;;
    esac
    for split in "${PIPELINE_SPLITS[@]}"; do
        need_files "$raw/$split.$src" "$raw/$split.$tgt"
        same_line_count "$raw/$split.$src" "$raw/$split.$tgt"
    done
    # valid and test pairs, which the word aligner reads, before any work (it would name its
    # own file, OUT/bpe/all.SRC); a linked file by the name of the file it links to, the user's.
    # after_bpe: each one's BPE text beside it, checked once BPE has run
    local checked=() after_bpe=(--bpe)
    for split in valid test; do
        for lang in "$src" "$tgt"; do
            checked+=("$raw/$split.$lang")
            [[ ! -L ${checked[-1]} ]] || checked[-1]=$(readlink -f "${checked[-1]}")
            after_bpe+=("$out/bpe/$split.$lang" "${checked[-1]}")
        done
    done
    python -m xlpe_fairseq.preprocessing.check_raw "${checked[@]}"
    mkdir -p "$out/tok" "$out/bpe" "$out/data-bin/text"

    for split in "${PIPELINE_SPLITS[@]}"; do
        for lang in "$src" "$tgt"; do
            tokenize_split "$raw" "$out" "$split" "$lang"
        done
    done
    clean_train "$out" "$src" "$tgt"
    preorderer_defaults "$(wc -l <"$out/tok/train.$src")"
    bpe_splits "$out/tok" "$out/bpe" "$src" "$tgt" "${PIPELINE_SPLITS[@]}"
    # BPE can split a line that fitted into more pieces than the aligner takes
    python -m xlpe_fairseq.preprocessing.check_raw "${after_bpe[@]}"
    align_all "$out" "$src" "$tgt"
    reorder dpe train "$out" "$src" "$tgt"
    reorder dpe valid "$out" "$src" "$tgt"
    for split in "${PIPELINE_SPLITS[@]}"; do
        reorder btg "$split" "$out" "$src" "$tgt"
    done
    preorder "$out" "$src"
    binarize_text "$out" "$src" "$tgt"
    link_text_bin "$out" "$src" "$tgt" dpe
    link_text_bin "$out" "$src" "$tgt" xlpe
    binarize_positions "$out" "$src" "$tgt" "dpe:train:$out/bpe/train.dpe.reorder" \
        "dpe:valid:$out/bpe/valid.dpe.reorder" \
        "xlpe:train:$train_positions" "xlpe:valid:$out/bpe/valid.pred.reorder" \
        "xlpe:test:$out/bpe/test.pred.reorder"
    record_corpus "$raw" "$out" "$src" "$tgt"
    echo "== done: $out/data-bin/{text,dpe,xlpe}" >&2
    python -m xlpe_fairseq.preordering.advice "$out/preorderer.test.score" >&2
}
