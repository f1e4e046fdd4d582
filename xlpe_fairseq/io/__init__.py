"""The package's ground floor: how every command reads input, writes output and runs.

- ``errors``: InputError, ToolError and OptionError, the failures a command reports in one
  line;
- ``lines``: strict UTF-8, one rule for line ends, line counts, chunks of parallel files;
- ``outputs``: outputs checked before any work, written atomically, no temporaries left;
- ``workers``: an order-preserving parallel map whose workers never outlive the command;
- ``checkpoints``: checkpoints read, every file that is not one refused in one line;
- ``command``: ``run_command``, errors into a message and exit status 1, signals into
  ``Terminated``;
- ``locks``: folder locks, one run writing a folder or many reading it, a refusal naming the
  runs that hold it (``io.locks.claim_folder``);
- ``work_folders``: a folder no run may mean to write into (``/``, a system folder, a file)
  refused before anything is written;
- ``provenance``: the records of the chain raw text, OUT, checkpoints, scores, the checks of
  each link against them, and ``xlpe-provenance``; ``digests``: the sha256 of files and
  data-bins, and the data fingerprint a checkpoint carries;
- ``children``: external programs (eflomal, fairseq's commands) run in their own process
  group, ended with the command;
- ``stage_usage``: the wall time, CPU time and peak memory of a step (``XLPE_STAGE_LOG``);
- ``options``: the ranges of numeric options (argparse types, checks of fairseq options) and
  the ``--workers``/``--chunk-size`` options.

Commands import from here; the modules say where each piece lives.
"""
from .checkpoints import fairseq_checkpoint, load_fairseq_ensemble, read_checkpoint
from .command import Terminated, run_command, termination_deferred
from .errors import InputError, OptionError, ToolError
from .lines import (
    check_dictionaries,
    check_length,
    check_same_line_count,
    check_text,
    check_utf8,
    count_lines,
    decoding_errors_named,
    find_not_utf8,
    open_text,
    read_chunks,
    read_lines,
    read_parallel_chunks,
    require_files,
    require_lines,
    text_lines,
)
from .options import (
    BOOTSTRAP_SAMPLES,
    FINITE,
    NON_NEGATIVE,
    SEED,
    WORKERS,
    Number,
    add_parallel_arguments,
    default_workers,
    language_code,
    option_value,
    positive_int,
    shell_words,
)
from .outputs import (
    atomic_output,
    atomic_outputs,
    check_not_inputs,
    check_output_directory,
    check_outputs,
    created_directories,
    open_output,
    output_target,
    remove_stale_temporaries,
    temporary_directory,
)
from .workers import child_processes, parallel_imap
