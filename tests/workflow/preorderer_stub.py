"""Stand-ins for the preorderer's training (``train_files``) that the preorderer's steps can
run in a process of their own, where they are imported by name."""
import os
import sys

from xlpe_fairseq.io import InputError


def train_stub(save, seed, **settings):
    """Says something, then saves the id of the process it ran in."""
    print(f"epoch 1: valid tau 0.5 (seed {seed})", file=sys.stderr, flush=True)
    with open(save, "w") as stream:
        stream.write(f"{os.getpid()}\n")


def failing_stub(save, seed, **settings):
    """Refuses seed 2's data as the training refuses bad input; trains the others."""
    if seed == 2:
        raise InputError(f"{settings['source']}: no sentence to train on")
    train_stub(save, seed, **settings)
