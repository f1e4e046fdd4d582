"""Digests of what the provenance chain records: a file's sha256, a data-bin's files', and the
data fingerprint a checkpoint carries (the dictionaries and the training split it learned
from), with what differs between two fingerprints in words."""
import hashlib
import os

from .errors import InputError

# the key of a checkpoint's task state that holds the data fingerprint
CHECKPOINT_KEY = "xlpe_data_fingerprint"


def file_digest(path):
    """The sha256 of ``path``'s content (a link is followed), read in 1 MiB blocks."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
    except OSError as err:
        raise InputError(f"{path}: cannot read it ({err.strerror})") from None
    return digest.hexdigest()


def combined_digest(digests):
    """One digest of a ``{name: sha256}`` mapping, independent of its order."""
    text = "".join(f"{name} {digests[name]}\n" for name in sorted(digests))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def data_bin_files(data_bin):
    """The files of a data-bin fairseq reads: dictionaries and binarized splits."""
    if not os.path.isdir(data_bin):
        raise InputError(f"{data_bin}: no such data-bin folder")
    return sorted(name for name in os.listdir(data_bin)
                  if (name.startswith("dict.") and name.endswith(".txt"))
                  or name.endswith((".bin", ".idx")))


def data_bin_digests(data_bin):
    """``{file name: sha256}`` of every file of ``data_bin`` (see ``data_bin_files``)."""
    return {name: file_digest(os.path.join(data_bin, name)) for name in data_bin_files(data_bin)}


def fingerprint_of(data_bin, digests, train_subset="train"):
    """What a model learns from, as a checkpoint records it, from ``digests`` (``{file name:
    sha256}`` of each data-bin fairseq reads, in its order): the first's dictionaries (the
    token ids) and one digest of the training split's files over all of them (``None`` where
    none has one, e.g. a folder for decoding)."""
    dictionaries = {name: digest for name, digest in digests[0].items()
                    if name.startswith("dict.")}
    train = {f"{number}/{name}": digest for number, files in enumerate(digests)
             for name, digest in files.items() if name.startswith(f"{train_subset}.")}
    return {"data_bin": os.path.abspath(data_bin), "dictionaries": dictionaries,
            "train": combined_digest(train) if train else None}


def data_fingerprint(data_paths, train_subset="train", train=True):
    """``fingerprint_of`` the data-bins ``data_paths`` as their files are now; without
    ``train``, the dictionaries only (the training split is not read)."""
    def wanted(number, name):
        return ((number == 0 and name.startswith("dict."))
                or (train and name.startswith(f"{train_subset}.")))

    digests = [{name: file_digest(os.path.join(data_bin, name))
                for name in data_bin_files(data_bin) if wanted(number, name)}
               for number, data_bin in enumerate(data_paths)]
    return fingerprint_of(data_paths[0], digests, train_subset)


def fingerprint_mismatch(recorded, current):
    """What differs between a checkpoint's fingerprint and the data-bin's now, in words
    (``None`` if nothing): ``("dictionaries", names)`` or ``("train", None)``."""
    changed = sorted(name for name in recorded.get("dictionaries", {})
                     if current["dictionaries"].get(name) != recorded["dictionaries"][name])
    if changed:
        return "dictionaries", changed
    if recorded.get("train") and current.get("train") and recorded["train"] != current["train"]:
        return "train", None
    return None


def describe_mismatch(recorded, current, what):
    """One sentence: ``what`` (e.g. "the checkpoint") was trained on another data-bin."""
    kind, names = fingerprint_mismatch(recorded, current)
    then, now = recorded.get("data_bin", "another data-bin"), current["data_bin"]
    if kind == "dictionaries":
        differs = f"its {', '.join(names)} differ{'s' if len(names) == 1 else ''}"
    else:
        differs = "its training split differs"
    where = f"{then} as it was then" if os.path.abspath(then) == now else then
    return f"{what} was trained on {where}, not on {now}: {differs}"
