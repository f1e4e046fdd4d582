"""xlpe-prepare's settings: each option's and environment variable's value checked before
any work (a bad one is one line, status 2), an option's over its variable's, the defaults
filled in, and the preorderer's defaults by corpus size (docs/preorderer.md)."""
import os
import re

from ..io import InputError, default_workers
from ..model_registry import TRAIN_MODELS, reads_positions
from .script_options import UNSIGNED_NUMBER, Refused, one_of, positive, whole

# above this many training pairs the preorderer trains on a sample of this many
PREORDER_SAMPLE_ABOVE = 35000
LANGUAGE = re.compile(r"[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8})*")


def nproc():
    """What coreutils' nproc says: the cores, or fewer where OMP_NUM_THREADS or
    OMP_THREAD_LIMIT say so (the shell recipes' default of WORKERS)."""
    count = default_workers()
    for name in ("OMP_NUM_THREADS", "OMP_THREAD_LIMIT"):
        first = os.environ.get(name, "").split(",")[0]
        if first.isdigit() and int(first) > 0:
            count = min(count, int(first))
    return count


def ratio(name, value):
    """A factor either way: a number above 1."""
    if UNSIGNED_NUMBER.fullmatch(value) and 1 < float(value) < 1e300:
        return value
    raise Refused(f"{name} must be a number above 1, not '{value}'", 2)


def language(name, value):
    if LANGUAGE.fullmatch(value):
        return value
    raise Refused(f"{name} must be a language code such as en or pt-BR, not '{value}'", 2)


def models(name, value):
    """A comma-separated list of xlpe-train's models, or ``all``."""
    chosen = value.split(",")
    if value == "all" or (value and all(model in TRAIN_MODELS for model in chosen)):
        return value
    raise Refused(f"{name} must be all or models of xlpe-train separated by commas "
                  f"({' '.join(TRAIN_MODELS)}), not '{value}'", 2)


def tokenized(value, src, tgt, name):
    """Languages of the corpus separated by commas: the sides already tokenized."""
    if value and all(lang in (src, tgt) for lang in value.split(",")):
        return value
    raise Refused(f"{name} must be languages of the corpus ({src} {tgt}) separated by commas, "
                  f"not '{value}'", 2)


