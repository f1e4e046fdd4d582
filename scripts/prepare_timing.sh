#!/usr/bin/env bash
# xlpe-prepare's wall time in two environments (e.g. two checkouts' venvs) on the same raw
# corpora, one run each, one after the other: run it on idle cores. The outputs that depend
# on no timing (BPE codes, alignment, binarized data) are compared byte for byte.
#   scripts/prepare_timing.sh BEFORE_VENV AFTER_VENV WORK RAW:SRC:TGT...
# e.g. scripts/prepare_timing.sh ../old/.venv .venv /tmp/timing bible:he:en raw20k:en:de
# Extra xlpe-prepare options in PREPARE_ARGS (default: --models transformer,dpe, which leaves
# the preorderer out).
set -euo pipefail
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
    sed -n '2,/^set /{/^set /d;s/^# \{0,1\}//;p}' "$0" | sed "s|scripts/prepare_timing.sh|$(basename "$0")|g"
    exit 0
fi
(($# >= 4)) || { echo "usage: $0 BEFORE_VENV AFTER_VENV WORK RAW:SRC:TGT..." >&2; exit 2; }
before=$(realpath "$1") after=$(realpath "$2") work=$3
shift 3
read -r -a options <<<"${PREPARE_ARGS:---models transformer,dpe}"
mkdir -p "$work"
for corpus in "$@"; do
    IFS=: read -r raw src tgt <<<"$corpus"
    name=$(basename "$raw")
    for run in "before:$before" "after:$after"; do
        label=${run%%:*} venv=${run#*:} out="$work/$name-${run%%:*}"
        rm -rf "$out"
        start=$EPOCHREALTIME
        PATH="$venv/bin:$PATH" "$venv/bin/xlpe-prepare" --src "$src" --tgt "$tgt" \
            "${options[@]}" "$raw" "$out" >"$out.log" 2>&1 || { echo "$name $label failed: $out.log" >&2; exit 1; }
        awk -v s="$start" -v e="$EPOCHREALTIME" -v n="$name" -v l="$label" \
            'BEGIN { printf "%s %s: %.0f s\n", n, l, e - s }'
    done
    for file in "$work/$name-before"/bpe/codes "$work/$name-before"/bpe/train.align \
                "$work/$name-before"/data-bin/*/*.bin; do
        other=$work/$name-after/${file#"$work/$name-before/"}
        cmp -s "$file" "$other" && same=same || same=DIFFERENT
        echo "  $same: ${file#"$work/$name-before/"}"
    done
done
