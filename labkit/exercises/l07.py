"""Lesson 07 exercises, learner side: what each exercise is (no answers, no test inputs).

The judges, references, test inputs and quiz keys are in `labkit_judges/l07.py`, which a graded
kernel cannot import (docs/authoring.md)."""
from __future__ import annotations

from ..checks.registry import Question, declare, quiz

declare("07.block_counts", title="Count the ink in 4×4 blocks", points=2, kind="function",
        hint="Reshape (32, 32) to (8, 4, 8, 4): axis 0 picks the block row, axis 1 the row inside the block, axis 2 the block column, axis 3 the column inside the block. Then sum over axes 1 and 3.")

declare("07.ort_file", title="Convert the fp32 model to ORT format", points=4, kind="onnx",
        hint="python -m onnxruntime.tools.convert_onnx_models_to_ort --optimization_style Runtime --output_dir artifacts/ort_fp32 artifacts/digits_fp32_b1.onnx writes digits_fp32_b1.with_runtime_opt.ort; hand in that path.")

declare("07.fix_batch", title="Fix the batch dimension the checker complains about", points=3, kind="function",
        hint="Look at model.graph.input[0].type.tensor_type.shape.dim[0]: if it has a dim_param, make_dim_param_fixed(model.graph, that name, 1); if it has neither a value nor a name, make_input_shape_fixed(model.graph, input name, [1, 1, 8, 8]). Then fix_output_shapes(model) (all three from onnxruntime.tools.onnx_model_utils). Work on a copy and return it.")

quiz("07.quiz", title="Pick the execution provider", points=4, questions=[
    Question("q1", "Phone A runs Android 12 and its vendor ships an NNAPI driver for its NPU. Your uint8-activation model has a fixed batch and the checker reports one NNAPI partition covering every node. What do you try?",
             {"a": "NNAPI, timed against the CPU baseline on that phone", "b": "CPU only: accelerators never help", "c": "NNAPI without measuring: the checker guarantees it is faster"}),
    Question("q2", "Phone B is new and runs Android 15. Which backend do you make the default?",
             {"a": "NNAPI, because newer phones have better NNAPI drivers", "b": "None: ONNX Runtime does not support Android 15", "c": "XNNPACK (or the CPU, whichever measures faster), because NNAPI is deprecated from Android 15"}),
    Question("q3", "Phone C: your model keeps a dynamic input size you cannot fix, and the checker says NNAPI would split it into 9 small partitions. What do you ship?",
             {"a": "NNAPI: nine partitions means nine times the speed", "b": "The CPU provider (and try XNNPACK): every partition boundary copies data between NNAPI and the CPU", "c": "NNAPI with CPU fallback disabled"}),
    Question("q4", "What is required_operators.config, written by convert_onnx_models_to_ort, for?",
             {"a": "It lists the operators a reduced-size custom build of ONNX Runtime must include", "b": "ONNX Runtime reads it at run time to load the model", "c": "It lists the operators NNAPI supports"}),
    Question("q5", "quantize_static with its defaults (QInt8 activations), batch fixed to 1: the checker reports every node supported by NNAPI. What does that mean?",
             {"a": "It is true: the checker ran the model on NNAPI", "b": "Little: the checker matches operator names, not element types, and ONNX Runtime's NNAPI provider takes uint8 activations only; quantize with QUInt8", "c": "Fixing the batch converted the activations to uint8"}),
])
