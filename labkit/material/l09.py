"""Lesson 09 material, learner side: what the notebook hands out and the factories a graded kernel
builds test inputs with (`plain.Make("labkit.material.l09:name", ...)`). No answers, no test inputs.

Written by hand (the notebooks import it); the generated `labkit/exercises/lNN.py`
holds only declarations."""
from __future__ import annotations

import numpy as np

__all__ = ["random_gpt", "decoder_bytes", "CACHE_CLIP", "clipped_cache_decoder_bytes", "cache_decoder",
           "export_for_genai"]


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
            self._model_bytes = None  # ONNX Runtime keeps a copy: the model is run through this session only
            self.runs = 0

        def run(self, output_names, input_feed, run_options=None):
            past = dict(input_feed).get("past_keys")
            if self.runs and past is not None and np.ndim(past) == 5 and np.shape(past)[3] == 0:
                raise RuntimeError("this decoder already ran the prompt: feed only the new token(s) with the "
                                   "present keys and values of the previous run as past_keys and past_values "
                                   "(starting over with an empty past recomputes everything: no cache)")
            self.runs += 1
            return super().run(output_names, input_feed, run_options)

        def __deepcopy__(self, memo):  # a copy of a session that ran is one that ran: no fresh start by copying
            twin = type(self)()
            twin.runs = self.runs
            return twin

    return CacheDecoder()


# ---------------------------------------------------------------- onnxruntime-genai (optional part)


def export_for_genai(model, folder, stop: str = "~") -> dict:
    """Export a TinyGPT in the layout onnxruntime-genai reads and write `folder/decoder.onnx` and
    `folder/genai_config.json`; returns the config. Inputs input_ids, attention_mask, position_ids (int64,
    batch x sequence; the mask batch x total length) and past_key_values.%d.key/value; outputs logits and
    present.%d.key/value (genai's default names, src/config.h), batch, sequence and past length dynamic.
    The model has no end-of-text token and genai needs one in the vocabulary: the character `stop` serves as
    eos and padding (genai ends a sequence that produces it; "~" is rare in the corpus)."""
    import json
    from pathlib import Path

    import onnx
    import torch

    from ..quiet import quiet
    from ..transformer import VOCAB, GenaiLayout

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    n_layer, n_head = model.n_layer, model.n_head
    head = model.d_model // n_head
    names = [f"{kind}.{i}.{kv}" for i in range(n_layer) for kv in ("key", "value")
             for kind in ("past_key_values",)]
    batch, seq, past = torch.export.Dim("batch"), torch.export.Dim("seq"), torch.export.Dim("past")
    total = torch.export.Dim("total")
    ids = torch.zeros((2, 3), dtype=torch.int64)
    cache = [torch.zeros((2, n_head, 4, head)) for _ in names]
    example = (ids, torch.ones((2, 7), dtype=torch.int64), torch.arange(4, 7).repeat(2, 1), cache)
    dynamic = {"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: total},
               "position_ids": {0: batch, 1: seq}, "past": [{0: batch, 2: past} for _ in names]}
    with quiet(), torch.no_grad():
        program = torch.onnx.export(
            GenaiLayout(model), example, dynamo=True, dynamic_shapes=dynamic,
            input_names=["input_ids", "attention_mask", "position_ids", *names],
            output_names=["logits", *(n.replace("past_key_values", "present") for n in names)])
    onnx.save(program.model_proto, folder / "decoder.onnx")
    vocab = model.head.out_features
    config = {
        "model": {
            "type": "decoder", "vocab_size": vocab, "context_length": model.context,
            "bos_token_id": 0, "eos_token_id": VOCAB.index(stop), "pad_token_id": VOCAB.index(stop),
            "decoder": {
                "filename": "decoder.onnx",
                "session_options": {"intra_op_num_threads": 1, "log_severity_level": 4,
                                    "provider_options": []},
                "num_attention_heads": n_head, "num_key_value_heads": n_head,
                "head_size": head, "hidden_size": model.d_model, "num_hidden_layers": n_layer,
                "inputs": {"input_ids": "input_ids", "attention_mask": "attention_mask",
                           "position_ids": "position_ids",
                           "past_key_names": "past_key_values.%d.key",
                           "past_value_names": "past_key_values.%d.value"},
                "outputs": {"logits": "logits", "present_key_names": "present.%d.key",
                            "present_value_names": "present.%d.value"}}},
        "search": {"max_length": model.context, "do_sample": False, "num_beams": 1,
                   "past_present_share_buffer": False}}
    (folder / "genai_config.json").write_text(json.dumps(config, indent=2))
    return config
