"""Seeding, device choice and an environment summary shared by chapters and scripts."""
from __future__ import annotations

import os
import platform
import random
import warnings
from pathlib import Path

import numpy as np
import torch

#: Where the book's sources live; the Colab setup cell of every chapter installs from here.
#: Keep in step with ``repository.url`` in ``_config.yml`` (a test checks both).
REPOSITORY_URL = "https://github.com/ftipbook/ftipbook"
#: The website built from the repository (``_config.yml``'s ``html.baseurl``); reader notebooks link to it.
SITE_URL = "https://ftipbook.github.io/ftipbook"

#: Name of the environment variable that picks the device (``cpu``, ``cuda``, ``cuda:N``, ``mps`` or ``auto``).
DEVICE_ENV = "FTIPBOOK_DEVICE"

_KNOWN_DEVICE_TYPES = ("cpu", "cuda", "mps")


def seed_everything(seed: int) -> torch.Generator:
    """Seed Python, NumPy and PyTorch (CPU and CUDA); return a generator seeded the same way, on the
    default device (the CPU unless ``torch.set_default_device`` chose another), so that draws such as
    ``torch.randn(..., generator=gen)`` also run where tensors are created by default."""
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    return torch.Generator(device=torch.get_default_device()).manual_seed(seed)


def _available(device: torch.device) -> bool:
    if device.type == "cpu":
        return True
    if device.type == "cuda":
        return torch.cuda.is_available() and (device.index is None or device.index < torch.cuda.device_count())
    return device.type == "mps" and torch.backends.mps.is_available()


def get_device(prefer: str | None = None) -> torch.device:
    """Choose the compute device.

    ``prefer`` (or, when it is ``None``, the ``FTIPBOOK_DEVICE`` environment variable) names a
    device; ``auto`` or nothing picks CUDA, then MPS, then CPU. A named device that is not
    present falls back to CPU with a warning, so a chapter written on a GPU still runs anywhere.
    """
    choice = (prefer if prefer is not None else os.environ.get(DEVICE_ENV, "auto")).strip().lower()
    if choice in ("", "auto"):
        for candidate in ("cuda", "mps"):
            if _available(torch.device(candidate)):
                return torch.device(candidate)
        return torch.device("cpu")
    try:
        device = torch.device(choice)
    except RuntimeError as err:
        raise ValueError(f"unknown device {choice!r}; use auto, cpu, cuda, cuda:N or mps") from err
    if device.type not in _KNOWN_DEVICE_TYPES:
        raise ValueError(f"unsupported device type {device.type!r}; use auto, cpu, cuda, cuda:N or mps")
    if not _available(device):
        warnings.warn(f"device {choice!r} is not available here; falling back to cpu", RuntimeWarning, stacklevel=2)
        return torch.device("cpu")
    return device


def environment_summary() -> str:
    """One line naming the library, PyTorch and the device that produced a chapter's outputs."""
    from ftipbook import __version__

    return f"ftipbook {__version__}, torch {torch.__version__.split('+')[0]}, device {get_device().type}"


def cpu_kind() -> dict[str, str]:
    """The CPU a float32 result depends on: architecture, model name and the vector ISA PyTorch uses.

    Byte-identical float32 training needs the same kind (and the same PyTorch build): other
    instruction sets and BLAS paths round differently (see ``scripts/build_zoo.py --check``).
    """
    model = platform.processor() or "unknown"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {"machine": platform.machine(), "model": model,
            "capability": torch.backends.cpu.get_cpu_capability()}

