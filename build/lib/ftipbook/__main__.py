"""``python -m ftipbook ...`` is the command line of :mod:`ftipbook.cli`."""
import sys

from ftipbook.cli import main

sys.exit(main())
