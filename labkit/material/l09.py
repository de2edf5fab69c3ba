"""Lesson 09 material, learner side: what the notebook hands out and the factories a graded kernel
builds test inputs with (`plain.Make("labkit.material.l09:name", ...)`). No answers, no test inputs.

Written by hand (the notebooks import it); the generated `labkit/exercises/lNN.py`
holds only declarations."""
from __future__ import annotations

import numpy as np

__all__ = ["random_gpt", "decoder_bytes", "CACHE_CLIP", "clipped_cache_decoder_bytes", "cache_decoder"]


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


#: the check's decoder keeps its cache clipped to [-CACHE_CLIP, CACHE_CLIP] (a cache stored in a narrow range)
CACHE_CLIP = 1.0
_CLIPPED_BYTES: bytes | None = None


def clipped_cache_decoder_bytes() -> bytes:
    """The course decoder whose present keys and values come out clipped to [-CACHE_CLIP, CACHE_CLIP], as a
    server that stores its cache in a narrow range. Clipping is idempotent, so a past fed back stays as it is
    and only the new keys and values are clipped. The logits of a run with an empty past do not change;
    those of a run that reads a past do: a generation with the cache picks other tokens than one that
    reruns the whole sequence (or PyTorch's), so only using the cache gives the tokens 09.generate
    expects."""
    global _CLIPPED_BYTES
    if _CLIPPED_BYTES is None:
        import onnx
        from onnx import helper, numpy_helper

        model = onnx.load_from_string(decoder_bytes())
        graph = model.graph
        graph.initializer.extend([numpy_helper.from_array(np.array(-CACHE_CLIP, np.float32), "cache_clip_lo"),
                                  numpy_helper.from_array(np.array(CACHE_CLIP, np.float32), "cache_clip_hi")])
        for name in ("present_keys", "present_values"):
            exact = name + "_unclipped"
            for node in graph.node:
                node.output[:] = [exact if o == name else o for o in node.output]
                node.input[:] = [exact if i == name else i for i in node.input]
            graph.node.append(helper.make_node("Clip", [exact, "cache_clip_lo", "cache_clip_hi"], [name]))
        _CLIPPED_BYTES = model.SerializeToString()
    return _CLIPPED_BYTES


def cache_decoder():
    """A test input of 09.generate: an ONNX Runtime session of the course decoder with its cache clipped
    (`clipped_cache_decoder_bytes`) that, like a real cached generator, runs the prompt with an empty past
    once and then only new tokens with a past."""
    import onnxruntime as ort

    class CacheDecoder(ort.InferenceSession):
        """An InferenceSession of the course decoder that refuses to start over: only its first run() may
        have an empty past (no cache), every later run must pass the past keys and values."""

        def __init__(self):
            opts = ort.SessionOptions()
            opts.log_severity_level = 4  # a learner's bad feed comes back as the exception's message, not a log
            opts.intra_op_num_threads = 1
            super().__init__(clipped_cache_decoder_bytes(), opts, providers=["CPUExecutionProvider"])
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
