"""03.custom_op's check, learner side: how the translation an answer returns is used (the spec's `call=`).

The answer is `soft_threshold_onnx(x, threshold)`, an onnxscript translation of the custom operator
`lab::soft_threshold`. The check exports a model of its own that calls the same operator (registered
here under the check's own name, with the notebook's definition) with the answer in
`custom_translation_table`, at a threshold the learner has not seen. The answer never exports, so the
model that comes out is the answer's translation and nothing else: a plain PyTorch module or a graph
built by hand has no way in.
"""
import functools
from typing import Any, Callable

__all__ = ["export_translation"]

#: the notebook's example input (2 rows of 7 values); the batch is exported symbolic
EXAMPLE = ((-2.0, -1.0, -0.25, 0.0, 0.25, 1.0, 2.0), (-3.0, -0.5, -0.1, 0.0, 0.1, 0.5, 3.0))


class NotAValue(TypeError):
    """The translation returned a plain Python value instead of the graph value its op. calls give."""


@functools.lru_cache(maxsize=1)
def _check_op():
    """The check's copy of `lab::soft_threshold` (another namespace, so a notebook's own never clashes)."""
    import torch

    @torch.library.custom_op("labkit_check::soft_threshold", mutates_args=())  # needs real annotations
    def soft_threshold(x: torch.Tensor, threshold: float) -> torch.Tensor:
        return torch.where(x > threshold, x - threshold, torch.where(x < -threshold, x + threshold, 0.0))

    @soft_threshold.register_fake
    def _(x, threshold):
        return torch.empty_like(x)

    return torch.ops.labkit_check.soft_threshold.default


def export_translation(answer: Callable[..., Any], threshold: float):
    """The check's model, `soft_threshold(x, threshold)` on a batch of rows, exported with `answer` as the
    operator's translation (dynamo, symbolic batch); its `onnx.ModelProto`."""
    import torch

    from ..quiet import quiet

    import inspect

    if not callable(answer):
        raise TypeError("expected the translation function soft_threshold_onnx(x, threshold)")
    try:
        params = list(inspect.signature(answer).parameters.values())
    except (TypeError, ValueError):
        params = []
    if params and len(params) < 2 and not any(p.kind is p.VAR_POSITIONAL for p in params):
        raise TypeError(f"the function takes ({', '.join(p.name for p in params)}): a translation takes the "
                        "operator's arguments (x, threshold) and returns the result value; the check exports")
    op = _check_op()

    def translation(x, threshold: float):  # the answer, told apart from what it returns
        out = answer(x, threshold)
        if out is None or isinstance(out, (bool, int, float, str)):
            raise NotAValue(f"soft_threshold_onnx returned {out!r}: return the value the op.… calls give")
        return out

    class Shrinker(torch.nn.Module):
        def forward(self, x):
            return op(x, threshold)

    try:
        with quiet():
            program = torch.onnx.export(Shrinker().eval(), (torch.tensor(EXAMPLE),), dynamo=True,
                                        dynamic_shapes={"x": {0: "batch"}}, custom_translation_table={op: translation})
    except Exception as e:
        cause = e
        while cause is not None and not isinstance(cause, (NotImplementedError, NotAValue)):
            cause = cause.__cause__ or cause.__context__
        if cause is not None:  # the stub, or what the answer returned, under the exporter's own errors
            raise cause from None
        raise
    return program.model_proto
