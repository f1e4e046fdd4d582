#!/usr/bin/env bash
# The two-pass Transformer of Zheng et al. (2021, §3.1, Fig. 2), the baseline DPE replaces: a
# reordering Transformer learns source -> target-ordered source (the training split's DPE
# reorder positions applied to its source, xlpe-reorder-text), a translation Transformer
# learns target-ordered source -> target; at test time the source goes through both. All
# Transformers use the demo's settings (examples/demo_settings.sh) and fairseq's transformer,
# and each is decoded from the average of its last 5 checkpoints (like examples/evaluate.sh).
#
# It reports the four rows of DPE Table 2 (results.md, results.json), in the paper's order:
#   1 reordering Transformer  BLEU of its test output against the test source reordered from
#                             the test alignment (BPE pieces, @@ marks dropped, as in the
#                             paper's Fig. 3 example; no further tokenization)
#   2 Transformer             the baseline, trained on source -> target the same way
#   3 + reordering Transformer's output   the two-pass system: the translation Transformer fed
#                             the first pass's output
#   4 + alignment-reordered source        an oracle upper bound: the translation Transformer
#                             fed the test source reordered from the test alignment (the paper
#                             used FastAlign's; the alignment needs the reference)
#
#   examples/two_pass.sh [--data DIR] [--work DIR] [--updates N] [--src he] [--tgt en]
#       [--test-alignment FILE] [--average N] [--model-args "..."] [--gpu]
#
# --data      a prepare-*.sh OUTDIR: bpe/{train,test}.{src,tgt}, bpe/train.reorder,
#             data-bin/dict.{src,tgt}.txt, corpus/test.{tgt} (the Moses-tokenized reference)
#             (default work/demo/data, which is prepared if missing)
# --work      output folder (default work/demo/two-pass): results.md and results.json (the
#             four rows), bleu.json and generate.out (row 3), reordered.test.{src} (the first
#             pass), reference.test.{src}ord (the alignment-reordered test source), and
#             {baseline,oracle,reordering}.bleu.json (rows 2, 4, 1)
# --test-alignment  links over the BPE test pair, fairseq i-j (default DATA/bpe/test.align,
#             which prepare-bible-he-en.sh --xlpe writes; if it is missing, the test split is
#             aligned here with xlpe-align together with the training split, whose lexical
#             statistics it needs, into WORK)
# --updates   training updates per Transformer (default: the demo's)
# --average   how many of the last checkpoints to average (default 5); checkpoints are saved
#             every updates/20 updates, so 5 span the last fifth of training
# --model-args  fairseq-train options appended to the demo's (later options win)
# --gpu       train and decode on the GPU with --fp16
#
# No Transformer validates during training: only the training split has reorder positions.
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
source "$HERE/data_prep/options.sh"
source "$HERE/examples/demo_settings.sh"
DATA=work/demo/data
WORK=work/demo/two-pass
UPDATES=$DEMO_UPDATES
SRC=he
TGT=en
TEST_ALIGNMENT=""
AVERAGE=5
MODEL_ARGS=
DEVICE_FLAGS=(--cpu)
# each value checked as it is read, an empty one too, before any work
while [[ $# -gt 0 ]]; do
    case $1 in
        --data | --work | --updates | --src | --tgt | --test-alignment | --average | --model-args)
            need_value "$1" $# || exit 2 ;;&
        --data | --work | --test-alignment)
            if [[ -z $2 ]]; then
                echo "$1 must name a file or folder, not ''" >&2
                exit 2
            fi ;;&
        --data) DATA=$2; shift 2 ;;
        --work) WORK=$2; shift 2 ;;
        --updates) check_whole --updates "$2" 1 || exit 2; UPDATES=$WHOLE; shift 2 ;;
        --src) check_language --src "$2" || exit 2; SRC=$2; shift 2 ;;
        --tgt) check_language --tgt "$2" || exit 2; TGT=$2; shift 2 ;;
        --test-alignment) TEST_ALIGNMENT=$2; shift 2 ;;
        --average) check_whole --average "$2" 1 || exit 2; AVERAGE=$WHOLE; shift 2 ;;
        --model-args) MODEL_ARGS=$2; shift 2 ;;
        --gpu) DEVICE_FLAGS=(--fp16); shift ;;
        -h | --help) show_help "$0" ;;
        *) echo "unknown option $1 (see $0 --help)" >&2; exit 2 ;;
    esac
