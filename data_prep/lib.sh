# Bash helpers shared by the data_prep recipes: step skipping, step timing, downloads with
# checksum verification, the option checks of options.sh, and run_prepare
# (xlpe-prepare with the recipe's settings, the offline part every recipe shares). Source it
# (`source "$(dirname "$0")/lib.sh"`); it defines functions and CHECKSUMS_FILE, and changes no
# shell options.
source "$(dirname "${BASH_SOURCE[0]}")/options.sh"

# Freshness by content, not by time: a step is skipped when its outputs were made from the
# present content of its inputs and from the same settings. A rerun into the same OUT from
# other raw files (older ones included) or with another option redoes what they change and
# nothing else. `fresh` checks before a step, `made` records after it, in a hidden file
# beside the step's first output (.NAME.made-from: the digest of what it was made from).
declare -gA FRESH_DIGESTS=() CONTENT_DIGESTS=()

# fresh OUT... -- IN... [-- SETTING...]: true when every OUT exists and `made` recorded them
# as made from the present content of the INs and these SETTINGs (words such as
# "max_len=175"); else false, and `made` will record the present digest.
fresh() {
    local outs=() ins=() settings=() part=0 arg out in record hash digest=""
    for arg in "$@"; do
        if [[ $arg == -- ]] && ((part < 2)); then
            part=$((part + 1))
        elif ((part == 0)); then
            outs+=("$arg")
        elif ((part == 1)); then
            ins+=("$arg")
        else
            settings+=("$arg")
        fi
    done
    for in in "${ins[@]}"; do
        content_digest "$in"
        digest+="$CONTENT_DIGEST "
    done
    read -r hash _ < <(printf '%s\n' "$digest" "${settings[@]}" | sha256sum)
    record=$(made_from_file "${outs[0]}")
    FRESH_DIGESTS[$record]=$hash
    for out in "${outs[@]}"; do
        [[ -e $out ]] || return 1
    done
    [[ -f $record && $(<"$record") == "$hash" ]] && return 0
    # outputs of other inputs: the step reruns, and a failure leaves no record of them
    rm -f "$record"
    return 1
}

# made OUT: record that the step whose first output (as given to `fresh`) is OUT finished.
made() {
    local record
    record=$(made_from_file "$1")
    printf '%s\n' "${FRESH_DIGESTS[$record]}" >"$record.tmp" && mv "$record.tmp" "$record"
}

# made_from_file OUT: the hidden file beside OUT that records what OUT was made from.
made_from_file() {
    echo "$(dirname "$1")/.$(basename "$1").made-from"
}

# content_digest FILE: CONTENT_DIGEST, the sha256 of FILE's content ("missing" for no file),
# computed once per version of the file (device, inode, size, time) in a run.
content_digest() {
    local key
    key=$(stat -L -c '%d:%i:%s:%.9Y' "$1" 2>/dev/null) || { CONTENT_DIGEST=missing; return; }
    key+=":$1"
    if [[ -z ${CONTENT_DIGESTS[$key]:-} ]]; then
        read -r "CONTENT_DIGESTS[$key]" _ < <(sha256sum <"$1")
    fi
    CONTENT_DIGEST=${CONTENT_DIGESTS[$key]}
}

# timed NAME COMMAND...: run a step and report its wall time (and measure it, below).
timed() {
    local name=$1 start=$EPOCHREALTIME
    shift
    echo "== $name" >&2
    measured "$name" "$@"
    awk -v name="$name" -v start="$start" -v end="$EPOCHREALTIME" \
        'BEGIN { printf "== %s: %.1f s\n", name, end - start > "/dev/stderr" }'
}

# measured NAME COMMAND...: run COMMAND; with XLPE_STAGE_LOG set to a file, append its wall
# time, CPU time and peak memory to it as a JSON line (xlpe_fairseq/io/stage_usage.py; a
# COMMAND that is a shell function, its wall time only).
measured() {
    local name=$1 start=$EPOCHREALTIME
    shift
    if [[ -z ${XLPE_STAGE_LOG:-} ]]; then
        "$@"
    elif declare -F "$1" >/dev/null; then
        "$@"
        python -m xlpe_fairseq_cli.stage_usage --log "$XLPE_STAGE_LOG" --name "$name" \
            --wall "$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')"
    else
        python -m xlpe_fairseq_cli.stage_usage --log "$XLPE_STAGE_LOG" --name "$name" -- "$@"
    fi
}

skipped() {
    echo "== $1: up to date, skipped" >&2
}

# Expected checksums, one `ALGORITHM  HEX  FILENAME` line each (sha256 or md5), keyed by the
# file name the recipes save a download under. Next to this file so every recipe shares it.
CHECKSUMS_FILE=${CHECKSUMS_FILE:-$(dirname "${BASH_SOURCE[0]}")/checksums.txt}

# verify_checksum FILE: compare FILE with its line in $CHECKSUMS_FILE. A file without a line
# passes, but its sha256 is printed as the line to add, so the next download is verified.
verify_checksum() {
    local file=$1 name algorithm expected actual
    name=$(basename "$file")
    read -r algorithm expected < <(awk -v name="$name" \
        '$1 !~ /^#/ && $3 == name { print $1, $2; exit }' "$CHECKSUMS_FILE" 2>/dev/null) || true
    if [[ -z ${algorithm:-} ]]; then
        actual=$(sha256sum "$file" | cut -d' ' -f1)
        echo "== checksum UNKNOWN for $name (not in $CHECKSUMS_FILE); to verify future" \
            "downloads, add:  sha256  $actual  $name" >&2
        return 0
    fi
    case $algorithm in
        sha256) actual=$(sha256sum "$file" | cut -d' ' -f1) ;;
        md5) actual=$(md5sum "$file" | cut -d' ' -f1) ;;
        *) echo "$CHECKSUMS_FILE: unknown algorithm '$algorithm' for $name" >&2; return 1 ;;
    esac
    if [[ $actual != "$expected" ]]; then
        echo "$file: $algorithm mismatch (expected $expected, got $actual)" >&2
        return 1
    fi
    echo "== $name: $algorithm verified" >&2
}

