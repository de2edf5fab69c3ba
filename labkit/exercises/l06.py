"""Lesson 06 exercises, learner side: what each exercise is (no answers, no test inputs).

The judges, references, test inputs and quiz keys are in `labkit_judges/l06.py`, which a graded
kernel cannot import (docs/authoring.md)."""
from __future__ import annotations

from ..checks.registry import Question, declare, quiz

declare("06.quantize", title="quantize(x, scale, zero_point, qmin, qmax)", points=3, kind="function",
        hint="Divide by the scale, round with np.round (halves to even, like ONNX QuantizeLinear), add the zero"
             " point, clamp with np.clip(..., qmin, qmax), then .astype(np.int32). Numpy broadcasting handles "
             "per-channel scales.")

declare("06.dequantize", title="dequantize(q, scale, zero_point)", points=2, kind="function",
        hint="Convert first, then subtract: (q.astype(np.int32) - zero_point) * scale, returned as float32. In "
             "int8 or uint8, -128 - 10 or 0 - 128 wraps around to a wrong value.")

declare("06.choose_qparams", title="choose_qparams(x, qmin, qmax, symmetric)", points=3, kind="function",
        hint="Follow the four steps of the prompt. Common slips: a range that does not include 0, int() (which "
             "truncates) instead of np.round for the zero point, dividing by a zero scale for an all-zero "
             "tensor.")

declare("06.calibration", title="A calibration reader for static quantization", points=4, kind="onnx",
        hint="get_next() returns {input_name: a float32 batch of shape (n, 1, 8, 8)} from the training digits, "
             "then None when the data is used up. Calibrate with the same preprocessing as inference "
             "(labkit.digits() images are already in [0, 1]); call quantize_static(prepared model, output path,"
             " your reader).")

quiz("06.quiz", title="Choosing a quantization method", points=4, questions=[
    Question("q1", "Model A is a text model made mostly of large MatMul layers (tens of MB of weights), run one"
                   " sentence at a time on a server CPU, and you have no representative input data at hand. "
                   "Which method do you try first?",
             {"a": "Dynamic quantization (quantize_dynamic): int8 weights, activation scales computed at run time",
              "b": "Static quantization (quantize_static) with a calibration reader",
              "c": "No quantization: int8 only helps convolutions"}),
    Question("q2", "Model B is a small CNN classifying camera frames on a phone; you have a few hundred typical"
                   " images. Which method do you try first?",
             {"a": "Dynamic quantization: it needs no data",
              "b": "Static QDQ quantization, per-channel weights, calibrated on those images",
              "c": "Quantize only the input image to uint8"}),
    Question("q3", "Which formula maps a real value x to its quantized value q (scale s, integer zero point z)?",
             {"a": "q = round((x - z) / s)",
              "b": "q = clamp(round(x / s) + z, qmin, qmax)",
              "c": "q = round(x * s) + z"}),
    Question("q4", "What does a dynamically quantized model do at every inference that a statically quantized "
                   "one does not?",
             {"a": "It dequantizes all its weights back to float32",
              "b": "It scans each activation for its min and max to compute a scale and zero point",
              "c": "It recalibrates its weights on the input"}),
])