def settings_of(options, environ):
    """Every setting, an option's value over its variable's, the defaults filled in (but the
    size-dependent ones, MERGES, MAX_LEN and the preorderer's), each checked in the shell
    recipes' order: the first bad one a usage error."""
    s = {name: value for name, value in environ.items()
         if name in ("MERGES", "MAX_LEN", "MAX_RATIO", "RATIO_RULE", "LOWERCASE", "JOINED_DICT",
                     "WORKERS", "XLPE_TRAIN_POSITIONS", "TOKENIZED")
         or name.startswith("PREORDER_")}
    s = {name: value for name, value in s.items() if value != ""}
    s.update(options)
    defaults = {"WORKERS": str(nproc()), "LOWERCASE": "0", "JOINED_DICT": "0",
                "PREORDER_SECONDS": "3600", "PREORDER_DEVICE": "cpu", "PREORDER_FOLDS": "2",
                "PREORDER_THREADS": "1", "XLPE_TRAIN_POSITIONS": "oracle", "MODELS": "all",
                "RATIO_RULE": "corpus", "MAX_RATIO": "1.5"}
    for name, value in defaults.items():
        s.setdefault(name, value)
    check_train_positions(s["XLPE_TRAIN_POSITIONS"])
    most = default_workers()
    checks = [("PREORDER_SEEDS", 1, 999), ("PREORDER_BATCH_TOKENS", 1, 9999999),
              ("PREORDER_MAX_LENGTH", 1, 9999999), ("PREORDER_THREADS", 1, most),
              ("PREORDER_JOBS", 1, most), ("PREORDER_SAMPLE", 0, None), ("WORKERS", 1, most),
              ("PREORDER_EPOCHS", 1, None), ("PREORDER_FOLDS", 2, None), ("LOWERCASE", 0, 1),
              ("JOINED_DICT", 0, 1), ("MERGES", 1, None), ("MAX_LEN", 1, None)]
    for name, minimum, maximum in checks:
        if name in s:
            s[name] = whole(minimum, maximum)(s[name], name)
    positive(s["PREORDER_SECONDS"], "PREORDER_SECONDS")
    # members side by side on the cores their threads leave
    s.setdefault("PREORDER_JOBS", str(most // int(s["PREORDER_THREADS"])))
    if "PREORDER_LOSS" in s:
        one_of(("pairwise", "structured", "both"))(s["PREORDER_LOSS"], "PREORDER_LOSS")
    if s["PREORDER_DEVICE"] != "cpu":
        # a device that is not there is found now, not after the alignment
        from ..preordering.preorderer import check_device
        try:
            check_device(s["PREORDER_DEVICE"])
        except InputError as err:
            raise Refused(f"PREORDER_DEVICE: {err}", 2) from None
    if "TOKENIZED" in s:
        tokenized(s["TOKENIZED"], s.get("SRC"), s.get("TGT"),
                  "--tokenized" if "TOKENIZED" in options else "TOKENIZED")
    one_of(("corpus", "fixed"))(s["RATIO_RULE"], "RATIO_RULE")
    ratio("MAX_RATIO", s["MAX_RATIO"])
    if not wants_preorderer(s["MODELS"]) and s["XLPE_TRAIN_POSITIONS"] != "oracle":
        raise Refused(f"XLPE_TRAIN_POSITIONS={s['XLPE_TRAIN_POSITIONS']} is for XL PE, which "
                      f"--models {s['MODELS']} leaves out: unset it, or add an XL PE model", 2)
    return s


def wants_preorderer(chosen):
    """Whether the models OUT is for (``--models``) include one that reads the preorderer."""
    return chosen == "all" or any(reads_positions(model) for model in chosen.split(","))


def preorderer_defaults(s, pairs):
    """Each preorderer setting left unset given its default for ``pairs`` training pairs
    (docs/preorderer.md, "Defaults by corpus size"), and the sample options."""
    seeds, sample = "4", "0"
    if pairs > 50000:
        sample = str(PREORDER_SAMPLE_ABOVE)
    elif pairs > 35000:
        seeds = "3"
    for name, value in (("PREORDER_LOSS", "structured"), ("PREORDER_SEEDS", seeds),
                        ("PREORDER_EPOCHS", "9"), ("PREORDER_BATCH_TOKENS", "2000"),
                        ("PREORDER_MAX_LENGTH", "150"), ("PREORDER_SAMPLE", sample)):
        s.setdefault(name, value)
    s["PREORDER_SAMPLING"] = []
    trained = f"all {pairs}"
    if 0 < int(s["PREORDER_SAMPLE"]) < pairs:
        s["PREORDER_SAMPLING"] = ["--sample", s["PREORDER_SAMPLE"], "--sample-seed", "1"]
        trained = f"a sample of {s['PREORDER_SAMPLE']} of the {pairs}"
    return (f"preorderer for {pairs} training pairs: {s['PREORDER_SEEDS']} seed(s), "
            f"{s['PREORDER_LOSS']} loss, {s['PREORDER_EPOCHS']} epochs, batches of "
            f"{s['PREORDER_BATCH_TOKENS']} tokens, sentences up to {s['PREORDER_MAX_LENGTH']} "
            f"tokens, trained on {trained} pairs, {s['PREORDER_JOBS']} member(s) at a time of "
            f"{s['PREORDER_THREADS']} thread(s) (PREORDER_* variables override)")


def check_train_positions(value):
    """XLPE_TRAIN_POSITIONS: the positions XL PE trains on (pipeline.py's docstring)."""
    if value not in ("oracle", "predicted", "mixed"):
        raise Refused(f"XLPE_TRAIN_POSITIONS must be oracle, predicted or mixed, not '{value}'",
                      2)
