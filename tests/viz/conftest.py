"""Every figure test draws off-screen (Agg) and closes its figures afterwards; read-back helpers are in
tests.viz.figure_checks."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")
