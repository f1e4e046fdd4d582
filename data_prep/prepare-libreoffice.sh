#!/usr/bin/env bash
# A LibreOffice help corpus of two languages (Debian's libreoffice-help-<lang> packages,
# MPL-2.0), prepared for fairseq-train --task translation_reorder with DPE (train) and BTG +
# preorderer (XL PE) reorder positions. See docs/recipes/libreoffice.md.
#
#   data_prep/prepare-libreoffice.sh [--raw-dir DIR] PAIR OUTDIR
#
# PAIR: SRC-TGT, e.g. en-de, en-tr, zh-CN-en, en-pt-BR (any case: zh-cn-en). Each language is
# a Debian help package, libreoffice-help-CODE with the code in lower case (zh-CN:
# libreoffice-help-zh-cn, help folder zh-CN; en: libreoffice-help-en-us, folder en-US); a
# code Debian has no package for is refused in one line that lists the codes it has
# (apt-cache's). The files are named with the code as LibreOffice writes it: train.zh-CN.
# --raw-dir DIR  start from untokenized {train,valid,test}.{SRC,TGT} in DIR instead of
#                downloading the packages (apt-get download; run apt-get update first if
#                apt knows no libreoffice-help package). Options go before or after the
#                operands.
# The paired paragraphs then go through data_prep/prepare-corpus.sh with this corpus's
# settings: 10000 joint merges, one joined dictionary, at most 250 tokens a side.
# Needs xlpe-fairseq installed in the active environment. A rerun skips each step whose
# outputs were made from the present content of its inputs and from the same settings,
# whatever the files' times (data_prep/lib.sh). Environment: WORKERS (all cores), MERGES
# (10000), MAX_LEN (250), RATIO_RULE (fixed: Moses' length ratio of 1.5, as the studies
# prepared these pairs; corpus: prepare-corpus.sh's rule), VALID_SIZE / TEST_SIZE (1000
# pairs each), DROP_IDENTICAL (1, except
# 0 for en-de and de-en: leave out pairs whose sides are the same text, i.e. paragraphs not
# yet translated, which the help installs in English), and the settings of
# data_prep/prepare-corpus.sh.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh"

usage() {
    echo "usage: $0 [--raw-dir DIR] SRC-TGT OUTDIR   (e.g. en-de, en-tr, zh-CN-en)" >&2
    exit 2
}

