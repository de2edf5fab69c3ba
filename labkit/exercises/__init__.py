"""Exercise definitions, one module per lesson (`lNN.py`), loaded on first use."""
