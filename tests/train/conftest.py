"""Every training test runs on one CPU thread (tests.local_runs.one_thread); helpers are in tests.train.helpers."""
from tests.local_runs import one_thread  # noqa: F401
