"""`labkit grade`: the command line, and the backend it grades with (`batch.run_local`, or the Dask
cluster of `--cluster`, `cluster.run_on_cluster`)."""
from __future__ import annotations

import sys

from .batch import grade
from .options import GradeError, parse


def main(argv: list[str] | None = None) -> int:
    try:
        opts = parse(argv)
        if opts.cluster:
            from .cluster import run_on_cluster

            return grade(opts, run_on_cluster)
        return grade(opts)
    except GradeError as e:
        print(f"labkit grade: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nlabkit grade: interrupted; finished submissions are saved, re-run to resume.", file=sys.stderr)
        return 130
