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

# need_value OPTION ARGC: fail (status 2) naming OPTION when it is the last argument (ARGC:
# the arguments left, itself included).
need_value() {
    if (($2 < 2)); then
        echo "$1 needs a value" >&2
        return 2
    fi
}

# show_help SCRIPT: print SCRIPT's header comment (from its second line to `set -euo`), the
# documentation every entry point keeps there, and exit 0.
show_help() {
    sed -n '2,/^set -euo/p' "$1" | sed '$d; s/^# \{0,1\}//'
    exit 0
}
