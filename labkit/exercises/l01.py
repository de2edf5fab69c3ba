"""Lesson 01 exercises, learner side: what each exercise is (no answers, no test inputs).

The judges, references, test inputs and quiz keys are in `labkit_judges/l01.py`, which a graded
kernel cannot import (docs/authoring.md)."""
from __future__ import annotations

from ..checks.registry import Question, declare, quiz

declare("01.sigmoid_model", title="Build Y = Sigmoid(X·W + B)", points=4, kind="onnx",
        hint=[
            'Three nodes in a row: a matrix product, the bias added, the sigmoid; W and B are stored weights, not inputs; declare X and Y with a symbolic (string) batch dimension.',
            'onnx.helper: make_node, make_tensor_value_info, make_graph, make_model (opset_imports, ir_version); onnx.numpy_helper.from_array turns W and B into initializers.',
        ])

declare("01.run_both", title="Run a model with onnx.reference and ONNX Runtime", points=3, kind="function",
        hint=[
            "Two engines run the same bytes: the specification's own Python interpreter and ONNX Runtime; each returns a list of outputs and you want the first.",
            "onnx.reference.ReferenceEvaluator and onnxruntime.InferenceSession (providers=['CPUExecutionProvider']); both have run(output_names, feed_dict).",
        ])

declare("01.versions", title="Read the IR version and the opset", points=2, kind="function",
        hint=[
            'The IR version belongs to the file format; the opset belongs to a domain, and the default domain is the empty string.',
            "onnx.load_from_string, then the model's ir_version field and its opset_import entries (domain, version).",
        ])

quiz("01.quiz", title="What ONNX is", points=4, questions=[
    Question("q1", "What is ONNX?",
             {"a": "A runtime that executes models fast, like ONNX Runtime",
              "b": "A file format: a graph of standard operators plus the weights, run by a separate runtime",
              "c": "A compression format that makes a trained model smaller"}),
    Question("q2", "A model imports opset 21 of the default domain. What does 21 fix?",
             {"a": "The version of the file format (which protobuf fields exist)",
              "b": "The oldest ONNX Runtime release that can load the model",
              "c": "Which version of each operator's definition the graph uses"}),
    Question("q3", "Why give the input the shape ['batch', 4] instead of [2, 4]?",
             {"a": "So the same model accepts any number of rows at run time",
              "b": "So that ONNX Runtime splits large inputs into batches for you",
              "c": "Because onnx.checker rejects a model whose shapes are all numbers"}),
    Question("q4", "An older ONNX Runtime refuses your file: 'Unsupported model IR version: 14, max supported IR version: 10'. What do you change?",
             {"a": "The opset: import an older opset of the default domain",
              "b": "The IR version: write one the runtime reads, at least onnx.helper.find_min_ir_version_for(opset_import)",
              "c": "Nothing in the model: save it without weights and load those separately"}),
    Question("q5", "PyTorch's nn.Linear(4, 3) becomes which ONNX operators?",
             {"a": "Linear, the ONNX operator with the same name",
              "b": "Dense, ONNX's fully connected operator",
              "c": "Gemm, or MatMul followed by Add: ONNX has no Linear operator"}),
    Question("q6", "You compare two engines' outputs whose values are around 1000. Which test is right?",
             {"a": "np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6): the tolerance grows with the values",
              "b": "np.abs(a - b).max() < 1e-5: a fixed absolute tolerance",
              "c": "np.array_equal(a, b): a correct model gives bit-identical outputs"}),
])
