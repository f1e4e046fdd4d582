"""Provenance: what every artifact was made from, recorded once and verified by every consumer.

A score is only as good as the chain behind it: raw text → OUT (xlpe-prepare) → a
checkpoint folder (xlpe-train) → an evaluation (xlpe-evaluate). Each link writes a record, last and
atomically, so that a failed run changes none, and each consumer verifies the link before it
works:

- ``OUT/provenance.json`` (kind ``corpus``): the command, the settings, the sha256 of the raw
  files, of the BPE codes, the preorderer and the reference copies (``OUT/reference/``), and of
  every file of every data-bin. ``xlpe-train``, ``xlpe-evaluate`` and ``xlpe-translate --corpus``
  refuse an OUT whose files differ from its record, or that has none.
- every checkpoint carries the fingerprint of the data it learned from (``data_fingerprint``:
  the dictionaries and the training split), written by the ``translation_reorder`` task; a
  checkpoint is refused on a data-bin with other dictionaries, and a resume on another
  training split or model (``tasks.data_provenance``).
- ``CHECKPOINT_DIR/provenance.json`` (kind ``training``): model, size, schedule, the data-bin
  and its fingerprint, the fairseq-train command; ``verify-checkpoint --expect`` holds a
  checkpoint to the settings of the training its folder records (``verify_trained_as``).
- ``CHECKPOINT_DIR/provenance-SUBSET.json`` (kind ``evaluation``): the checkpoint scored (an
  average: the averaged file), the data-bin, the reference, the options, and the digest of
  each output (generate output, hypotheses, scores).

The digests and fingerprints are computed by ``io.digests``; the folders a run writes into
are checked by ``io.work_folders`` (``xlpe-provenance folder`` runs that check for the shell
scripts).

    xlpe-provenance folder --what OUT PATH
    xlpe-provenance corpus OUT --raw RAW --src SRC --tgt TGT [--setting K=V ...] -- COMMAND...
    xlpe-provenance verify-corpus OUT [--data-bin VARIANT] [--reference SUBSET]
    xlpe-provenance verify-checkpoint CHECKPOINT --data-bin BIN | --corpus OUT [--expect K=V ...]
    xlpe-provenance training SAVE_DIR --data-bin BIN --model M --size S --schedule S -- COMMAND...
    xlpe-provenance evaluation SAVE_DIR --subset S --checkpoint C ... -- COMMAND...
    xlpe-provenance show RECORD
"""
import argparse
import datetime
import json
import os
import sys

from ..help_format import HelpFormatter
from .command import run_command
from .digests import (
    CHECKPOINT_KEY,
    data_bin_digests,
    data_fingerprint,
    describe_mismatch,
    file_digest,
    fingerprint_mismatch,
    fingerprint_of,
)
from .errors import InputError
from .lines import check_utf8
from .outputs import atomic_output
from .work_folders import check_work_folder

RECORD = "provenance.json"
FORMAT = 1
def read_record(path, kind=None):
    """A record as a dict; InputError if it is missing, not a record, or not of ``kind``."""
    if not os.path.exists(path):
        raise InputError(f"{path}: no such record")
    check_utf8([path])
    try:
        with open(path, encoding="utf-8") as stream:
            record = json.load(stream)
    except (OSError, json.JSONDecodeError):
        raise InputError(f"{path}: not a provenance record (damaged or another file)") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise InputError(f"{path}: not a provenance record of this version")
    if kind and record.get("kind") != kind:
        raise InputError(f"{path}: a record of a {record.get('kind')}, expected one of a {kind}")
    return record


def write_record(path, kind, command, **fields):
    """Write a record atomically: the output appears complete or not at all."""
    record = {"format": FORMAT, "kind": kind, "command": command,
              "created": datetime.datetime.now(datetime.timezone.utc).isoformat(
                  timespec="seconds"), **fields}
    with atomic_output(path) as stream:
        json.dump(record, stream, indent=1, ensure_ascii=False)
        stream.write("\n")
    return record


def corpus_files(out, tgt):
    """The files of OUT (relative names) that consumers read beside the data-bins."""
    files = ["bpe/codes", "recipe.env", f"reference/valid.{tgt}", f"reference/test.{tgt}"]
    if os.path.exists(os.path.join(out, "preorderer.pt")):
        files.append("preorderer.pt")
    return files


def raw_digests(raw, src, tgt):
    """``{split.lang: {path, sha256}}`` of the raw files in ``raw`` (links followed)."""
    digests = {}
    for split in ("train", "valid", "test"):
        for lang in (src, tgt):
            path = os.path.realpath(os.path.join(raw, f"{split}.{lang}"))
            if os.path.exists(path):
                digests[f"{split}.{lang}"] = {"path": path, "sha256": file_digest(path)}
    return digests


