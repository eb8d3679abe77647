"""ftipbook: the library behind the executable textbook on the ftip note.

The decoder, optimizers, data pipeline, evaluation and comparison tools live in
subpackages; this top level re-exports the runtime helpers every chapter uses.
"""
from ftipbook.runtime import REPOSITORY_URL, environment_summary, get_device, seed_everything

__version__ = "0.1.0"

__all__ = ["__version__", "REPOSITORY_URL", "environment_summary", "get_device", "seed_everything"]
