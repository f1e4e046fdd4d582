"""Reading checkpoints: every file that cannot be one (missing, truncated, random bytes, a
checkpoint of another kind) is an InputError of one line naming it.

Every checkpoint is loaded weights-only: unpickling runs no code of the file's. fairseq's
checkpoints pickle one class besides tensors and plain values, their command line
(``argparse.Namespace``), which torch >= 2.6 refuses unless it is allowed by name
(``FAIRSEQ_CHECKPOINT_GLOBALS``); the plugin allows it when it is imported, so that fairseq's
own loading (fairseq-generate, -interactive, fairseq-train's resume) works too, and every other
class stays refused. Switching the check off (``weights_only=False``,
``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD``) would let a checkpoint run code when it is loaded.

torch reports an unreadable file with many exception types whose messages run to paragraphs,
and for a pickle it cannot read it advises loading with ``weights_only=False``, which must not
be suggested for an untrusted file: the message here says what the file is not, in its own
words. fairseq's loader fails on a wrong-kind file far from the file's name (a KeyError, a
TypeError while translating with an ensemble of models that read different inputs).
"""
import argparse
import os

from .errors import InputError, OptionError

FAIRSEQ_CHECKPOINT_GLOBALS = (argparse.Namespace,)


def allow_fairseq_checkpoint_globals():
    """Allow ``FAIRSEQ_CHECKPOINT_GLOBALS`` in torch's weights-only unpickler, in this
    process (torch keeps one list, to which a plugin adds what its checkpoints need)."""
    import torch

    torch.serialization.add_safe_globals(list(FAIRSEQ_CHECKPOINT_GLOBALS))


def read_checkpoint(path, what, mmap=False):
    """``torch.load`` of ``path`` on the CPU, weights-only (fairseq's checkpoint globals
    allowed); InputError ``PATH: not a WHAT (...)`` if the file cannot be read. ``mmap`` maps
    the weights instead of reading them, for a look at a large checkpoint's settings."""
    import torch  # the ground floor does not import torch until a checkpoint is read

    if not os.fspath(path):
        raise InputError(f"'': an empty name, expected a {what}")
    if os.path.isdir(path):
        raise InputError(f"{path}: is a directory, expected a {what}")
    if not os.path.exists(path):
        raise InputError(f"{path}: no such {what}")
    # allowed for good, as the plugin's import allows them: torch's safe_globals context would
    # take them away again on its way out, and fairseq's own loading after this one would fail
    allow_fairseq_checkpoint_globals()
    try:
        return torch.load(path, map_location="cpu", weights_only=True,
                          **({"mmap": True} if mmap and _zip_format(path) else {}))
    except OSError as err:
        if err.strerror:
            raise InputError(f"{path}: cannot read it ({err.strerror})") from None
        raise InputError(f"{path}: not a {what} (truncated or damaged)") from None
    except Exception:  # torch reports unreadable files with many exception types
        raise InputError(f"{path}: not a {what} (truncated, damaged, or another kind of "
                         "file)") from None


def _zip_format(path):
    """torch's zip format (``torch.save`` since 1.6), the one ``mmap`` can map."""
    import zipfile

    return zipfile.is_zipfile(path)


def fairseq_checkpoint(path, mmap=False):
    """The saved state of a fairseq checkpoint (``model``, ``cfg`` or ``args``, ...);
    ``mmap``: its weights mapped, not read."""
    state = read_checkpoint(path, "fairseq checkpoint", mmap=mmap)
    if isinstance(state, dict) and "format" in state and "model" not in state:
        raise InputError(f"{path}: not a fairseq checkpoint (its format is {state['format']!r}; "
                         "a preorderer goes to --preorderer)")
    if not (isinstance(state, dict) and isinstance(state.get("model"), dict)
            and (state.get("cfg") is not None or state.get("args") is not None)):
        raise InputError(f"{path}: not a fairseq checkpoint (no model state and settings)")
    return state


def load_fairseq_ensemble(paths, arg_overrides):
    """``checkpoint_utils.load_model_ensemble_and_task`` of ``paths``, its failures as one
    line naming the file; an ensemble of models that read different inputs (e.g. an XL PE
    model, which reads reorder positions, and a Transformer) is refused."""
    from fairseq import checkpoint_utils

    try:
        ensemble, cfg, task = checkpoint_utils.load_model_ensemble_and_task(
            paths, arg_overrides=arg_overrides)
    except (OptionError, InputError):  # the plugin's own, already one line
        raise
    except Exception as err:
        for path in paths:
            fairseq_checkpoint(path)  # names the file that is not a checkpoint
        reason = (str(err).strip().splitlines() or [""])[0]
        raise InputError(f"{':'.join(paths)}: cannot load the model ({type(err).__name__}: "
                         f"{reason})") from None
    roles = [getattr(model, "reorder_positions_role", None) for model in ensemble]
    for path, model, role in zip(paths[1:], ensemble[1:], roles[1:]):
        if role != roles[0]:
            raise InputError(
                f"{path}: a {type(model).__name__} cannot join {paths[0]} "
                f"(a {type(ensemble[0]).__name__}) in an ensemble: the models take "
                "different inputs (reorder positions); ensemble models of one kind")
    return ensemble, cfg, task