def record_corpus(out, raw, src, tgt, settings, command, given=None):
    """OUT's record: its raw inputs (``given``: the user's folder, where valid and test were
    held out of its train into ``raw``), settings, files and every data-bin's digests."""
    inputs = raw_digests(raw, src, tgt)
    files = {name: file_digest(os.path.join(out, name)) for name in corpus_files(out, tgt)}
    data_bins = {variant: data_bin_digests(os.path.join(out, "data-bin", variant))
                 for variant in sorted(os.listdir(os.path.join(out, "data-bin")))
                 if os.path.isdir(os.path.join(out, "data-bin", variant))}
    return write_record(os.path.join(out, RECORD), "corpus", command, source_lang=src,
                        target_lang=tgt, settings=settings,
                        given=raw_digests(given, src, tgt) if given else None, inputs=inputs,
                        files=files, data_bins=data_bins)


def verify_corpus(out, variant=None, reference=None):
    """OUT's record against OUT's files now: the data-bin ``variant`` (all where ``None``),
    the BPE codes, the preorderer and the reference copy of split ``reference``. Returns the
    warnings (a raw reference changed since: the copy is scored); InputError naming the
    first file that changed."""
    path = os.path.join(out, RECORD)
    if not os.path.exists(path):
        raise InputError(
            f"{path}: no such record; {out} was prepared by an earlier version or its "
            "preparation did not finish: rerun the data_prep recipe into it (finished steps "
            "are kept)")
    record = read_record(path, "corpus")
    rerun = "rerun the data_prep recipe into it (or prepare another OUT)"
    for name, digest in record["files"].items():
        if name.startswith("reference/") and reference is None:
            continue
        if name.startswith("reference/") and name.split("/")[1].split(".")[0] != reference:
            continue
        if not os.path.exists(os.path.join(out, name)):
            raise InputError(f"{os.path.join(out, name)}: missing since {out} was prepared "
                             f"({path}); {rerun}")
        if file_digest(os.path.join(out, name)) != digest:
            raise InputError(f"{os.path.join(out, name)}: changed since {out} was prepared "
                             f"({path}); {rerun}")
    warnings = []
    if reference is not None:
        raw = record["inputs"].get(f"{reference}.{record['target_lang']}")
        if raw and (not os.path.exists(raw["path"]) or file_digest(raw["path"]) != raw["sha256"]):
            warnings.append(
                f"{raw['path']} changed since {out} was prepared: scoring against the reference "
                f"as prepared, {os.path.join(out, 'reference')}; rerun the data_prep recipe "
                "into it to score against the new one")
    variants = [variant] if variant else sorted(record["data_bins"])
    for name in variants:
        if name not in record["data_bins"]:
            raise InputError(f"{os.path.join(out, 'data-bin', name)}: not a data-bin of {out} "
                             f"(its record {path} lists {', '.join(sorted(record['data_bins']))})")
        folder = os.path.join(out, "data-bin", name)
        recorded = record["data_bins"][name]
        now = data_bin_digests(folder)
        for file_name in sorted(set(recorded) | set(now)):
            if recorded.get(file_name) != now.get(file_name):
                state = ("missing" if file_name not in now else "new" if file_name not in recorded
                         else "changed")
                raise InputError(f"{os.path.join(folder, file_name)}: {state} since {out} was "
                                 f"prepared ({path}); {rerun}")
    return warnings


def corpus_of(data_bin):
    """The OUT whose data-bin ``data_bin`` is (OUT/data-bin/VARIANT), else ``None``."""
    variant_parent = os.path.dirname(os.path.abspath(data_bin))
    if os.path.basename(variant_parent) == "data-bin":
        out = os.path.dirname(variant_parent)
        if os.path.exists(os.path.join(out, "recipe.env")):
            return out
    return None


def record_training(save_dir, data_bin, model, size, schedule, command):
    """SAVE_DIR's record, after fairseq-train succeeded."""
    out = corpus_of(data_bin)
    corpus = os.path.join(out, RECORD) if out else None
    return write_record(
        os.path.join(save_dir, RECORD), "training", command, model=model, size=size,
        schedule=schedule, data_bin=os.path.abspath(data_bin),
        data_fingerprint=data_fingerprint([data_bin]),
        corpus_record=({"path": os.path.abspath(corpus), "sha256": file_digest(corpus)}
                       if corpus and os.path.exists(corpus) else None))


