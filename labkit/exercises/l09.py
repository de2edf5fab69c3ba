"""Lesson 09 exercises, learner side: what each exercise is (no answers, no test inputs), and the
harnesses the checks hand to a learner's function (a model to export, a decoder session with a cache).

The judges, references, test inputs and quiz keys are in `labkit_judges/l09.py`, which a graded
kernel cannot import (docs/authoring.md)."""
from __future__ import annotations

import numpy as np

from ..checks.registry import Question, declare, quiz

declare("09.export_dynamic", title="Export a transformer with dynamic batch and sequence length", points=3,
        kind="function",
        hint=["The exporter fixes every dimension to the size of the example you give it unless you tell it "
              "which dimensions may vary: here the batch and the sequence length (up to the model's context).",
              "torch.onnx.export(..., dynamo=True, dynamic_shapes=...) with torch.export.Dim objects; the "
              "returned ONNXProgram has a model_proto."])

declare("09.generate", title="Greedy generation with the key/value cache", points=4, kind="function",
        hint=["Run the prompt once with an empty past; every later run feeds only the newest token together "
              "with the keys and values the previous run returned. Greedy picks the most likely next token.",
              "The session's inputs and outputs are named (session.get_inputs()); an empty past has a length-0 "
              "past dimension (np.zeros with that shape); np.argmax over the last position's logits."])

declare("09.perplexity", title="Perplexity from logits", points=2, kind="function",
        hint=["Perplexity is the exponential of the mean negative log-likelihood of the right next tokens; "
              "exponentials of large logits overflow float32 unless each row is shifted first.",
              "A log-softmax with the log-sum-exp trick (subtract each row's maximum), then index the target "
              "column of every row with NumPy's integer-array indexing."])

quiz("09.quiz", title="Transformers in ONNX", points=5, questions=[
    Question("q1", "You exported a language model with dynamo=True and no dynamic_shapes, using a 16-token example. "
                   "What happens when ONNX Runtime gets a 20-token prompt?",
             {"a": "It runs: ONNX shapes are always dynamic",
              "b": "It fails: the input was fixed to 16 tokens when the model was exported",
              "c": "It silently crops the prompt to 16 tokens"}),
    Question("q2", "Without a key/value cache, what does generating token n cost, for a sequence of n tokens?",
             {"a": "The whole forward pass over all n tokens again: work growing with n per token (n² in all)",
              "b": "The same as with a cache: attention only ever looks at the last token",
              "c": "Nothing more: ONNX Runtime caches the previous run's results on its own"}),
    Question("q3", "In the decoder graph, what are the shapes of present_keys after a run with a past of length p "
                   "and s new tokens?",
             {"a": "(n_layer, batch, n_head, s, head_dim): only the new tokens",
              "b": "(n_layer, batch, n_head, p, head_dim): the same as the past",
              "c": "(n_layer, batch, n_head, p + s, head_dim): the past with the new keys appended"}),
    Question("q4", "Weight-only int4 (MatMulNBits) on a CPU: what does it mainly save?",
             {"a": "The size of the weights (several times smaller than float32, scales included) and the memory traffic of reading them",
              "b": "All the arithmetic: activations become int4 too",
              "c": "Nothing: int4 is only a storage format that is unpacked to float32 at load time"}),
    Question("q5", "You convert the weights to float16 and run on an x86 laptop CPU. What do you expect?",
             {"a": "Twice the speed: float16 halves the arithmetic",
              "b": "A file about half the size; the speed usually does not improve, since most CPU kernels compute "
                   "in float32 and Cast nodes convert back and forth",
              "c": "A model four times smaller, like int8"}),
    Question("q6", "onnxscript's ORT fusions found no attention to fuse in a graph exported from hand-written "
                   "attention (MatMul, Mul, Where, Softmax, MatMul). Why?",
             {"a": "ONNX Runtime cannot fuse attention on a CPU",
              "b": "Attention only fuses after int4 quantization",
              "c": "Fusion rewriters match specific node patterns; writing attention with scaled_dot_product_attention "
                   "exports the pattern they know"}),
])


# ---------------------------------------------------------------- harnesses (test material handed to the learner)


def random_gpt(seed: int):
    """A small TinyGPT with random weights drawn from `seed`, returning only logits: `model(ids)` with ids
    (batch, seq) int64 gives (batch, seq, vocab). A model the learner has never seen (test input of
    09.export_dynamic)."""
    from ..transformer import LogitsOnly, gpt_from_state, random_state

    config, state = random_state(int(seed))
    return LogitsOnly(gpt_from_state(config, state))


_DECODER_BYTES: bytes | None = None


def decoder_bytes() -> bytes:
    """The course transformer exported as a decoder with a cache (inputs ids, past_keys, past_values; outputs
    logits, present_keys, present_values; batch, sequence and past length dynamic), as ONNX bytes.
    Exported once per process."""
    global _DECODER_BYTES
    if _DECODER_BYTES is None:
        import torch

        from ..quiet import quiet
        from ..transformer import trained_gpt

        model = trained_gpt()
        ids = torch.zeros((1, 3), dtype=torch.int64)
        with torch.no_grad():
            _, keys, values = model(torch.zeros((1, 4), dtype=torch.int64))
        batch, seq, past = torch.export.Dim("batch"), torch.export.Dim("seq"), torch.export.Dim("past")
        with quiet():
            program = torch.onnx.export(
                model, (ids, keys, values), dynamo=True,
                dynamic_shapes={"ids": {0: batch, 1: seq}, "past_keys": {1: batch, 3: past},
                                "past_values": {1: batch, 3: past}},
                input_names=["ids", "past_keys", "past_values"],
                output_names=["logits", "present_keys", "present_values"])
        _DECODER_BYTES = program.model_proto.SerializeToString()
    return _DECODER_BYTES


def cache_decoder():
    """A test input of 09.generate: an ONNX Runtime session of the course decoder that, like a real cached
    generator, runs the prompt with an empty past once and then only new tokens with a past."""
    import onnxruntime as ort

    class CacheDecoder(ort.InferenceSession):
        """An InferenceSession of the course decoder that refuses to start over: only its first run() may
        have an empty past (no cache), every later run must pass the past keys and values."""

        def __init__(self):
            opts = ort.SessionOptions()
            opts.log_severity_level = 4  # a learner's bad feed comes back as the exception's message, not a log
            opts.intra_op_num_threads = 1
            super().__init__(decoder_bytes(), opts, providers=["CPUExecutionProvider"])
            self.runs = 0

        def run(self, output_names, input_feed, run_options=None):
            past = dict(input_feed).get("past_keys")
            if self.runs and past is not None and np.ndim(past) == 5 and np.shape(past)[3] == 0:
                raise RuntimeError("this decoder already ran the prompt: feed only the new token(s) with the "
                                   "present keys and values of the previous run as past_keys and past_values "
                                   "(starting over with an empty past recomputes everything: no cache)")
            self.runs += 1
            return super().run(output_names, input_feed, run_options)

        def __deepcopy__(self, memo):  # the check copies its inputs before each call
            return type(self)()

    return CacheDecoder()
