"""The workflow commands: preparation, training and evaluation as the examples/ and data_prep/
shell scripts run them, built on ``xlpe_fairseq.io`` (errors, outputs, provenance, locks).

- ``prepare``: ``xlpe-prepare`` (data_prep/prepare-corpus.sh): a corpus from raw text to the
  data-bins, every step a function called in its process; ``pipeline``: its corpus steps
  and OUT's layout; ``preorderer_steps``: its preorderer's steps, ``preorderer_members``:
  the members it trains side by side, each in a process of its own; ``steps``: the step
  runner (skip records, timed and measured steps, a killed run's temporaries removed);
  ``bible_recipe``: data_prep/prepare-bible-he-en.sh, the demo's corpus downloaded, then
  prepared by xlpe-prepare's steps;
- ``evaluate``: ``xlpe-evaluate`` (examples/evaluate.sh): a trained model scored the way its
  paper did;
- ``train``: ``xlpe-train`` (examples/train.sh, examples/train-*.sh): one model trained on a
  prepared corpus with its paper's schedule; ``dataset_recipes``: the presets of the
  examples/train-*.sh scripts; ``sbatch_script``: its ``--sbatch`` script for SLURM;
  ``training_progress``: its progress line;
- ``fairseq_commands``: the fairseq-train and fairseq-generate commands and their runs, which
  xlpe-train, xlpe-evaluate and ``two_pass`` (examples/two_pass.sh, the two-pass baseline)
  share;
- ``schedules``: the schedules training and evaluation share (the models are
  ``xlpe_fairseq.model_registry``'s).
"""
