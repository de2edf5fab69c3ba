"""Lesson 09 material, learner side: what the notebook hands out and the factories a graded kernel
builds test inputs with (`plain.Make("labkit.material.l09:name", ...)`). No answers, no test inputs.

Written by hand (the notebooks import it); the generated `labkit/exercises/lNN.py`
holds only declarations."""
from __future__ import annotations

import numpy as np

__all__ = ["random_gpt", "decoder_bytes", "CACHE_CLIP", "clipped_cache_decoder_bytes",
           "genai_decoder_bytes", "cache_decoder", "export_for_genai", "session", "shapes", "torch_generate"]


# ---------------------------------------------------------------- notebook 09's helpers, for 09b's setup


def session(model_proto, threads: int = 1, optimize: bool = True):
    """Notebook 09's `session`: a quiet CPU `InferenceSession` of a ModelProto, its bytes or a path, with
    `threads` intra-op threads that do not spin-wait (spinning steals the cores another process needs and
    makes timings meaningless); `optimize=False` switches ONNX Runtime's graph optimizations off."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.intra_op_num_threads = threads
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if not optimize:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    data = model_proto if isinstance(model_proto, (str, bytes)) else model_proto.SerializeToString()
    return ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])


def shapes(model_proto) -> dict:
    """Notebook 09's `shapes`: name -> [dims] of every graph input and output (a string is a symbolic
    dimension)."""
    return {v.name: [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]
            for v in [*model_proto.graph.input, *model_proto.graph.output]}


def torch_generate(model, prompt: str, n_new: int) -> str:
    """Notebook 09's `torch_generate`: the prompt and `n_new` greedy characters of a TinyGPT in PyTorch,
    recomputing the whole sequence (its last `model.context` tokens) at every step: no cache."""
    import torch

    from ..transformer import decode, encode

    ids = torch.from_numpy(encode(prompt))[None]
    with torch.no_grad():
        for _ in range(n_new):
            logits = model(ids[:, -model.context:])[0]
            ids = torch.cat([ids, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    return decode(ids[0].numpy())


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
    """The course transformer as a decoder with a cache (inputs ids, past_keys, past_values; outputs logits,
    present_keys, present_values, the caches stacked (n_layer, batch, head, past, head_dim); batch, sequence
    and past length dynamic), as ONNX bytes: what `torch.onnx.export` makes of `trained_gpt()` called with
    a past, written node by node from the shipped weights (`_course_decoder`), in a fraction of a second
    where the export takes seconds. Built once per process."""
    global _DECODER_BYTES
    if _DECODER_BYTES is None:
        _DECODER_BYTES = _course_decoder("stacked")
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


_GENAI_BYTES: bytes | None = None


def genai_decoder_bytes() -> bytes:
    """The course transformer in the layout onnxruntime-genai reads (the inputs and outputs of
    `export_for_genai`'s graph: input_ids, attention_mask, position_ids, past_key_values.%d.key/value ->
    logits, present.%d.key/value), written node by node from the shipped weights (`_course_decoder`): built in
    a fraction of a second where an export takes seconds, the same function as `transformer.GenaiLayout` (a key
    whose mask is 0 gets a score of -1e9: no attention, and no NaN for a padding row that sees no key)."""
    global _GENAI_BYTES
    if _GENAI_BYTES is None:
        _GENAI_BYTES = _course_decoder("genai")
    return _GENAI_BYTES


def _course_decoder(layout: str) -> bytes:
    """The course transformer with a cache as an ONNX graph written node by node from the shipped weights.

    * "genai": input_ids, attention_mask, position_ids, past_key_values.%d.key/value -> logits,
      present.%d.key/value; a key whose mask is 0 gets a score of -1e9.
    * "stacked": ids, past_keys, past_values -> logits, present_keys, present_values, the caches stacked
      over layers; positions continue after the past, every key up to a query's position is seen."""
    from onnx import TensorProto, helper, numpy_helper

    from ..transformer import N_HEAD, VOCAB_SIZE, course_weights

    genai = layout == "genai"
    w = course_weights()
    d = w["tok.weight"].shape[1]
    hd, n_layer = d // N_HEAD, sum(k.endswith(".qkv.weight") for k in w)
    linear_weight = [k for k, v in w.items() if v.ndim == 2 and not k.startswith(("tok.", "pos."))]
    inits = [numpy_helper.from_array(np.ascontiguousarray(v.T if k in linear_weight else v), k)
             for k, v in w.items()]  # a linear layer's weight transposed: x @ W.T is MatMul(x, W.T)
    f32 = np.float32
    consts = {"heads": np.array([0, 0, N_HEAD, hd]), "merge": np.array([0, 0, d]), "zero": np.array(0),
              "one": np.array(1), "ax0": np.array([0]), "ax1": np.array([1]), "masked": f32(-1e9),
              "scale": f32(hd ** -0.5), "half": f32(0.5), "one_f": f32(1), "sqrt2": f32(2 ** 0.5)}
    inits += [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()]
    nodes: list = []

    def op(kind: str, *inputs: str, out: str | None = None, n: int = 1, **attrs) -> str | list[str]:
        outs = [out] if out else [f"{kind.lower()}_{len(nodes)}_{i}" for i in range(n)]
        nodes.append(helper.make_node(kind, list(inputs), outs, **attrs))
        return outs[0] if n == 1 else outs

    def linear(x: str, name: str) -> str:
        return op("Add", op("MatMul", x, name + ".weight"), name + ".bias")

    def norm(x: str, name: str) -> str:
        return op("LayerNormalization", x, name + ".weight", name + ".bias", axis=-1, epsilon=1e-5)

    def split_heads(x: str) -> str:  # (b, t, d) -> (b, head, t, hd)
        return op("Transpose", op("Reshape", x, "heads"), perm=[0, 2, 1, 3])

    ids = "input_ids" if genai else "ids"
    if genai:
        past_k = [f"past_key_values.{i}.key" for i in range(n_layer)]
        past_v = [f"past_key_values.{i}.value" for i in range(n_layer)]
    else:
        inits += [numpy_helper.from_array(np.array(i), f"layer{i}") for i in range(n_layer)]
        past_k = [op("Gather", "past_keys", f"layer{i}", axis=0) for i in range(n_layer)]
        past_v = [op("Gather", "past_values", f"layer{i}", axis=0) for i in range(n_layer)]
    # which key each query may see: causal over past + new positions (genai: and only where the mask is 1)
    new_len = op("Squeeze", op("Shape", ids, start=1, end=2))
    total = op("Add", op("Squeeze", op("Shape", past_k[0], start=2, end=3)), new_len)
    query_at = op("Add", op("Range", "zero", new_len, "one"), op("Sub", total, new_len))
    allowed = op("LessOrEqual", op("Unsqueeze", op("Range", "zero", total, "one"), "ax0"),
                 op("Unsqueeze", query_at, "ax1"))
    if genai:
        inits.append(numpy_helper.from_array(np.array([1, 2]), "ax12"))
        allowed = op("And", allowed, op("Unsqueeze", op("Cast", "attention_mask", to=TensorProto.BOOL), "ax12"))
    x = op("Add", op("Gather", "tok.weight", ids), op("Gather", "pos.weight", "position_ids" if genai else query_at))
    keys, values = [], []
    for i in range(n_layer):
        p = f"blocks.{i}."
        q, k, v = op("Split", linear(norm(x, p + "ln1"), p + "qkv"), axis=-1, num_outputs=3, n=3)
        k = op("Concat", past_k[i], split_heads(k), axis=2, out=f"present.{i}.key" if genai else None)
        v = op("Concat", past_v[i], split_heads(v), axis=2, out=f"present.{i}.value" if genai else None)
        keys.append(k)
        values.append(v)
        scores = op("Mul", op("MatMul", split_heads(q), op("Transpose", k, perm=[0, 1, 3, 2])), "scale")
        att = op("Softmax", op("Where", allowed, scores, "masked"), axis=-1)
        y = op("Reshape", op("Transpose", op("MatMul", att, v), perm=[0, 2, 1, 3]), "merge")
        x = op("Add", x, linear(y, p + "proj"))
        h = linear(norm(x, p + "ln2"), p + "fc1")
        gelu = op("Mul", op("Mul", h, "half"), op("Add", op("Erf", op("Div", h, "sqrt2")), "one_f"))
        x = op("Add", x, linear(gelu, p + "fc2"))
    op("MatMul", norm(x, "ln_f"), "head.weight", out="logits")

    def tensor(name: str, elem: int, shape: list) -> object:
        return helper.make_tensor_value_info(name, elem, shape)

    logits = tensor("logits", TensorProto.FLOAT, ["batch", "seq", VOCAB_SIZE])
    if genai:
        past = ["batch", N_HEAD, "past", hd]
        cache = [f".{i}.{kv}" for i in range(n_layer) for kv in ("key", "value")]
        inputs = [tensor("input_ids", TensorProto.INT64, ["batch", "seq"]),
                  tensor("attention_mask", TensorProto.INT64, ["batch", "total"]),
                  tensor("position_ids", TensorProto.INT64, ["batch", "seq"]),
                  *(tensor("past_key_values" + c, TensorProto.FLOAT, past) for c in cache)]
        outputs = [logits, *(tensor("present" + c, TensorProto.FLOAT, ["batch", N_HEAD, "past + seq", hd])
                             for c in cache)]
    else:
        for name, parts in (("present_keys", keys), ("present_values", values)):
            op("Concat", *(op("Unsqueeze", part, "ax0") for part in parts), axis=0, out=name)
        past = [n_layer, "batch", N_HEAD, "past", hd]
        inputs = [tensor("ids", TensorProto.INT64, ["batch", "seq"]),
                  *(tensor(n, TensorProto.FLOAT, past) for n in ("past_keys", "past_values"))]
        outputs = [logits, *(tensor(n, TensorProto.FLOAT, [n_layer, "batch", N_HEAD, "past + seq", hd])
                             for n in ("present_keys", "present_values"))]
    graph = helper.make_graph(nodes, f"tiny_gpt_{layout}_cache", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    return model.SerializeToString()


#: what the batch session (`cache_decoder("genai", rows)`) says when a run does not take the whole batch, or does
#: not read the cache; 09.batch_generate's judge recognises its own refusals by these words
NOT_THE_BATCH = "expected every run to take the whole batch"
NO_CACHE = "expected every later run to read the cache"


def cache_decoder(layout: str = "stacked", rows: int | None = None):
    """A test input of 09.generate (`layout="stacked"`) and of 09.batch_generate (`layout="genai"`, `rows` the
    number of prompts): an ONNX Runtime session of the course decoder that, like a real cached generator, runs
    the prompt with an empty past once and then only new tokens with a past. (One factory for both layouts: the
    session host builds the sessions of the factories `session_server.SERVED_FACTORIES` names.)

    * "stacked": the decoder with its cache clipped (`clipped_cache_decoder_bytes`); only its first run() may
      have an empty past.
    * "genai": the genai-layout decoder (`genai_decoder_bytes`) serving one batch of `rows` prompts: every run
      (by `run` or `run_with_ort_values`; IO binding is refused) must take `rows` rows, and every run after the
      first must read as its pasts the presents of the run before and feed one new token per row. So each prompt
      alone in a loop, a batch rerun from an empty past, the whole sequence fed again on top of a past and a past
      made up or replayed from an older run are refused."""
    import onnxruntime as ort

    if layout not in ("stacked", "genai"):
        raise ValueError(f"layout is 'stacked' or 'genai', not {layout!r}")
    genai = layout == "genai"

    class CacheDecoder(ort.InferenceSession):
        """An InferenceSession of the course decoder that refuses to start over: only its first run() may
        have an empty past (no cache), every later run must pass the past keys and values (genai: and the
        whole batch, one new token per row)."""

        def __init__(self):
            opts = ort.SessionOptions()
            opts.log_severity_level = 4  # a learner's bad feed comes back as the exception's message, not a log
            opts.intra_op_num_threads = 1
            super().__init__(genai_decoder_bytes() if genai else clipped_cache_decoder_bytes(), opts,
                             providers=["CPUExecutionProvider"])
            self._model_bytes = None  # ONNX Runtime keeps a copy: the model is run through this session only
            self.runs = 0
            self._presents: dict[str, np.ndarray] = {}

        def _refuse(self, shapes: dict) -> None:
            """Raise if a run of inputs of these shapes skips what the session is there for."""
            if not genai:
                past = shapes.get("past_keys")
                if self.runs and past is not None and len(past) == 5 and past[3] == 0:
                    raise RuntimeError("this decoder already ran the prompt: feed only the new token(s) with the "
                                       "present keys and values of the previous run as past_keys and past_values "
                                       "(starting over with an empty past recomputes everything: no cache)")
                return
            ids, past = shapes.get("input_ids"), shapes.get("past_key_values.0.key")
            if rows is not None and ids is not None and len(ids) == 2 and ids[0] != rows:
                raise RuntimeError(f"this session serves one batch of {rows} prompts: {NOT_THE_BATCH} ({rows} "
                                   f"rows, one run per step), got a run of {ids[0]} row{'s' * (ids[0] != 1)}")
            if self.runs and past is not None and len(past) == 4 and past[2] == 0:
                raise RuntimeError(f"this session already ran the prompts: {NO_CACHE} (a past of length > 0), "
                                   "got an empty past (the whole sequence computed again: no cache)")
            if self.runs and ids is not None and len(ids) == 2 and ids[1] != 1:
                raise RuntimeError(f"this session already ran the prompts: {NO_CACHE} and take one new token per "
                                   f"row, got {ids[1]} tokens per row (a sequence computed again: no cache)")

        def _check_past(self, feed: dict) -> None:
            """genai: every run after the first reads as its pasts the presents the run before returned (as they
            came, or copies): a past made up, kept from an older run or paired with another present is refused."""
            for name, value in feed.items():
                if not (self.runs and name.startswith("past_key_values.")):
                    continue
                want = self._presents.get("present." + name[len("past_key_values."):])
                got = value.numpy() if isinstance(value, ort.OrtValue) else np.asarray(value)
                if want is None or got.shape != want.shape or not np.array_equal(got, want):
                    raise RuntimeError(f"this session already ran the prompts: {NO_CACHE}: {name} must be the "
                                       f"present the previous run returned, got {'a past of shape ' + str(got.shape)}"
                                       f" that is not it (a cache made up, kept from an older run or mismatched)")

        def _keep(self, outputs: list) -> None:
            self._presents = {o.name: np.array(v.numpy() if isinstance(v, ort.OrtValue) else v)
                              for o, v in zip(self.get_outputs(), outputs) if o.name.startswith("present.")}

        def run(self, output_names, input_feed, run_options=None):
            self._refuse({k: tuple(np.shape(v)) for k, v in dict(input_feed).items()})
            if not genai:
                self.runs += 1
                return super().run(output_names, input_feed, run_options)
            self._check_past(dict(input_feed))
            outputs = super().run(None, input_feed, run_options)   # every present kept, whatever was asked for
            self._keep(outputs)
            self.runs += 1
            by_name = dict(zip((o.name for o in self.get_outputs()), outputs))
            return outputs if output_names is None else [by_name[n] for n in output_names]

        def run_with_ort_values(self, output_names, input_dict_ort_values, run_options=None):
            if not genai:
                return super().run_with_ort_values(output_names, input_dict_ort_values, run_options)
            self._refuse({k: tuple(v.shape()) for k, v in dict(input_dict_ort_values).items()})
            self._check_past(dict(input_dict_ort_values))
            every = [o.name for o in self.get_outputs()]
            outputs = super().run_with_ort_values(every, input_dict_ort_values, run_options)
            self._keep(list(outputs))
            self.runs += 1
            by_name = dict(zip(every, outputs))
            return outputs if output_names is None else [by_name[n] for n in output_names]

        def run_with_iobinding(self, iobinding, run_options=None):
            if genai:
                raise RuntimeError("this session runs through run() or run_with_ort_values(), not IO binding")
            return super().run_with_iobinding(iobinding, run_options)

        def __deepcopy__(self, memo):  # a copy of a session that ran is one that ran: no fresh start by copying
            twin = type(self)()
            twin.runs, twin._presents = self.runs, dict(self._presents)
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
