"""xlpe-fairseq: a fairseq plugin for cross-lingual word order in Transformer NMT.

Load it with ``--user-dir <path>/xlpe_fairseq`` to get the ``translation_reorder`` task, the
``label_smoothed_cross_entropy_with_order`` criterion and the ``transformer_xlpe`` /
``transformer_dpe`` / ``transformer_reorder_emb`` models.
"""
import importlib.abc
import logging
import os
import sys
import warnings

from .fairseq_support import UnsupportedFairseq, check_fairseq

_COMMAND = os.path.basename((getattr(sys, "argv", None) or [""])[0])
try:
    check_fairseq()
except UnsupportedFairseq as error:
    # an xlpe-* command says it in one line, as it says every error; an import shows the line
    if _COMMAND.startswith("xlpe-"):
        sys.stderr.write(f"{_COMMAND}: {error}\n")
        raise SystemExit(1) from None
    raise

# fairseq checkpoints pickle argparse.Namespace; torch >= 2.6 refuses them under its
# weights_only default, which breaks fairseq-generate, -interactive and --restore-file.
os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")

# Messages from fairseq and its stack that a user of this plugin cannot act on. (fairseq's
# "Please install tensorboardX", logged when fairseq.tasks is imported, before any plugin loads,
# is answered by installing tensorboardX with this package.)
_UNACTIONABLE_WARNINGS = [
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
    # torch, on fairseq's checkpoint loading: the plugin sets the variable itself (see above)
    r"Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected",
]
for _message in _UNACTIONABLE_WARNINGS:
    warnings.filterwarnings("ignore", message=_message)
# fairseq's wav2vec2_classification module, imported with fairseq's models, sets the root logger
# to DEBUG; hydra then logs how it composes fairseq's config ("DEBUG:hydra.core.utils:Setting
# JobRuntime...") in fairseq-generate and fairseq-interactive
logging.getLogger("hydra").setLevel(logging.INFO)


def _quiet_interrupt(previous_hook):
    """An ``excepthook`` that prints nothing for Ctrl-C: Python then ends the process as
    SIGINT does (exit status 130)."""

    def hook(kind, error, traceback):
        if not issubclass(kind, KeyboardInterrupt):
            previous_hook(kind, error, traceback)

    return hook


# The xlpe-* commands handle Ctrl-C once they run (io.command.run_command); this covers the
# seconds before, while they import torch and fairseq.
if _COMMAND.startswith("xlpe-"):
    sys.excepthook = _quiet_interrupt(sys.excepthook)


def _register():
    """Register the task, criterion, models and tokenizer with fairseq; the plugin's errors end
    in one line."""
    from . import criterions, models, tasks, tokenizer  # noqa: F401
    from .plugin_errors import report_plugin_errors

    sys.excepthook = report_plugin_errors(sys.excepthook)


class _RegisterAfterFairseq(importlib.abc.MetaPathFinder):
    """Registers the plugin as soon as fairseq is imported and no module of the plugin is
    half-imported.

    fairseq's ``--user-dir`` skips a package that is already imported, so without this a
    process that imported the plugin first (a notebook that loaded a preorderer, then a
    checkpoint) would find no ``translation_reorder`` task. When a plugin module itself imports
    fairseq (``xlpe_fairseq.modules`` does), the models it registers would import that module
    half-done, so registration waits until the outermost plugin import has finished.
    """

    def __init__(self):
        self.plugin_imports_running = 0

    def find_spec(self, name, path, target=None):
        if name != "fairseq" and not name.startswith(__name__ + "."):
            return None
        spec = self._spec_from_other_finders(name, path, target)
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module

        def exec_module(module):
            plugin_module = name != "fairseq"
            self.plugin_imports_running += plugin_module
            try:
                load(module)
            finally:
                self.plugin_imports_running -= plugin_module
            if self.plugin_imports_running == 0 and "fairseq" in sys.modules \
                    and self in sys.meta_path:
                sys.meta_path.remove(self)
                _register()

        spec.loader.exec_module = exec_module
        return spec

    def _spec_from_other_finders(self, name, path, target):
        for finder in sys.meta_path:
            if finder is not self:
                spec = getattr(finder, "find_spec", lambda *_: None)(name, path, target)
                if spec is not None:
                    return spec
        return None


# fairseq's --user-dir imports this package after fairseq itself: register then. The
# data-preparation commands import only their own modules and skip fairseq's ~4 s start-up.
if "fairseq" in sys.modules:
    _register()
else:
    sys.meta_path.insert(0, _RegisterAfterFairseq())
