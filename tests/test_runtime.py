"""Seeding and device choice (ftipbook.runtime)."""
import pytest
import torch

import ftipbook
from ftipbook.runtime import DEVICE_ENV, get_device, seed_everything


def test_seed_everything_reproduces_draws():
    seed_everything(3)
    a = torch.randn(4)
    g = seed_everything(3)
    assert torch.equal(a, torch.randn(4))
    assert torch.equal(torch.randn(2, generator=g), torch.randn(2, generator=torch.Generator().manual_seed(3)))


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True])
def test_seed_everything_rejects_bad_seeds(bad):
    with pytest.raises(ValueError, match="non-negative int"):
        seed_everything(bad)


def test_device_follows_environment(monkeypatch):
    monkeypatch.setenv(DEVICE_ENV, "cpu")
    assert get_device() == torch.device("cpu")
    monkeypatch.setenv(DEVICE_ENV, "auto")
    assert get_device().type in {"cpu", "cuda", "mps"}
    monkeypatch.setenv(DEVICE_ENV, "tpu")
    with pytest.raises(ValueError, match="device"):
        get_device()


def test_unavailable_device_falls_back_to_cpu(monkeypatch):
    if torch.cuda.is_available():
        pytest.skip("CUDA present: nothing to fall back from")
    with pytest.warns(RuntimeWarning, match="falling back to cpu"):
        assert get_device("cuda") == torch.device("cpu")


def test_environment_summary_names_versions():
    line = ftipbook.environment_summary()
    assert line.startswith(f"ftipbook {ftipbook.__version__}, torch ")


def test_cpu_kind_names_the_architecture_model_and_vector_isa():
    import platform

    import torch

    from ftipbook.runtime import cpu_kind

    kind = cpu_kind()
    assert kind["machine"] == platform.machine() and kind["model"]
    assert kind["capability"] == torch.backends.cpu.get_cpu_capability()

