"""The progress of a training, from fairseq-train's log lines: the update reached, the rate and
about how long is left ("update N/M, X updates/s, about T left"), on stderr."""
import re
import sys
import time


class Progress:
    """The update fairseq's log lines say it reached, the rate since the first of them, and
    the time left at that rate, on stderr."""

    def __init__(self, max_update, name):
        self.max_update, self.name = max_update, name
        self.first = None
        self.last_update = None

    def read(self, line):
        found = re.search(r"\bnum_updates[ =]([0-9]+)", line)
        if not found or int(found.group(1)) == self.last_update:
            return
        update, now = int(found.group(1)), time.monotonic()
        self.last_update = update
        if self.first is None:
            self.first = (update, now)
            print(f"{self.name}: update {update}/{self.max_update}", file=sys.stderr)
            return
        first_update, start = self.first
        rate = (update - first_update) / max(now - start, 1e-9)
        left = max(self.max_update - update, 0) / rate if rate > 0 else None
        print(f"{self.name}: update {update}/{self.max_update}, {rate:.2f} updates/s"
              + (f", about {duration(left)} left" if left is not None else ""),
              file=sys.stderr)


def duration(seconds):
    """Seconds in words: 40 s, 12 min, 3 h 05 min."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{round(seconds / 60)} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
