"""`python -m labkit.grading ...` is `labkit grade ...`."""
import sys

from .batch import main

sys.exit(main(sys.argv[1:]))
