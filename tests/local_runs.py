"""Setup shared by the tests that train tiny models or launch processes (tests/train, test_cli, test_zoo).

Import :func:`one_thread` into a test module or a ``conftest.py`` to make it apply there
(``from tests.local_runs import one_thread  # noqa: F401``).
"""
from __future__ import annotations

import socket

import pytest
import torch


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny models train fastest, and reproducibly, on one CPU thread (the machine is shared)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def free_port() -> int:
    """A local TCP port that was free a moment ago, for a process group's rendezvous."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
