"""`python -m copilot` runs the `cannpilot` command."""

import sys

from copilot.cli import main

if __name__ == "__main__":
    sys.exit(main())
