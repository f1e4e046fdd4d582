"""Example budgets of the fuzz suite (see test_fuzz_commands.py).

CI runs a fixed, derandomized budget per test; ``XLPE_FUZZ_EXAMPLES=N`` runs N random
examples per test instead (e.g. 2000 for a long run before a release).
"""
import os

from hypothesis import HealthCheck, settings

LONG_RUN = int(os.environ.get("XLPE_FUZZ_EXAMPLES", "0"))


def fuzz_settings(ci_examples):
    """Hypothesis settings: ``ci_examples`` examples, the same ones every run, unless
    XLPE_FUZZ_EXAMPLES asks for a longer random run. No example database is written."""
    return settings(
        max_examples=LONG_RUN or ci_examples,
        derandomize=not LONG_RUN,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
