"""What a bench run is doing, on stderr: one line per step and one timing line per phase.

Plain lines rather than a redrawn bar: a device run's log keeps every line, so the last one
names the step that was running when a run stopped, and the phase lines say where the time went.

    with phase("time the table", phases):
        steps = Steps(total=12, desc="table")
        for ...:
            steps.step("fp32 1024x1024x1024 cuda tiled T=16")
"""
import sys
import time
from contextlib import contextmanager


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class Steps:
    """Counts steps and prints "[desc i/total, elapsed s] what" to stderr as each starts."""

    def __init__(self, total: int, desc: str):
        self.total, self.desc, self.done = total, desc, 0
        self.start = time.perf_counter()

    def step(self, what: str, count: int = 1) -> None:
        """Announces the step about to run; count is how many of total it stands for."""
        self.done += count
        _say(f"[{self.desc} {self.done}/{self.total}, {time.perf_counter() - self.start:.1f} s] {what}")


@contextmanager
def phase(name: str, record: dict | None = None):
    """Times the block: prints "phase NAME: S s" to stderr when it ends (also when it raises), and
    stores the seconds under record[name] where a dict is given (run metadata keeps them)."""
    _say(f"phase {name} ...")
    start = time.perf_counter()
    try:
        yield
    finally:
        seconds = time.perf_counter() - start
        if record is not None:
            record[name] = round(seconds, 1)
        _say(f"phase {name}: {seconds:.1f} s")