done
if ((UPDATES < AVERAGE)); then
    echo "--updates $UPDATES: fewer updates than the $AVERAGE checkpoints to average" >&2
    exit 2
fi
export PYTHONWARNINGS=ignore
USER_DIR=$HERE/xlpe_fairseq
# the target-ordered source is a language of its own to fairseq, with the source dictionary
ORD=${SRC}ord
# AVERAGE checkpoints saved every SAVE_EVERY updates: the last fifth of training
SAVE_EVERY=$((UPDATES / 20 > 0 ? UPDATES / 20 : 1))

if [[ $DATA == work/demo/data && ! -f $DATA/bpe/train.reorder ]]; then
    bash "$HERE/data_prep/prepare-bible-he-en.sh" "$DATA"
fi
for f in "$DATA/bpe/train.$SRC" "$DATA/bpe/train.$TGT" "$DATA/bpe/train.reorder" \
         "$DATA/bpe/test.$SRC" "$DATA/bpe/test.$TGT" "$DATA/data-bin/dict.$SRC.txt" \
         "$DATA/data-bin/dict.$TGT.txt" "$DATA/corpus/test.$TGT" \
         ${TEST_ALIGNMENT:+"$TEST_ALIGNMENT"}; do
    [[ -f $f ]] || { echo "$f: no such file (see the header of $0)" >&2; exit 2; }
done

rm -rf "$WORK"
mkdir -p "$WORK/text"
TEXT=$WORK/text
for lang in "$SRC" "$TGT"; do
    ln -s "$(realpath "$DATA/bpe/train.$lang")" "$TEXT/train.$lang"
    ln -s "$(realpath "$DATA/bpe/test.$lang")" "$TEXT/test.$lang"
done
xlpe-reorder-text --source "$DATA/bpe/train.$SRC" --reorder "$DATA/bpe/train.reorder" \
    --output "$TEXT/train.$ORD"

# The reference reordering of the test source: DPE's rules (xlpe-reorder) on the test alignment.
if [[ -z $TEST_ALIGNMENT && -f $DATA/bpe/test.align ]]; then
    TEST_ALIGNMENT=$DATA/bpe/test.align
elif [[ -z $TEST_ALIGNMENT ]]; then
    echo "== align the test split (with the training split; no $DATA/bpe/test.align)" >&2
    mkdir -p "$WORK/align"
    cat "$DATA/bpe/train.$SRC" "$DATA/bpe/test.$SRC" >"$WORK/align/all.$SRC"
    cat "$DATA/bpe/train.$TGT" "$DATA/bpe/test.$TGT" >"$WORK/align/all.$TGT"
    xlpe-align --source "$WORK/align/all.$SRC" --target "$WORK/align/all.$TGT" \
        --output "$WORK/align/all.align" >"$WORK/align.log" 2>&1 \
        || { tail -20 "$WORK/align.log" >&2; exit 1; }
    tail -n "$(wc -l <"$DATA/bpe/test.$SRC")" "$WORK/align/all.align" >"$WORK/test.align"
    TEST_ALIGNMENT=$WORK/test.align
fi
xlpe-reorder --method dpe --source "$DATA/bpe/test.$SRC" --target "$DATA/bpe/test.$TGT" \
    --alignment "$TEST_ALIGNMENT" --output "$WORK/test.reorder" --workers 1
xlpe-reorder-text --source "$DATA/bpe/test.$SRC" --reorder "$WORK/test.reorder" \
    --output "$WORK/reference.test.$ORD"
ln -s "$(realpath "$WORK/reference.test.$ORD")" "$TEXT/test.$ORD"

# binarize PAIR-SRC PAIR-TGT DESTDIR ARGS...: fairseq-preprocess with the data's dictionaries
binarize() {
    local src=$1 tgt=$2 dest=$3
    shift 3
    local dict_src=$DATA/data-bin/dict.${src/%ord/}.txt dict_tgt=$DATA/data-bin/dict.${tgt/%ord/}.txt
    fairseq-preprocess --source-lang "$src" --target-lang "$tgt" --srcdict "$dict_src" \
        --tgtdict "$dict_tgt" --destdir "$dest" --workers "$(nproc)" "$@" >"$dest.log" 2>&1 \
        || { tail -20 "$dest.log" >&2; exit 1; }
    # --only-source writes no target dictionary, which fairseq-generate still reads
    [[ -f $dest/dict.$tgt.txt ]] || cp "$dict_tgt" "$dest/dict.$tgt.txt"
}

