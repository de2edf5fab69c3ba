"""The one guard against a learner's model naming a file: no tensor may keep its data outside the model.

An ONNX tensor can say "my bytes are in file F at offset O" (external data). ONNX Runtime, the onnx
checker, shape inference, `numpy_helper.to_array` and the reference evaluator all open F, relative to
the working folder for a model given as bytes: a learner's model would read whatever file the
process that judges it can read, and the judge's messages would print it back. So every learner's
model goes through `refuse_external_data` before any of them sees its bytes (`checks.run_judge`,
`checks.load_onnx`, `runtime.ort_session`). It looks at every tensor anywhere in the model:
initializers, sparse initializers, node attributes (`Constant`, `ConstantOfShape`...), subgraphs at
any depth (`If`, `Loop`, `Scan`), functions and training information.
"""
from __future__ import annotations

from typing import Any


class ExternalDataError(ValueError):
    """A model keeps a tensor's data in another file (the message says which, in one line)."""


def external_tensors(model: Any) -> list[tuple[str, str]]:
    """(tensor name, file it names) of every tensor anywhere in `model` (a ModelProto or any ONNX
    message) whose data is not inside the model itself."""
    import onnx
    from google.protobuf.message import Message

    found: list[tuple[str, str]] = []
    stack = [model]
    while stack:  # every message field at any depth, so no placement is missed
        msg = stack.pop()
        if isinstance(msg, onnx.TensorProto) and (msg.data_location != onnx.TensorProto.DEFAULT
                                                  or len(msg.external_data)):
            where = next((e.value for e in msg.external_data if e.key == "location"), "")
            found.append((msg.name, where))
        for field, value in msg.ListFields():
            if field.message_type is None:
                continue
            if isinstance(value, Message):
                stack.append(value)
            else:  # a repeated field of messages
                stack.extend(value)
    return found


def refuse_external_data(model: Any) -> None:
    """Raise ExternalDataError when `model` (a ModelProto, or the bytes of one) names another file
    for any tensor's data. Bytes that are not a model pass: the caller says so in its own words."""
    import onnx

    if isinstance(model, (bytes, bytearray, memoryview)):
        proto = onnx.ModelProto()
        try:
            proto.ParseFromString(bytes(model))
        except Exception:
            return
        model = proto
    found = external_tensors(model)
    if found:
        name, where = found[0]
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise ExternalDataError(
            f"tensor {name!r}{more} keeps its data in another file ({where or 'no location'!r}), which the "
            "checker never opens; expected a model with every tensor inside it")
