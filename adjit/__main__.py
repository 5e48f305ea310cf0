"""``python -m adjit ...`` runs the command-line interface (see :mod:`adjit.cli`)."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