# train NAME DATA-BIN SRC TGT: fairseq's transformer with the demo's settings, no validation,
# then the average of its last AVERAGE checkpoints in NAME/checkpoints/checkpoint_avg.pt
train() {
    local name=$1 bin=$2 src=$3 tgt=$4
    echo "== train the $name Transformer ($src -> $tgt, $UPDATES updates)" >&2
    # shellcheck disable=SC2086  # $MODEL_ARGS is a list of options
    fairseq-train "$bin" --user-dir "$USER_DIR" --task translation_reorder --arch transformer \
        --source-lang "$src" --target-lang "$tgt" "${DEMO_SETTINGS[@]}" "${DEVICE_FLAGS[@]}" \
        --disable-validation --save-interval-updates "$SAVE_EVERY" \
        --keep-interval-updates "$AVERAGE" $MODEL_ARGS --save-dir "$WORK/$name/checkpoints" \
        >"$WORK/$name.train.log" 2>&1 || { tail -30 "$WORK/$name.train.log" >&2; exit 1; }
    xlpe-average-checkpoints --checkpoint-dir "$WORK/$name/checkpoints" --num "$AVERAGE" \
        --output "$WORK/$name/checkpoints/checkpoint_avg.pt" 2>>"$WORK/$name.train.log" \
        || { tail -5 "$WORK/$name.train.log" >&2; exit 1; }
}

# translate NAME DATA-BIN SRC TGT OUTPUT ARGS...: the test split through NAME's averaged model
translate() {
    local name=$1 bin=$2 src=$3 tgt=$4 output=$5
    shift 5
    fairseq-generate "$bin" --user-dir "$USER_DIR" --task translation_reorder \
        --source-lang "$src" --target-lang "$tgt" --gen-subset test \
        --path "$WORK/$name/checkpoints/checkpoint_avg.pt" --beam 5 --batch-size 100 \
        --required-batch-size-multiple 1 --num-workers 0 "${DEVICE_FLAGS[@]}" "$@" \
        >"$output" 2>"$output.log" || { tail -30 "$output.log" >&2; exit 1; }
}

# bleu NAME GENERATE-OUTPUT JSON: detokenized sacreBLEU against the test reference
bleu() {
    xlpe-bleu --name "$1" --generate-output "$2" --reference "$DATA/corpus/test.$TGT" \
        --target-lang "$TGT" --tokenized-reference --json "$3"
}

demo_settings "$UPDATES"
# each test split pairs the test source (reordered from the alignment where it is an input)
# with its reference: rows 1, 4 and 2
for pair in "$SRC $ORD reordering" "$ORD $TGT translation" "$SRC $TGT baseline"; do
    read -r src tgt name <<<"$pair"
    binarize "$src" "$tgt" "$WORK/bin-$name" --trainpref "$TEXT/train" --testpref "$TEXT/test"
done
start=$EPOCHREALTIME
train reordering "$WORK/bin-reordering" "$SRC" "$ORD"
train translation "$WORK/bin-translation" "$ORD" "$TGT"
# the two-pass system's training time: both of its Transformers
awk -v s="$start" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.0f\n", e - s }' >"$WORK/train_seconds"
echo "$UPDATES" >"$WORK/updates"
train baseline "$WORK/bin-baseline" "$SRC" "$TGT"

echo "== row 1: the reordering Transformer reorders the test source" >&2
translate reordering "$WORK/bin-reordering" "$SRC" "$ORD" "$WORK/reordering.generate.out"
# hypotheses in test order, BPE kept: they are the second pass's source
# (read by xlpe-bleu's reader: every test sentence once, from one fairseq-generate run)
python - "$WORK/reordering.generate.out" "$DATA/bpe/test.$SRC" "$WORK/reordered.test.$SRC" <<'PY'
import sys

from xlpe_fairseq.evaluation.generate_output import IncompleteGenerationError, read_hypotheses
from xlpe_fairseq.io import atomic_output, read_lines

generated, source, output = sys.argv[1:]
try:
    hypotheses = read_hypotheses(generated, len(read_lines(source)), source)
except IncompleteGenerationError as err:
    sys.exit(f"two_pass.sh: error: first pass: {err}")
with atomic_output(output) as out:
    out.writelines(line + "\n" for line in hypotheses)
PY
python - "$WORK/reordered.test.$SRC" "$WORK/reference.test.$ORD" "$WORK/reordering.bleu.json" <<'PY'
import json
import sys