def checkpoint_fingerprint(path):
    """The data fingerprint a checkpoint carries (``None`` for one saved before the plugin
    recorded it), read without loading its weights into memory."""
    from .checkpoints import read_checkpoint

    state = read_checkpoint(path, "fairseq checkpoint", mmap=True)
    task_state = state.get("task_state") if isinstance(state, dict) else None
    return (task_state or {}).get(CHECKPOINT_KEY)


def refuse_other_data(path, recorded, current):
    """InputError when the checkpoint ``path``'s fingerprint ``recorded`` differs from the
    data-bin's ``current``: other dictionaries or another training split (a corpus re-prepared
    since, or another corpus)."""
    if fingerprint_mismatch(recorded, current):
        raise InputError(f"{path}: {describe_mismatch(recorded, current, 'it')}: use the "
                         "checkpoints trained on this corpus, or train anew")


def verify_checkpoint(path, data_bin):
    """``refuse_other_data`` against ``data_bin`` as its files are now. Returns False for a
    checkpoint that records no fingerprint (saved before the plugin recorded one)."""
    recorded = checkpoint_fingerprint(path)
    if not recorded:
        return False
    refuse_other_data(path, recorded, data_fingerprint([data_bin]))
    return True


def verify_checkpoint_on_corpus(path, out):
    """``verify_checkpoint`` against the data-bin of OUT the checkpoint was trained on
    (OUT/data-bin/VARIANT, named by its fingerprint; text for one that names none there), as
    OUT's record has it: the caller has checked OUT's files against the record
    (``verify_corpus``), so nothing is read twice."""
    recorded = checkpoint_fingerprint(path)
    if not recorded:
        return False
    data_bins = read_record(os.path.join(out, RECORD), "corpus")["data_bins"]
    variant = os.path.basename(recorded.get("data_bin", "text"))
    variant = variant if variant in data_bins else "text"
    refuse_other_data(path, recorded, fingerprint_of(os.path.join(out, "data-bin", variant),
                                                     [data_bins[variant]]))
    return True


def stored_setting(state, name):
    """The value of fairseq option ``name`` (``arch``, ``keep_interval_updates``) in a
    checkpoint's saved settings: its ``args`` (older fairseq) or a section of its ``cfg``;
    ``None`` where it has none."""
    args = state.get("args")
    if args is not None and getattr(args, name, None) is not None:
        return getattr(args, name)
    cfg = state.get("cfg") or {}
    for section in ("model", "checkpoint", "optimizer", "task", "criterion", "common"):
        part = cfg.get(section) if hasattr(cfg, "get") else getattr(cfg, section, None)
        for key in (name, "_name") if name == "arch" and section == "model" else (name,):
            value = part.get(key) if hasattr(part, "get") else getattr(part, key, None)
            if value is not None:
                return value
    return None


def _same_value(stored, accepted):
    try:
        return float(stored) == float(accepted)
    except (TypeError, ValueError):
        return str(stored) == accepted


def verify_trained_as(path, expected, expected_by):
    """InputError unless checkpoint ``path``'s saved settings have, for each fairseq option of
    ``expected`` (``{name: [accepted values]}``), one of the accepted values: a checkpoint of
    another architecture or schedule than ``expected_by`` (words: which training, and whose
    record says so) trained."""
    from .checkpoints import read_checkpoint

    if not expected:
        return
    state = read_checkpoint(path, "fairseq checkpoint", mmap=True)
    if not isinstance(state, dict):
        raise InputError(f"{path}: not a fairseq checkpoint (no model state and settings)")
    for name, accepted in expected.items():
        stored = stored_setting(state, name)
        if not any(_same_value(stored, value) for value in accepted):
            flag = "--" + name.replace("_", "-")
            choices = " or ".join(accepted)
            raise InputError(f"{path}: saved with {flag} {stored}, but {expected_by} trains with "
                             f"{flag} {choices}: not a checkpoint of that training")


def _key_values(pairs, option, expected="KEY=VALUE"):
    """``{key: value}`` of ``option KEY=VALUE`` options; InputError naming a malformed one."""
    values = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError(f"{option} {pair}: expected {expected}")
        values[key] = value
    return values


def record_evaluation(save_dir, subset, checkpoint, data_bin, corpus, reference, outputs,
                      options, command):
    """SAVE_DIR/provenance-SUBSET.json, after the scores are written."""
    def entry(path):
        return {"path": os.path.abspath(path), "sha256": file_digest(path)}

    return write_record(
        os.path.join(save_dir, f"provenance-{subset}.json"), "evaluation", command,
        subset=subset, checkpoint=entry(checkpoint), data_bin=os.path.abspath(data_bin),
        corpus_record=entry(os.path.join(corpus, RECORD)), reference=entry(reference),
        options=options, outputs={os.path.basename(p): entry(p) for p in outputs})


