"""fairseq's batch-prefetch thread must not abort the process when Python exits mid-collate."""
import os
import subprocess
import sys
import textwrap

# A process that takes one batch from the task's batch iterator and exits while fairseq's
# prefetch thread collates the next ones with torch ops that release the GIL: the state
# fairseq-train leaves behind when it stops in the middle of an epoch. Without the stop at
# exit, CPython ends that thread during finalization and the process aborts (exit 134) in
# most runs.
EXIT_MID_COLLATE = textwrap.dedent("""
    import atexit, sys, threading
    import torch
    from fairseq.data import Dictionary, FairseqDataset
    from fairseq.data.iterators import BackgroundConsumer
    from xlpe_fairseq.tasks.translation_reorder import (
        TranslationReorderConfig, TranslationReorderTask)

    collating = threading.Event()

    class SlowToCollate(FairseqDataset):
        def __getitem__(self, index):
            return index
        def __len__(self):
            return 64
        def num_tokens(self, index):
            return 1
        def size(self, index):
            return 1
        def collater(self, samples):
            collating.set()
            x = torch.rand(48, 48)
            for _ in range(500):
                x = torch.tanh(x @ x)
            return x

    def consumers():
        return [t for t in threading.enumerate()
                if isinstance(t, BackgroundConsumer) and t.is_alive()]

    # atexit runs last-registered first: this runs after the task's hook
    atexit.register(lambda: print("prefetch threads alive at finalization:", len(consumers())))
    task = TranslationReorderTask(TranslationReorderConfig(), Dictionary(), Dictionary())
    atexit.register(lambda: print("prefetch threads alive at exit:", len(consumers())))
    batches = task.get_batch_iterator(SlowToCollate(), max_sentences=1, data_buffer_size=20)
    next(batches.next_epoch_itr(shuffle=False))
    collating.clear()
    collating.wait()
    sys.stdout.flush()
""")


def test_exit_while_prefetch_thread_collates_stops_it_and_exits_0():
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    result = subprocess.run([sys.executable, "-c", EXIT_MID_COLLATE], capture_output=True,
                            text=True, env=env, timeout=300)
    assert result.returncode == 0, (
        f"exit status {result.returncode} with a prefetch thread mid-collate at exit:\n"
        f"{result.stderr[-2000:]}"
    )
    assert "prefetch threads alive at exit: 1" in result.stdout, (
        f"the test must exit while the prefetch thread collates:\n{result.stdout}"
    )
    assert "prefetch threads alive at finalization: 0" in result.stdout, (
        f"the task's exit hook must stop and join the prefetch thread:\n{result.stdout}"
    )
