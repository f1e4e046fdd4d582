"""A command's process, set up before its module (and the plugin, torch and fairseq) loads.

- Messages of fairseq's stack that a user of the plugin cannot act on are silenced: hydra's
  notes on how fairseq 0.12 calls its compose API, and torch's on fairseq's data loader and
  attention masks. fairseq's wav2vec2_classification module sets the root logger to DEBUG on
  import; hydra would then log how it composes fairseq's config.
- Ctrl-C while the modules load, before the command handles signals itself
  (``io.command.run_command``), ends the process as SIGINT ends a program: no traceback.
- Importing the plugin where this Python has no fairseq it runs on raises ``UnsupportedFairseq``
  (``xlpe_fairseq.fairseq_support``), whose message says what to install: the command prints it
  as one line and exits 1.
"""
import importlib
import logging
import os
import signal
import sys
import warnings

UNACTIONABLE_WARNINGS = [
    # hydra, as fairseq 0.12 calls its compose API
    r"hydra\.experimental\.(initialize|compose)\(\) is no longer experimental",
    r"\s*The version_base parameter is not specified",
    r"In 'config': Usage of deprecated keyword in package header",
    r"\s*'config' is validated against ConfigStore schema",
    r"\s*The strict flag in the compose API is deprecated",
    # fairseq's data loader, mixed-precision and attention-mask calls, as newer torch sees them
    r"'pin_memory' argument is set as true but no accelerator is found",
    r"`torch\.cuda\.amp\.autocast\(args\.\.\.\)` is deprecated",
    r"Support for mismatched key_padding_mask and attn_mask is deprecated",
]


def set_up_process():
    for message in UNACTIONABLE_WARNINGS:
        warnings.filterwarnings("ignore", message=message)
    logging.getLogger("hydra").setLevel(logging.INFO)


def end_as_interrupted():
    """Exit as SIGINT's default action does (status 130 in a shell), without a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)


def unsupported_fairseq(error):
    """Whether ``error`` is the plugin's refusal of this Python's fairseq."""
    support = sys.modules.get("xlpe_fairseq.fairseq_support")
    return support is not None and isinstance(error, support.UnsupportedFairseq)


def run(module_name, argv=None):
    """``MODULE.main(argv)`` in a process set up for it."""
    set_up_process()
    try:
        command = importlib.import_module(module_name)
    except KeyboardInterrupt:
        end_as_interrupted()
    except ImportError as error:
        if not unsupported_fairseq(error):
            raise
        print(f"{os.path.basename(sys.argv[0])}: error: {error}", file=sys.stderr)
        sys.exit(1)
    return command.main(argv)
