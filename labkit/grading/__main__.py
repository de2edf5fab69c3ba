"""`python -m labkit.grading ...` is `labkit grade ...`."""
import sys

from .command import main

sys.exit(main(sys.argv[1:]))
