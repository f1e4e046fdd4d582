"""The workflow commands: preparation, training and evaluation as the examples/ and data_prep/
shell scripts run them, built on ``xlpe_fairseq.io`` (errors, outputs, provenance, locks).

- ``evaluate``: ``xlpe-evaluate`` (examples/evaluate.sh): a trained model scored the way its
  paper did;
- ``schedules``: the models and schedules of examples/train_common.sh, as they read them.
"""