import sacrebleu

from xlpe_fairseq.io import atomic_output, read_lines

hypotheses, references, output = sys.argv[1:]
# BPE pieces with their @@ marks dropped (DPE Fig. 3: "mr hn sch you this represented ."):
# a reordering may part the pieces of a word, so they are not joined back
hypotheses, references = ([line.replace("@@", "") for line in read_lines(path)]
                          for path in (hypotheses, references))
bleu = sacrebleu.metrics.BLEU(tokenize="none")
chrf = sacrebleu.metrics.CHRF()
result = {
    "name": "reordering",
    "bleu": round(bleu.corpus_score(hypotheses, [references]).score, 2),
    "chrf": round(chrf.corpus_score(hypotheses, [references]).score, 2),
    "bleu_signature": str(bleu.get_signature()),
    "chrf_signature": str(chrf.get_signature()),
    "sentences": len(hypotheses),
}
print(f"reordering: BLEU {result['bleu']:.2f}  chrF {result['chrf']:.2f}  "
      f"({result['sentences']} sentences)\nBLEU: {result['bleu_signature']}\n"
      f"chrF: {result['chrf_signature']}")
with atomic_output(output) as out:
    json.dump(result, out, indent=2)
PY

echo "== row 2: the baseline Transformer" >&2
translate baseline "$WORK/bin-baseline" "$SRC" "$TGT" "$WORK/baseline.generate.out" --remove-bpe
bleu baseline "$WORK/baseline.generate.out" "$WORK/baseline.bleu.json"

echo "== row 3: the translation Transformer fed the first pass's output (two-pass)" >&2
mkdir -p "$WORK/first-pass"
ln -s "$(realpath "$WORK/reordered.test.$SRC")" "$WORK/first-pass/test.$ORD"
binarize "$ORD" "$TGT" "$WORK/bin-two-pass" --only-source --testpref "$WORK/first-pass/test"
translate translation "$WORK/bin-two-pass" "$ORD" "$TGT" "$WORK/generate.out" --remove-bpe
bleu two-pass "$WORK/generate.out" "$WORK/bleu.json"

echo "== row 4: the translation Transformer fed the alignment-reordered test source (oracle)" >&2
translate translation "$WORK/bin-translation" "$ORD" "$TGT" "$WORK/oracle.generate.out" --remove-bpe
bleu oracle "$WORK/oracle.generate.out" "$WORK/oracle.bleu.json"

python - "$WORK" "$SRC" "$TGT" "$UPDATES" "$AVERAGE" <<'PY'
import json
import sys
from pathlib import Path

from xlpe_fairseq.io import atomic_output

work, src, tgt, updates, average = sys.argv[1:]
work = Path(work)
rows = [
    ("1", "Reordering Transformer", f"{src} → {src} reordered", "reordering.bleu.json"),
    ("2", "Transformer", f"{src} → {tgt}", "baseline.bleu.json"),
    ("3", "+ fed with the output of the reordering Transformer", f"{src} reordered → {tgt}",
     "bleu.json"),
    ("4", "+ fed with the alignment-reordered source (oracle)", f"{src} reordered → {tgt}",
     "oracle.bleu.json"),
]
scores = {file: json.loads((work / file).read_text()) for *_, file in rows}
lines = [f"DPE Table 2 rows ({updates} updates a Transformer, the last {average} checkpoints "
         "averaged)", "", "| row | model | data | BLEU | chrF |", "|---|---|---|---|---|"]
for row, model, data, file in rows:
    lines.append(f"| {row} | {model} | {data} | {scores[file]['bleu']:.2f} "
                 f"| {scores[file]['chrf']:.2f} |")
lines += ["", "row 1 (BPE pieces, @@ dropped):",
          f"BLEU: {scores['reordering.bleu.json']['bleu_signature']}",
          f"chrF: {scores['reordering.bleu.json']['chrf_signature']}", "rows 2-4:",
          f"BLEU: {scores['bleu.json']['bleu_signature']}",
          f"chrF: {scores['bleu.json']['chrf_signature']}"]
table = "\n".join(lines) + "\n"
with atomic_output(work / "results.md") as out:
    out.write(table)
with atomic_output(work / "results.json") as out:
    json.dump([{"row": int(row), "model": model, "data": data, **scores[file]}
               for row, model, data, file in rows], out, indent=2)
print(table)
PY