# help_code CODE: a code as LibreOffice's help folders write it (zh-cn, zh_CN: zh-CN; sr-latn:
# sr-Latn), the language in lower case, a region in capitals, a script capitalized
help_code() {
    local subtag code=
    IFS=- read -ra subtags <<<"${1//_/-}"
    for subtag in "${subtags[@]}"; do
        if [[ -z $code ]]; then
            code=${subtag,,}
        elif ((${#subtag} == 2)); then
            code+=-${subtag^^}
        elif ((${#subtag} == 4)); then
            subtag=${subtag,,}
            code+=-${subtag^}
        else
            code+=-${subtag,,}
        fi
    done
    echo "$code"
}
# help_package CODE, help_folder CODE: a language's Debian package and its folder under help/
help_package() { [[ $1 == en ]] && echo libreoffice-help-en-us || echo "libreoffice-help-${1,,}"; }
help_folder() { [[ $1 == en ]] && echo en-US || echo "$1"; }

# debian_codes: the codes of apt's libreoffice-help-* packages as LibreOffice writes them
# (en-GB, zh-CN), and en (en-US, the recipe's English), one a line
debian_codes() {
    local package
    for package in $(apt-cache pkgnames libreoffice-help- 2>/dev/null); do
        [[ $package == libreoffice-help-common ]] || help_code "${package#libreoffice-help-}"
    done | sort
}

# split_pair PAIR CODES...: SRC and TGT, the one reading of PAIR (SRC-TGT, each code holding
# '-' or not) whose two sides are among CODES, compared in any case and with '-' or '_', and
# set as CODES write them; status 1 where no reading, or more than one, is
split_pair() {
    local pair=${1//_/-} code i left right found=()
    local -A written=()
    shift
    for code in "$@"; do
        left=${code//_/-}
        written[${left,,}]=$code
    done
    for ((i = 1; i < ${#pair}; i++)); do
        [[ ${pair:i:1} == - ]] || continue
        left=${pair:0:i} right=${pair:i+1}
        left=${written[${left,,}]:-} right=${written[${right,,}]:-}
        [[ -n $left && -n $right ]] && found+=("$left $right")
    done
    ((${#found[@]} == 1)) || return 1
    read -r SRC TGT <<<"${found[0]}"
}

parse_raw_dir_option "$@"
[[ ${#OPERANDS[@]} -eq 2 ]] || usage
PAIR=${OPERANDS[0]}
OUT=${OPERANDS[1]}
[[ $PAIR =~ ^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*-[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$ ]] || usage
if [[ -n $RAW ]]; then
    # the codes of RAW's files (train.CODE) read the pair
    mapfile -t codes < <(find "$RAW" -maxdepth 1 -name 'train.*' -printf '%f\n' 2>/dev/null |
        sed 's/^train\.//')
    if ! split_pair "$PAIR" "${codes[@]}"; then
        echo "$0: --raw-dir $RAW: no train.SRC and train.TGT of a reading of $PAIR (its files:" \
            "${codes[*]:-none}); name them with the codes as LibreOffice writes them, e.g." \
            "train.zh-CN" >&2
        exit 2
    fi
else
    mapfile -t codes < <(debian_codes)
    if ((${#codes[@]} == 0)); then
        echo "$0: apt knows no libreoffice-help package: run apt-get update" >&2
        exit 1
    fi
    # en is en-US, the English the help is written in
    [[ " ${codes[*]} " == *" en-US "* ]] && codes=(en "${codes[@]}")
    split_pair "$PAIR" "${codes[@]}" || {
        echo "$0: $PAIR: Debian has LibreOffice help (libreoffice-help-CODE) for the codes" \
            "${codes[*]}" >&2
        exit 2
    }
fi
[[ $SRC != "$TGT" ]] || usage
# ~39k unique pairs for en-de (~24k for en-tr), mostly short UI strings: 10k joint merges as for
# the 160k-pair IWSLT'14 setups of fairseq would already split little; more would leave merges
# seen only a few times.
MERGES=${MERGES:-10000}
# the languages share most symbols of this technical text (menu names, code, numbers)
JOINED_DICT=${JOINED_DICT:-1}
# The German help is fully translated: its identical pairs (9%) are code, formulas and names
# that read the same in both languages, and the en-de corpus was measured with them. Other
# languages fall back to English for what is not translated (Turkish 40% of the pairs).
case $SRC-$TGT in
    en-de | de-en) DROP_IDENTICAL=${DROP_IDENTICAL:-0} ;;
    *) DROP_IDENTICAL=${DROP_IDENTICAL:-1} ;;
esac

if [[ -z $RAW ]]; then
    RAW=$OUT/raw
    DOWNLOAD=$OUT/download
    mkdir -p "$DOWNLOAD"
    # apt-get download checks every package against the sha256 of the signed archive index,
    # so there is no separate checksum to record; the versions are printed for the record.
    debs=()
    for package in "$(help_package "$SRC")" "$(help_package "$TGT")"; do
        version=$(apt-cache policy "$package" | awk '/Candidate:/ { print $2 }')
        if [[ -z $version || $version == "(none)" ]]; then
            echo "$package: apt knows no candidate version; run apt-get update" >&2
            exit 1
        fi
        echo "== $package $version" >&2
        deb=$(ls "$DOWNLOAD/${package}_"*.deb 2>/dev/null | head -n 1 || true)
        if [[ -z $deb ]]; then
            (cd "$DOWNLOAD" && timed "apt-get download $package" apt-get download "$package")
            deb=$(ls "$DOWNLOAD/${package}_"*.deb | head -n 1)
        fi
        debs+=("$deb")
    done
    HELP=$DOWNLOAD/extracted/usr/share/libreoffice/help
    # a stamp marks a finished extraction and holds the packages' digest, so that the pairing
    # follows the packages
    STAMP=$DOWNLOAD/extracted.stamp
    if fresh "$STAMP" -- "${debs[@]}"; then
        skipped "extract help"
    else
        rm -rf "$DOWNLOAD/extracted" "$STAMP"
        for deb in "${debs[@]}"; do
            timed "extract $(basename "$deb")" dpkg-deb -x "$deb" "$DOWNLOAD/extracted"
        done
        made "$STAMP"
        cp "$(made_from_file "$STAMP")" "$STAMP"
    fi
    raw_files=()
    for split in train valid test; do
        raw_files+=("$RAW/$split.$SRC" "$RAW/$split.$TGT")
    done
    if fresh "${raw_files[@]}" -- "$STAMP" -- "drop_identical=$DROP_IDENTICAL" \
            "valid=${VALID_SIZE:-1000} test=${TEST_SIZE:-1000}"; then
        skipped "pair paragraphs"
    else
        flags=()
        if ((DROP_IDENTICAL)); then
            flags+=(--drop-identical)
        fi
        timed "pair paragraphs" xlpe-libreoffice-corpus \
            --source-help "$HELP/$(help_folder "$SRC")" --target-help "$HELP/$(help_folder "$TGT")" \
            --source-lang "$SRC" --target-lang "$TGT" --out "$RAW" \
            --valid-size "${VALID_SIZE:-1000}" --test-size "${TEST_SIZE:-1000}" "${flags[@]}"
        made "${raw_files[0]}"
    fi
fi

flags=()
((JOINED_DICT)) && flags+=(--joined-dictionary)
# Moses' fixed length ratio, as the studies of docs/studies prepared these pairs
exec "$HERE/prepare-corpus.sh" --src "$SRC" --tgt "$TGT" --merges "$MERGES" \
    --max-len "${MAX_LEN:-250}" --ratio-rule "${RATIO_RULE:-fixed}" "${flags[@]}" "$RAW" "$OUT"
