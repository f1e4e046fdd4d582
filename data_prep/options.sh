# Option checks and --help shared by the shell entry points (data_prep/*.sh, examples/*.sh):
# every value is checked before any work starts, and a bad one is a usage error (one line,
# exit 2). Source it; it defines functions and changes no shell options.

# check_whole NAME VALUE MIN [MAX]: fail (status 2) unless VALUE is a whole number from MIN
# to MAX (no bound without MAX); else WHOLE is VALUE without leading zeros, the form to use
# (bash reads 08 as a bad octal number). NAME is what the user wrote: an option or a variable.
check_whole() {
    local name=$1 value=$2 min=$3 max=${4:-} digits
    # leading zeros stripped, and no more than 18 digits, so that bash's 64-bit arithmetic
    # cannot overflow
    digits=${value#"${value%%[!0]*}"}
    digits=${digits:-0}
    if [[ $value =~ ^[0-9]+$ && ${#digits} -le 18 ]] && ((10#$digits >= min)) &&
            { [[ -z $max ]] || ((10#$digits <= max)); }; then
        WHOLE=$digits
        return 0
    fi
    if [[ -n $max ]]; then
        echo "$name must be a whole number from $min to $max, not '$value'" >&2
    else
        echo "$name must be a whole number of at least $min, not '$value'" >&2
    fi
    return 2
}

# check_positive NAME VALUE: fail (status 2) unless VALUE is a number above 0 written in
# digits (1, 0.5, 5e-4), and below 1e300.
check_positive() {
    local name=$1 value=$2
    if [[ $value =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$ ]] &&
            awk -v v="$value" 'BEGIN { exit !(v + 0 > 0 && v + 0 < 1e300) }'; then
        return 0
    fi
    echo "$name must be a number above 0, not '$value'" >&2
    return 2
}

# check_number NAME VALUE: fail (status 2) unless VALUE is a finite number written in digits,
# with a sign or not (-0.5, 1, 2e-1), of magnitude below 1e300.
check_number() {
    local name=$1 value=$2
    if [[ $value =~ ^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$ ]] &&
            awk -v v="$value" 'BEGIN { exit !(v + 0 > -1e300 && v + 0 < 1e300) }'; then
        return 0
    fi
    echo "$name must be a number, not '$value'" >&2
    return 2
}

# check_choice NAME VALUE CHOICE...: fail (status 2) unless VALUE is one of the CHOICEs.
check_choice() {
    local name=$1 value=$2 choice
    shift 2
    for choice in "$@"; do
        [[ $value != "$choice" ]] || return 0
    done
    echo "$name must be one of: $*, not '$value'" >&2
    return 2
}

# check_language NAME VALUE: fail (status 2) unless VALUE is a language code (en, pt-BR,
# sr_Latn), as xlpe_fairseq/io/options.py's language_code takes it: it becomes part of file
# names, so no slash, dot or space.
check_language() {
    if [[ $2 =~ ^[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8})*$ ]]; then
        return 0
    fi
    echo "$1 must be a language code such as en or pt-BR, not '$2'" >&2
    return 2
}

# cores: the cores this process may use (as the xlpe-* commands count them for --workers;
# nproc alone would follow OMP_NUM_THREADS).
cores() {
    env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc
}

# need_value OPTION ARGC: fail (status 2) naming OPTION when it is the last argument (ARGC:
# the arguments left, itself included).
need_value() {
    if (($2 < 2)); then
        echo "$1 needs a value" >&2
        return 2
    fi
}

# show_help SCRIPT [LIBRARY]: print SCRIPT's header comment (from its second line to
# `set -euo`), the documentation every entry point keeps there, then the options SCRIPT takes
# from a LIBRARY it sources (the comment from LIBRARY's `# Options` line to the next blank
# line), and exit 0.
show_help() {
    sed -n '2,/^set -euo/p' "$1" | sed '$d; s/^# \{0,1\}//'
    if [[ -n ${2:-} ]]; then
        echo
        sed -n '/^# Options/,/^$/p' "$2" | sed '/^$/d; s/^# \{0,1\}//'
    fi
    exit 0
}

# claim_folder PROG MODE PATH WHAT: before a run writes into (MODE write) or reads from (MODE
# read) the folder PATH, refuse a path no run may mean (empty, /, a system folder, an existing
# file: xlpe-provenance folder), create it (write) and take its lock, OUT/.xlpe-lock: one
# writer, or any number of readers, held until the script and its children exit. A second run
# that needs the folder refuses in one line naming the holder. Sets CLAIMED_FOLDER to the
# absolute path. A folder the run cannot write (a read-only corpus) is read without a lock.
declare -gA CLAIMED_FOLDERS=()
claim_folder() {
    local prog=$1 mode=$2 path=$3 what=$4 real lock fd
    real=$(xlpe-provenance folder --prog "$prog" --what "$what" -- "$path") || exit 1
    CLAIMED_FOLDER=$real
    [[ -z ${CLAIMED_FOLDERS[$real]:-} ]] || return 0
    if [[ $mode == write ]]; then
        mkdir -p -- "$real" || exit 1
    elif [[ ! -w $real ]]; then
        return 0
    fi
    lock=$real/.xlpe-lock
    exec {fd}<>"$lock" || exit 1
    if ! flock -n "$([[ $mode == write ]] && echo -x || echo -s)" "$fd"; then
        echo "$prog: $path is in use by another run ($(head -n 1 "$lock" 2>/dev/null ||
            true)): wait for it to end, or use another folder" >&2
        exit 1
    fi
    printf 'pid %s, %s %s, since %(%F %T)T\n' "$$" "$prog" "$mode" -1 >"$lock"
    CLAIMED_FOLDERS[$real]=$fd
}
