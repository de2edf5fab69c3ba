"""The one helper that opens an ONNX Runtime session (judges, the Android lesson, the grader)."""
from __future__ import annotations

import os
from typing import Any


def ort_session(model: Any, *, optimize: bool = True, threads: int | None = None,
                config: dict[str, str] | None = None):
    """A quiet CPU InferenceSession on a model given as bytes, `OnnxBlob`, ModelProto or path.

    `optimize=False` runs exactly what the file says (ORT_DISABLE_ALL); `threads` sets the intra-op
    pool; `config` adds session config entries. A model given in memory (bytes, `OnnxBlob`,
    ModelProto) must hold all its data: one that names another file raises `ExternalDataError`
    (a path is the course's own file: its data is read from beside it)."""
    import onnxruntime as ort

    from .external_data import refuse_external_data
    from .plain import OnnxBlob

    if isinstance(model, OnnxBlob):
        model = model.data
    elif hasattr(model, "SerializeToString"):
        refuse_external_data(model)
        model = model.SerializeToString()
    elif isinstance(model, os.PathLike):
        model = str(model)
    if isinstance(model, (bytes, bytearray)):
        refuse_external_data(model)
    opts = ort.SessionOptions()
    opts.log_severity_level = 4  # FATAL only: a failed run raises its message; at ERROR it also prints a red log line
    if not optimize:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    if threads is not None:
        opts.intra_op_num_threads = threads
    for key, value in (config or {}).items():
        opts.add_session_config_entry(key, value)
    return ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
