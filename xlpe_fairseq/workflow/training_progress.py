"""The progress of a training, from fairseq-train's report, on stderr: a line when training
begins (after fairseq's start-up: loading the data, building the model), then at each of its
log lines the update reached, the rate since training began and about how long is left
("update N/M, X updates/s, about T left"); and, when the training stops before its end, what
was saved and the command that resumes it."""
import re
import sys
import time

UPDATE = re.compile(r"\bnum_updates[ =]([0-9]+)")
# fairseq's checkpoint_utils and trainer: "Saved checkpoint ckpt/checkpoint_1_20.pt (epoch 1 @
# 20 updates, score 9.1) (writing took ...)", "Loaded checkpoint ckpt/checkpoint_last.pt
# (epoch 3 @ 60 updates)"
SAVED = re.compile(r"\bSaved checkpoint (.+) \(epoch [0-9]+ @ ([0-9]+) updates")
LOADED = re.compile(r"\bLoaded checkpoint (.+) \(epoch [0-9]+ @ ([0-9]+) updates\)")
# fairseq_cli/train.py, once the data is loaded and the model built, at each epoch
BEGIN = re.compile(r"\bbegin training epoch [0-9]+")
SIGNALS = {130: "Ctrl-C", 143: "SIGTERM", 129: "SIGHUP"}


def saved_checkpoint(line):
    """``(path, update)`` of the checkpoint a line of fairseq's report says it saved, or
    None."""
    found = SAVED.search(line)
    return (found.group(1), int(found.group(2))) if found else None


class Progress:
    """The update fairseq's log lines say it reached, the rate since training began and the
    time left at that rate, on stderr; the last checkpoint saved (or resumed from)."""

    def __init__(self, max_update, name):
        self.max_update, self.name = max_update, name
        self.started = time.monotonic()
        self.origin = None  # (update, time) where the updates of this run began
        self.last_update = None
        self.saved = None  # (path, update) of the newest checkpoint on disk
        self.resumed = None

    def say(self, text):
        print(f"{self.name}: {text}", file=sys.stderr)

    def read(self, line):
        loaded = LOADED.search(line)
        if loaded:
            self.saved = self.resumed = (loaded.group(1), int(loaded.group(2)))
            return
        saved = saved_checkpoint(line)
        if saved:
            self.saved = saved
            return
        if self.origin is None and BEGIN.search(line):
            update = self.resumed[1] if self.resumed else 0
            self.origin = (update, time.monotonic())
            how = f"resumes from {self.resumed[0]}" if self.resumed else "begins"
            self.say(f"update {update}/{self.max_update}: training {how}, after "
                     f"{duration(self.origin[1] - self.started)} of start-up")
            return
        found = UPDATE.search(line)
        if not found or int(found.group(1)) == self.last_update:
            return
        update, now = int(found.group(1)), time.monotonic()
        self.last_update = update
        first_update, start = self.origin or (update, now)
        if self.origin is None:
            self.origin = (update, now)
        rate = (update - first_update) / max(now - start, 1e-9)
        if rate <= 0:
            self.say(f"update {update}/{self.max_update}")
            return
        left = max(self.max_update - update, 0) / rate
        self.say(f"update {update}/{self.max_update}, {rate:.2f} updates/s, about "
                 f"{duration(left)} left")

    def stopped(self, status, last_checkpoint, resume):
        """Say what a training that ended before its last update (exit ``status``: a
        signal's 128 + N, or fairseq-train's failure) saved in ``last_checkpoint``
        (SAVE_DIR/checkpoint_last.pt), and ``resume``, the command that goes on from it."""
        why = SIGNALS.get(status, f"fairseq-train's exit status {status}")
        reached = (f" at update {self.last_update}/{self.max_update}"
                   if self.last_update is not None else "")
        if not self.saved:
            self.say(f"stopped by {why}{reached}, before its first checkpoint: nothing saved; "
                     f"the same command starts again: {resume}")
            return
        update = self.saved[1]
        lost = (f" (the {self.last_update - update} updates since are lost)"
                if self.last_update is not None and self.last_update > update else "")
        self.say(f"stopped by {why}{reached}; saved: update {update} in {last_checkpoint}"
                 f"{lost}; resume: {resume}")


def duration(seconds):
    """Seconds in words: 40 s, 12 min, 3 h 05 min."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{round(seconds / 60)} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
