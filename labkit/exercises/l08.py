"""Lesson 08 exercises, learner side: what each exercise is (no answers, no test inputs).

The judges, references, test inputs and quiz keys are in `labkit_judges/l08.py`, which a graded
kernel cannot import (docs/authoring.md)."""
from __future__ import annotations

from ..checks.registry import Question, declare, quiz

declare("08.rgba_alpha", title="Read the ink from the canvas's RGBA bytes", points=2, kind="function",
        hint=[
            'ImageData.data is one flat array of RGBA bytes, pixel after pixel, row by row; alpha is the 4th byte of each pixel.',
            'np.asarray, reshape to (height, width, 4) and index the last axis.',
        ])

declare("08.threads", title="How many threads will ONNX Runtime Web use?", points=3, kind="function",
        hint=[
            'Two questions in turn: is numThreads a positive integer (if not, the default applies, and it depends on crossOriginIsolated)? Can this page share memory between threads at all?',
            'Read the source printed above the exercise: isinstance checks, min, math.ceil.',
        ])

declare("08.web_model", title="Prepare the model for the web", points=3, kind="onnx",
        hint=[
            'A web page fetches one URL: every weight must be inside the file, and nothing the exporter wrote about your machine (doc strings, metadata) may be left on the model, the graph or any node.',
            'onnx.load (it reads the external data in), the doc_string and metadata_props fields, ClearField, onnx.save.',
        ])

_QUESTIONS = [
    ("q1", "Your page sets ort.env.wasm.numThreads = 4, but the server sends no COOP/COEP headers. What happens?",
     {"a": "The model fails to load with a SharedArrayBuffer error",
      "b": "ONNX Runtime Web warns and runs on one thread: without cross-origin isolation there is no SharedArrayBuffer",
      "c": "It runs on 4 threads; the headers only matter for WebGPU"}),
    ("q2", "On a first visit to this lesson's page, which file is most of the download?",
     {"a": "The WebAssembly build of ONNX Runtime (the .wasm file)",
      "b": "The model: that is why int8 matters most for a web page",
      "c": "The JavaScript of the page and of onnxruntime-web"}),
    ("q3", "fp32 in the browser and in Python differ by about 1e-7, not 0. Why?",
     {"a": "The browser computes in float16",
      "b": "A bug in ONNX Runtime Web: the outputs must be bit-identical",
      "c": "Different kernels (WebAssembly SIMD vs your CPU's native code) add the floats in another order"}),
    ("q4", "What should the browser's outputs of the int8 model be compared with?",
     {"a": "ONNX Runtime in Python on the same int8 file: same predicted digits, probabilities very close",
      "b": "The fp32 PyTorch model, to 1e-4",
      "c": "Nothing: int8 results are random"}),
    ("q5", "Why is the division by 16 inside the model instead of in app.js?",
     {"a": "ONNX Runtime Web cannot take uint8 inputs",
      "b": "So that the page and Python cannot disagree about preprocessing: the same file does it everywhere",
      "c": "JavaScript cannot divide integers exactly"}),
    ("q6", "When is it worth trying the WebGPU execution provider (executionProviders: ['webgpu', 'wasm'])?",
     {"a": "Always: a GPU is faster than WebAssembly for any model",
      "b": "Never: WebGPU only works in Node.js",
      "c": "For bigger models where the GPU's work outweighs the cost of moving data to it; 'wasm' stays as the fallback"}),
]

quiz("08.quiz", title="Models in web pages", points=3, questions=[
    Question(key, prompt, options) for key, prompt, options in _QUESTIONS])
