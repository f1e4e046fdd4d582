"""``xlpe-study``: models × seeds trained with one budget on one data-bin, evaluated, reported.

A single seed at a short budget does not rank methods: across seeds BLEU moves by more than
the gaps between models. This command trains every ``--models`` entry once per ``--seeds``
value with identical settings (a ``--profile``, plus ``--updates``), translates the complete
test split with each, scores it with detokenized sacreBLEU and chrF (AER from attention where
gold alignments are given), and writes one report:

- mean ± sample standard deviation over seeds of BLEU and chrF, and each seed's value;
- each model against the baseline: the difference of seed-averaged BLEU (chrF) with a 95%
  interval and a two-sided p-value from a bootstrap that resamples BOTH sources of variation,
  the test sentences (paired: one resample serves every system) and the seeds (drawn with
  replacement per system), so a difference smaller than the seed spread is not called
  significant;
- training curves (validation loss over updates, mean over seeds) as a PNG;
- the settings and every run's fairseq-train command;
- every evaluation's detokenized test output (``hypotheses/``), so each number can be checked
  with sacreBLEU, and a system added later compared, without the runs' checkpoints.

Whether XL PE uses its positions is a question of the positions it is given, so a study can
name position sets (``--positions NAME=DATA_BIN``: the same text with other reorder positions,
e.g. oracle, preorderer or monotone ones). ``MODEL@NAME`` trains and tests an XL PE model on
set NAME (e.g. ``xlpe-inxl@monotone``, the control that never sees a reordering), and
``--test-positions NAME ...`` also decodes every XL PE run with the test positions of each
named set, reported as rows ``MODEL [test: NAME]`` of the same checkpoints; with sets named
``oracle`` and ``monotone`` the report gives the share of the oracle's gain over monotone
positions that the row's own test positions (e.g. the preorderer's) deliver, and those of every
other set it was decoded with.

A row can carry its own fairseq-train options (``--variant NAME=MODEL OPTIONS``, e.g.
``dpe-lambda0=dpe --order-lambda 0``), so settings of one model are rows of one report against
one baseline. DPE trains on the data-bin's order targets, or on a position set's
(``dpe@skip``); the report shows, per DPE row, whether its network learned the order
(``order_diagnostics`` of the criterion, read from the runs' logs at the last update).

Runs live in ``WORK/runs/MODEL/seedS``. A finished run (``result.json``) is not trained again;
an interrupted one resumes from its ``checkpoint_last.pt`` (fairseq-train's own resume). A
work folder remembers its settings and refuses a rerun with other ones. One command at a time
works in a work folder (its lock, ``WORK/.xlpe-lock``): the same command again while a study
trains tells each run's progress and refuses, naming the running one. Each result records the
options its checkpoint was trained with, defaults included (``options`` in ``report.json``), and
a row whose seeds differ in any is refused: a code default changed between them, which the
commands do not show. Progress lines give the
ETA from the mean duration of the runs trained so far. ``--jobs N`` trains N runs at once
(on a CPU, give each ``OMP_NUM_THREADS`` = cores / N), each on GPUs of its own where CUDA shows
several (``--gpus-per-run``). ``--launcher slurm`` submits each run as a SLURM job instead; the
same command again tells the runs' states and writes the report once all are done.

The modules, one idea each: ``profiles`` (settings and model flags), ``plan`` (rows, position
sets, commands, the work folder's settings), ``runs`` (training, resuming, decoding, SIGTERM),
``devices`` (a node's GPUs among concurrent runs), ``slurm`` (runs as SLURM jobs), ``logs``
(what fairseq-train's log tells), ``statistics`` (bootstrap, oracle-gain shares), ``report``
(Markdown, JSON, hypotheses, curves) and ``cli`` (the parser and ``main``).
"""
from .cli import build_parser, main
from .logs import order_diagnostics, validation_curve
from .plan import Study
from .profiles import MODEL_NAMES, PROFILES, model_flags, profile_settings
from .report import markdown_report, oracle_gain_shares_text, order_diagnostics_text
from .runs import row_options, trained_options
from .statistics import (
    across_seeds,
    oracle_gain_share,
    oracle_gain_shares,
    per_seed_scores,
    seed_averaged,
    seed_bootstrap,
    verdict,
)
