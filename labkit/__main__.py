"""`python -m labkit ...` is the `labkit` command."""
from .cli import main

raise SystemExit(main())
