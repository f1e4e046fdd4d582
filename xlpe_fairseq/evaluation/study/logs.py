"""What a run's fairseq-train log tells: the validation curve, the criterion's diagnostics
(DPE's order, InXL's input), and how far the training has come."""
import re


VALID_LINE = re.compile(r"valid on '[^']*' subset \|(?P<fields>.*)")


# fairseq's simple format writes interval lines as "name=value, ..." and summaries (epochs,
# validations) as "| name value |"; a run shorter than --log-interval has only summaries
TRAIN_LINES = (re.compile(r"\| train_inner \| [^|]*?(?P<fields>\w+=.*)"),
               re.compile(r"\| train \| epoch \d+ \|(?P<fields>.*)"))
FIELD = re.compile(r"(\w+)=([^,\s]+)")
# an update count in any line: an interval's or summary's num_updates, a resume's "@ N updates"
UPDATE = re.compile(r"num_updates[= ](\d+)|@ (\d+) updates")


def log_fields(train_log, *patterns):
    """The ``{name: value}`` fields of every line of fairseq-train's simple-format log that
    one of ``patterns`` matches, in order (resumes included)."""
    with open(train_log, encoding="utf-8", errors="replace") as f:
        for line in f:
            match = next(filter(None, (pattern.search(line) for pattern in patterns)), None)
            if not match:
                continue
            fields = match["fields"]
            if "=" in fields:
                yield dict(FIELD.findall(fields))
            else:
                yield dict(field.strip().split(" ", 1) for field in fields.split("|")
                           if " " in field.strip())


def last_update(train_log):
    """The last update count fairseq-train's log gives (0 before its first, or without a
    log): where a run is, within the log interval."""
    update = 0
    try:
        with open(train_log, encoding="utf-8", errors="replace") as f:
            for line in f:
                for logged, resumed in UPDATE.findall(line):
                    update = int(logged or resumed)
    except FileNotFoundError:
        pass
    return update


def validation_curve(train_log):
    """``{update: validation NLL}``: the translation loss without label smoothing (base 2),
    which every model reports alike; ``loss`` would add DPE's order loss."""
    return {int(fields["num_updates"]): float(fields["nll_loss"])
            for fields in log_fields(train_log, VALID_LINE)
            if "num_updates" in fields and "nll_loss" in fields}


ORDER_FIELDS = ("order_loss", "order_own_loss", "order_moved_loss", "order_moved_own_loss",
                "order_nearest_target", "order_nearest_own")
# logged by later versions of the criterion; runs logged before it still report the others
LATER_ORDER_FIELDS = ("order_nearer_target",)


def last_logged(train_log, fields, later_fields=()):
    """``fields`` (and those of ``later_fields`` logged) at the run's last logged training
    interval and last validation that have all ``fields``: ``{"train": {...}, "valid":
    {...}}``, each with its ``num_updates``; empty when the model logs none of them."""
    last = {}
    for split, patterns in (("train", TRAIN_LINES), ("valid", (VALID_LINE,))):
        for logged in log_fields(train_log, *patterns):
            if all(name in logged for name in fields):
                last[split] = {name: float(logged[name])
                               for name in fields + later_fields if name in logged}
                last[split]["num_updates"] = int(logged["num_updates"])
    return last


def order_diagnostics(train_log):
    """The criterion's order diagnostics (DPE) at the last training interval and validation."""
    return last_logged(train_log, ORDER_FIELDS, LATER_ORDER_FIELDS)


INPUT_FIELDS = ("xlpe_in_norm", "xlpe_embed_norm", "xlpe_saturated")


def input_diagnostics(train_log):
    """InXL's input statistics (the norms of PE_IN and of the word embedding, the share of
    saturated tanh units) at the last training interval and validation."""
    return last_logged(train_log, INPUT_FIELDS)