def main(argv=None):
    parser = argparse.ArgumentParser(prog="xlpe-provenance", description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--prog", default="xlpe-provenance",
                        help="the name errors begin with (the script that calls it)")
    commands = parser.add_subparsers(dest="action", required=True)

    def command(name, help):
        return commands.add_parser(name, help=help, parents=[common],
                                   formatter_class=HelpFormatter)

    folder = command("folder", "refuse a folder a run cannot mean to write into")
    folder.add_argument("--what", default="the output", help="what the folder is for, in words")
    folder.add_argument("path", nargs="?", help="the folder (or after --, for a name that "
                        "begins with -)")
    corpus = command("corpus", "write OUT/provenance.json")
    corpus.add_argument("out")
    corpus.add_argument("--raw", required=True, help="the raw folder OUT was prepared from")
    corpus.add_argument("--src", required=True)
    corpus.add_argument("--tgt", required=True)
    corpus.add_argument("--setting", action="append", default=[], help="KEY=VALUE")
    corpus.add_argument("--given", help="the user's raw folder, where --raw holds splits "
                        "held out of its train")
    verify = command("verify-corpus", "check OUT against its record")
    verify.add_argument("out")
    verify.add_argument("--data-bin", help="the variant to check (text, dpe, xlpe; default all)")
    verify.add_argument("--reference", help="the split whose reference copy to check")
    checkpoint = command("verify-checkpoint", "check a checkpoint against a data-bin")
    checkpoint.add_argument("checkpoint")
    against = checkpoint.add_mutually_exclusive_group(required=True)
    against.add_argument("--data-bin", help="the data-bin it must have been trained on")
    against.add_argument("--corpus", help="an OUT: the checkpoint's data-bin variant of it "
                         "(a model given the wrong variant is fairseq's task's to name)")
    checkpoint.add_argument("--expect", action="append", default=[],
                            metavar="NAME=VALUE[,VALUE...]",
                            help="a fairseq option the checkpoint must have been saved with "
                            "(one of the values), e.g. arch=transformer_dpe")
    checkpoint.add_argument("--expected-by", default="its training",
                            help="the training that says so, in words (for the message)")
    training = command("training", "write SAVE_DIR/provenance.json")
    training.add_argument("save_dir")
    for name in ("--data-bin", "--model", "--size", "--schedule"):
        training.add_argument(name, required=True)
    evaluation = command("evaluation", "write SAVE_DIR/provenance-SUBSET.json")
    evaluation.add_argument("save_dir")
    for name in ("--subset", "--checkpoint", "--data-bin", "--corpus", "--reference"):
        evaluation.add_argument(name, required=True)
    evaluation.add_argument("--output", action="append", default=[], help="an output written")
    evaluation.add_argument("--option", action="append", default=[], help="KEY=VALUE")
    show = command("show", "print a record")
    show.add_argument("record")
    # after --: the command that made the artifact, recorded as it is (argparse would read
    # its options)
    argv = list(sys.argv[1:] if argv is None else argv)
    run = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    args.run = run

    def body():
        if args.action == "folder":
            path = args.path if args.path is not None else (run or [""])[0]
            print(check_work_folder(path, args.what))
        elif args.action == "corpus":
            record_corpus(args.out, args.raw, args.src, args.tgt, _key_values(args.setting, "--setting"),
                          args.run, args.given)
        elif args.action == "verify-corpus":
            for warning in verify_corpus(args.out, args.data_bin, args.reference):
                print(f"{args.prog}: warning: {warning}", file=sys.stderr)
        elif args.action == "verify-checkpoint":
            expected = _key_values(args.expect, "--expect", "NAME=VALUE[,VALUE...]")
            verify_trained_as(args.checkpoint,
                              {name: values.split(",") for name, values in expected.items()},
                              args.expected_by)
            verified = (verify_checkpoint(args.checkpoint, args.data_bin) if args.data_bin
                        else verify_checkpoint_on_corpus(args.checkpoint, args.corpus))
            if not verified:
                print(f"{args.prog}: warning: {args.checkpoint} records no data fingerprint "
                      "(saved by an earlier version): not verified against "
                      f"{args.data_bin or args.corpus}", file=sys.stderr)
        elif args.action == "training":
            record_training(args.save_dir, args.data_bin, args.model, args.size, args.schedule,
                            args.run)
        elif args.action == "evaluation":
            record_evaluation(args.save_dir, args.subset, args.checkpoint, args.data_bin,
                              args.corpus, args.reference, args.output,
                              _key_values(args.option, "--option"), args.run)
        else:
            print(json.dumps(read_record(args.record), indent=1, ensure_ascii=False))

    run_command(body, args.prog)
    return 0


if __name__ == "__main__":
    sys.exit(main())
