"""Feedback that teaches (issue 36): the texts that tell HOW to fix an answer, which belong in the hint,
never in a failure message. tests/test_corpus.py scans every message its wrong answers get at every
seed they run at; tests/test_feedback.py proves the patterns catch the messages reviewers found."""
from __future__ import annotations

import re

#: texts that tell HOW to fix (each was once printed by a judge): an API, an argument, a line of code
FIXES = [
    r"options=\{id\(", r"pass dynamic_shapes", r"torch\.export\.Dim", r"per_channel=True", r"quant_format=",
    r"QuantFormat\.", r"after model\.eval\(\)", r"program\.save\(", r"external_data=False", r"dynamic_shapes=",
    r"dynamic_axes", r"with np\.round", r"transpose\(2, 0, 1\)", r"\.astype\(np\.", r"use quantize_static",
    r"optimized_model_filepath", r"commute=True", r"fix_output_shapes", r"--optimization_style",
    r"convert it with", r"run_with_iobinding\(binding\)", r"copy it before", r"concatenate the batches",
    r"FloatTensorType\(", r"model_proto", r"args\['op_name'\]", r"take argmax", r"subtract each row",
    r"compute on copies", r"use int\(", r"is_symmetric", r"version_converter rewrites", r"onnx\.load\(",
    r"build Shrinker", r"multiply by sign", r"keep only events", r"add up all calls", r"sum 'dur'",
    r"round\(x / s\) \+ z", r"scale = \(rmax", r"rmin = min\(", r"pad w with", r"split the images into",
    # a clause that starts with an order naming code: "...: pass x=...", "; use foo(...)", "— call bar()"
    r"[:;—] (?:pass|use|call|set|export with|convert with|save with|run it with) \S*[(=.]",
]
_FIX = re.compile("|".join(FIXES))


def fixes_in(text: str) -> list[str]:
    """The fix patterns `text` contains."""
    return [m.group(0) for m in _FIX.finditer(text)]
