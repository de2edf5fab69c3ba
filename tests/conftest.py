"""Shared pytest setup: course paths. (nbval's comparison rules are in the root conftest.py.)"""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
LESSONS = sorted((ROOT / "lessons").glob("*.ipynb"))