# fetch URL FILE: download URL to FILE unless FILE is already there, then verify its checksum.
# The download goes to FILE.part first, so an interrupted one is never taken for complete.
fetch() {
    local url=$1 file=$2
    if [[ ! -e $file ]]; then
        mkdir -p "$(dirname "$file")"
        echo "== download $url" >&2
        if command -v wget >/dev/null; then
            wget --no-verbose --tries=3 -O "$file.part" "$url"
        else
            curl --fail --location --retry 3 --silent --show-error -o "$file.part" "$url"
        fi
        mv "$file.part" "$file"
    fi
    if ! verify_checksum "$file"; then
        # set aside, so that a rerun downloads again instead of trusting the bad file
        mv "$file" "$file.bad"
        echo "$file: moved to $file.bad" >&2
        return 1
    fi
}

# seg_text FILE: the <seg> contents of an SGML/XML test set (WMT .sgm, IWSLT .xml), one a line,
# with the curly apostrophe straightened as in fairseq's prepare scripts.
seg_text() {
    grep '<seg id' "$1" | sed -e 's/<seg id="[^"]*">\s*//g; s/\s*<\/seg>\s*//g' -e "s/’/'/g"
}

# need_files FILE...: fail naming the first missing file (raw input of a recipe).
need_files() {
    local file
    for file in "$@"; do
        if [[ ! -s $file ]]; then
            echo "$file: missing or empty" >&2
            return 1
        fi
    done
}

# fetch_and_unpack DOWNLOAD ORIG: fetch every entry of the caller's associative array URLS
# (saved name -> address) into DOWNLOAD, then unpack those tarballs into ORIG once (ORIG.stamp
# marks it done and holds the archives' digest, so that what reads ORIG follows them).
fetch_and_unpack() {
    local download=$1 orig=$2 name
    for name in "${!URLS[@]}"; do
        fetch "${URLS[$name]}" "$download/$name"
    done
    if fresh "$orig.stamp" -- "$download"/*.tgz; then
        skipped unpack
        return
    fi
    mkdir -p "$orig"
    for name in "${!URLS[@]}"; do
        timed "unpack $name" tar -xzf "$download/$name" -C "$orig"
    done
    made "$orig.stamp"
    cp "$(made_from_file "$orig.stamp")" "$orig.stamp"
}

# parse_raw_dir_option ARGS...: the option every downloading recipe shares, --raw-dir DIR
# (start from untokenized {train,valid,test}.{SRC,TGT} in DIR, no download), before or after
# the operands. Sets RAW (empty without it) and OPERANDS (the other arguments, in order); an
# unknown option is named, then the recipe's own usage called.
parse_raw_dir_option() {
    RAW= OPERANDS=()
    while [[ $# -gt 0 ]]; do
        case $1 in
            --raw-dir)
                [[ $# -ge 2 ]] || { echo "--raw-dir needs a folder" >&2; usage; }
                RAW=$2
                shift 2 ;;
            -h | --help) show_help "$0" ;;
            -*) echo "unknown option $1" >&2; usage ;;
            *) OPERANDS+=("$1"); shift ;;
        esac
    done
}

# extract_raw_once ORIG STAMP: the recipe's extract_raw ORIG RAW, skipped while RAW's test
# files were made from this STAMP (what marks ORIG complete).
extract_raw_once() {
    local orig=$1 stamp=$2
    if fresh "$RAW/test.$SRC" "$RAW/test.$TGT" -- "$stamp"; then
        skipped "extract raw text"
    else
        timed "extract raw text" extract_raw "$orig" "$RAW"
        made "$RAW/test.$SRC"
    fi
}

# run_prepare RAW OUT SRC TGT: the offline part every recipe shares, from RAW's untokenized
# {train,valid,test}.{SRC,TGT} to OUT's data-bins: xlpe-prepare (xlpe_fairseq/workflow/
# prepare.py) in place of this shell, with the recipe's settings as its options: MERGES
# (32000) and MAX_LEN (250) unless set, LOWERCASE and JOINED_DICT, and the length rule of
# fairseq's scripts (RATIO_RULE=fixed) unless set; the other settings (WORKERS, PREORDER_*,
# XLPE_TRAIN_POSITIONS) it reads from the environment.
run_prepare() {
    local raw=$1 out=$2 src=$3 tgt=$4 flags=()
    if [[ ${LOWERCASE:-0} == 1 ]]; then
        flags+=(--lowercase)
    fi
    if [[ ${JOINED_DICT:-0} == 1 ]]; then
        flags+=(--joined-dictionary)
    fi
    exec python -m xlpe_fairseq.workflow.prepare --src "$src" --tgt "$tgt" \
        --merges "${MERGES:-32000}" --max-len "${MAX_LEN:-250}" \
        --ratio-rule "${RATIO_RULE:-fixed}" --max-ratio "${MAX_RATIO:-1.5}" "${flags[@]}" \
        -- "$raw" "$out"
}
