"""Lesson 07 exercises, learner side: what each exercise is (no answers, no test inputs).

The judges, references, test inputs and quiz keys are in `labkit_judges/l07.py`, which a graded
kernel cannot import (docs/authoring.md)."""
from __future__ import annotations

from ..checks.registry import Question, declare, quiz

declare("07.block_counts", title="Count the ink in 4×4 blocks", points=2, kind="function",
        hint=[
            'Each output cell counts the ink in its 4×4 block: split each axis into (block index, position in the block) and sum over the positions.',
            'ndarray.reshape into four axes and .sum(axis=...) over two of them.',
        ])

declare("07.ort_file", title="Convert the fp32 model to ORT format", points=4, kind="onnx",
        hint=[
            "A phone gets an ORT-format file converted from the model whose batch is fixed to 1, with optimizations that run on any CPU (not ones saved for this machine's x86 layout).",
            'python -m onnxruntime.tools.convert_onnx_models_to_ort and its --optimization_style and --output_dir options; hand in the .ort path it writes.',
        ])

declare("07.fix_batch", title="Fix the batch dimension the checker complains about", points=3, kind="function",
        hint=[
            'The batch dimension may have a name or no name at all; fix it to 1 on the input, then let the output shapes follow; work on a copy.',
            "onnxruntime.tools.onnx_model_utils: make_dim_param_fixed, make_input_shape_fixed, fix_output_shapes; the input's type.tensor_type.shape.dim.",
        ])

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
