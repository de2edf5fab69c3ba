"""Blind corpus round 3, lesson 09 (written without seeing the judges)."""
import atexit as _atexit, shutil as _shutil, tempfile as _tempfile  # noqa: E401
_BLIND3_CACHE = __import__("pathlib").Path(_tempfile.mkdtemp(prefix="blind3-cache-"))  # per process: no race
_atexit.register(_shutil.rmtree, _BLIND3_CACHE, True)
from corpus import Right, Wrong

import numpy as np


# ------------------------------------------------------------------ 09.generate

def _kv_shape(session):
    shp = session.get_inputs()[1].shape
    return [s if isinstance(s, int) else None for s in shp]


def _empty(session):
    L, _, H, _, D = _kv_shape(session)
    return np.zeros((L, 1, H, 0, D), np.float32)


def gen_right_loop(session, prompt_ids, n_new):
    ids = np.asarray(prompt_ids, dtype=np.int64).reshape(1, -1)
    pk = pv = _empty(session)
    new = []
    while len(new) < n_new:
        logits, pk, pv = session.run(None, {"ids": ids, "past_keys": pk, "past_values": pv})
        tok = int(np.argmax(logits[0, -1]))
        new.append(tok)
        ids = np.array([[tok]], dtype=np.int64)
    return new


def gen_right_named_outputs(session, prompt_ids, n_new):
    """Outputs asked for by name, in another order; a dict feed built from the session's input names; an array
    returned."""
    in_names = [i.name for i in session.get_inputs()]
    L, _, H, _, D = _kv_shape(session)
    feed = {in_names[0]: np.array(prompt_ids, np.int64)[None, :],
            in_names[1]: np.empty((L, 1, H, 0, D), np.float32),
            in_names[2]: np.empty((L, 1, H, 0, D), np.float32)}
    out = np.zeros(n_new, dtype=np.int64)
    for step in range(n_new):
        pv, lg, pk = session.run(["present_values", "logits", "present_keys"], feed)
        out[step] = lg[:, -1, :].argmax(axis=-1)[0]
        feed = {in_names[0]: out[step:step + 1].reshape(1, 1), in_names[1]: pk, in_names[2]: pv}
    return out


def gen_right_token_by_token_prompt(session, prompt_ids, n_new):
    """The prompt fed one token at a time through the cache too (accepted by the prompt)."""
    pk = pv = _empty(session)
    logits = None
    for t in np.asarray(prompt_ids, np.int64):
        logits, pk, pv = session.run(None, {"ids": np.array([[t]], np.int64), "past_keys": pk, "past_values": pv})
    toks = []
    for i in range(n_new):
        nxt = int(logits[0, -1].argmax())
        toks.append(nxt)
        if i + 1 < n_new:
            logits, pk, pv = session.run(None, {"ids": np.array([[nxt]], np.int64), "past_keys": pk,
                                                "past_values": pv})
    return toks


def gen_right_ortvalues(session, prompt_ids, n_new):
    """Outputs indexed from the returned list (not unpacked); tokens returned as an int32 array."""
    feed = {"ids": np.asarray(prompt_ids, np.int64)[np.newaxis], "past_keys": _empty(session),
            "past_values": _empty(session)}
    res = []
    for _ in range(n_new):
        outs = session.run(None, feed)
        res.append(int(outs[0][0][-1].argmax()))
        feed = {"ids": np.full((1, 1), res[-1], np.int64), "past_keys": outs[1], "past_values": outs[2]}
    return np.array(res, dtype=np.int32)


def gen_wrong_no_cache(session, prompt_ids, n_new):
    """Reruns the whole sequence with an empty past every step."""
    seq = list(np.asarray(prompt_ids, np.int64))
    out = []
    for _ in range(n_new):
        logits, _, _ = session.run(None, {"ids": np.array([seq], np.int64), "past_keys": _empty(session),
                                          "past_values": _empty(session)})
        out.append(int(logits[0, -1].argmax()))
        seq.append(out[-1])
    return out


def gen_wrong_no_cache_base_class(session, prompt_ids, n_new):
    """No cache, through the InferenceSession class's run (past the session's own)."""
    import onnxruntime as ort
    seq = list(np.asarray(prompt_ids, np.int64))
    out = []
    for _ in range(n_new):
        logits = ort.InferenceSession.run(session, ["logits"], {"ids": np.array([seq], np.int64),
                                          "past_keys": _empty(session), "past_values": _empty(session)})[0]
        out.append(int(logits[0, -1].argmax()))
        seq.append(out[-1])
    return out


def gen_wrong_no_cache_c_session(session, prompt_ids, n_new):
    """No cache, through the C session underneath."""
    seq = list(np.asarray(prompt_ids, np.int64))
    out = []
    for _ in range(n_new):
        logits = session._sess.run(["logits"], {"ids": np.array([seq], np.int64), "past_keys": _empty(session),
                                                "past_values": _empty(session)}, None)[0]
        out.append(int(logits[0, -1].argmax()))
        seq.append(out[-1])
    return out


def gen_wrong_fresh_session_no_cache(session, prompt_ids, n_new):
    """onnxruntime imported afresh, a session of its own on the same model bytes, whole sequence every step."""
    import importlib
    ort = importlib.import_module("onnxruntime")
    src = getattr(session, "_model_bytes", None) or session._model_path
    s = ort.InferenceSession(src, providers=["CPUExecutionProvider"])
    seq = list(np.asarray(prompt_ids, np.int64))
    for _ in range(n_new):
        logits = s.run(["logits"], {"ids": np.array([seq], np.int64), "past_keys": _empty(s),
                                    "past_values": _empty(s)})[0]
        seq.append(int(logits[0, -1].argmax()))
    return seq[len(prompt_ids):]


def gen_wrong_torch(session, prompt_ids, n_new):
    """PyTorch's course model with its own cache: not the session at all."""
    import torch
    from labkit.transformer import trained_gpt
    model = trained_gpt()
    ids = torch.from_numpy(np.asarray(prompt_ids, np.int64))[None]
    pk = pv = None
    out = []
    with torch.no_grad():
        for _ in range(n_new):
            logits, pk, pv = model(ids, pk, pv)
            out.append(int(logits[0, -1].argmax()))
            ids = torch.tensor([[out[-1]]])
    return out


def gen_wrong_first_position(session, prompt_ids, n_new):
    """argmax at position 0 instead of the last."""
    ids = np.asarray(prompt_ids, np.int64)[None]
    pk = pv = _empty(session)
    out = []
    for _ in range(n_new):
        logits, pk, pv = session.run(None, {"ids": ids, "past_keys": pk, "past_values": pv})
        out.append(int(logits[0, 0].argmax()))
        ids = np.array([[out[-1]]], np.int64)
    return out


def gen_wrong_flat_argmax(session, prompt_ids, n_new):
    """int(logits.argmax()): fine for one-token steps, a flat index after the prompt."""
    ids = np.asarray(prompt_ids, np.int64)[None]
    pk = pv = _empty(session)
    out = []
    for _ in range(n_new):
        logits, pk, pv = session.run(None, {"ids": ids, "past_keys": pk, "past_values": pv})
        out.append(int(logits.argmax()) % logits.shape[-1])
        ids = np.array([[out[-1]]], np.int64)
    return out


def gen_wrong_with_prompt(session, prompt_ids, n_new):
    return list(np.asarray(prompt_ids).tolist()) + list(gen_right_loop(session, prompt_ids, n_new))


def gen_wrong_one_short(session, prompt_ids, n_new):
    """range(n_new - 1) after the prefill token... then forgets to append the prefill's token."""
    ids = np.asarray(prompt_ids, np.int64)[None]
    logits, pk, pv = session.run(None, {"ids": ids, "past_keys": _empty(session), "past_values": _empty(session)})
    tok = int(logits[0, -1].argmax())
    out = []
    for _ in range(n_new - 1):
        logits, pk, pv = session.run(None, {"ids": np.array([[tok]], np.int64), "past_keys": pk, "past_values": pv})
        tok = int(logits[0, -1].argmax())
        out.append(tok)
    return out


def gen_wrong_swapped_kv(session, prompt_ids, n_new):
    ids = np.asarray(prompt_ids, np.int64)[None]
    pk = pv = _empty(session)
    out = []
    for _ in range(n_new):
        logits, k, v = session.run(None, {"ids": ids, "past_keys": pk, "past_values": pv})
        pk, pv = v, k
        out.append(int(logits[0, -1].argmax()))
        ids = np.array([[out[-1]]], np.int64)
    return out


def gen_wrong_stale_past(session, prompt_ids, n_new):
    """Keeps the prefill's present as the past for every step (the cache never grows)."""
    ids = np.asarray(prompt_ids, np.int64)[None]
    logits, pk0, pv0 = session.run(None, {"ids": ids, "past_keys": _empty(session), "past_values": _empty(session)})
    out = [int(logits[0, -1].argmax())]
    while len(out) < n_new:
        logits, _, _ = session.run(None, {"ids": np.array([[out[-1]]], np.int64), "past_keys": pk0,
                                          "past_values": pv0})
        out.append(int(logits[0, -1].argmax()))
    return out[:n_new]


def gen_wrong_growing_ids(session, prompt_ids, n_new):
    """Feeds the previous present *and* the whole sequence so far."""
    seq = list(np.asarray(prompt_ids, np.int64))
    pk = pv = _empty(session)
    out = []
    for _ in range(n_new):
        logits, pk2, pv2 = session.run(None, {"ids": np.array([seq], np.int64), "past_keys": pk, "past_values": pv})
        out.append(int(logits[0, -1].argmax()))
        seq.append(out[-1])
        pk, pv = pk2[:, :, :, :1], pv2[:, :, :, :1]  # keeps a one-position past so the run is not "empty"
    return out


def gen_wrong_sampling(session, prompt_ids, n_new):
    """Samples at temperature 1 instead of greedy."""
    rng = np.random.default_rng(0)
    ids = np.asarray(prompt_ids, np.int64)[None]
    pk = pv = _empty(session)
    out = []
    for _ in range(n_new):
        logits, pk, pv = session.run(None, {"ids": ids, "past_keys": pk, "past_values": pv})
        row = logits[0, -1].astype(np.float64)
        p = np.exp(row - row.max())
        out.append(int(rng.choice(len(p), p=p / p.sum())))
        ids = np.array([[out[-1]]], np.int64)
    return out


def gen_wrong_reference_evaluator(session, prompt_ids, n_new):
    """Loads the session's model bytes into onnx's reference evaluator and decodes with the cache there."""
    import onnx
    from onnx.reference import ReferenceEvaluator
    ev = ReferenceEvaluator(onnx.load_from_string(session._model_bytes))
    ids = np.asarray(prompt_ids, np.int64)[None]
    pk = pv = _empty(session)
    out = []
    for _ in range(n_new):
        logits, pk, pv = ev.run(None, {"ids": ids, "past_keys": pk, "past_values": pv})
        out.append(int(np.asarray(logits)[0, -1].argmax()))
        ids = np.array([[out[-1]]], np.int64)
    return out


# ------------------------------------------------------------------ 09.perplexity

def ppl_right_float64(logits, targets):
    x = np.asarray(logits, dtype=np.float64)
    m = x.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(x - m).sum(axis=1))
    picked = x[np.arange(len(targets)), np.asarray(targets)]
    return float(np.exp(np.mean(lse - picked)))


def ppl_right_take_along(logits, targets):
    """float32 throughout, take_along_axis, log-softmax as x - max - log(sum exp)."""
    z = logits - np.max(logits, axis=-1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=-1, keepdims=True))
    nll = -np.take_along_axis(logp, np.asarray(targets, np.int64)[:, None], axis=-1)
    return float(np.exp(nll.astype(np.float64).mean()))


def ppl_right_loop(logits, targets):
    """Plain Python per row with math.fsum."""
    import math
    total = []
    for row, t in zip(np.asarray(logits, np.float64), np.asarray(targets).tolist()):
        m = max(row.tolist())
        lse = m + math.log(math.fsum(math.exp(v - m) for v in row.tolist()))
        total.append(lse - row[t])
    return float(np.exp(math.fsum(total) / len(total)))


def ppl_right_logaddexp(logits, targets):
    """np.logaddexp.reduce as the log-sum-exp; geometric mean of 1/p via exp of mean."""
    x = np.asarray(logits, np.float64)
    lse = np.logaddexp.reduce(x, axis=1)
    lp = x[np.arange(x.shape[0]), targets] - lse
    return float(np.exp(-lp.sum() / x.shape[0]))


def ppl_wrong_unstable(logits, targets):
    p = np.exp(logits)
    p = p / p.sum(axis=1, keepdims=True)
    return float(np.exp(-np.mean(np.log(p[np.arange(len(targets)), targets]))))


def ppl_wrong_nll(logits, targets):
    """Returns the mean negative log-likelihood, not its exponential."""
    x = np.asarray(logits, np.float64)
    m = x.max(1, keepdims=True)
    logp = x - m - np.log(np.exp(x - m).sum(1, keepdims=True))
    return float(-logp[np.arange(len(targets)), targets].mean())


def ppl_wrong_base2(logits, targets):
    x = np.asarray(logits, np.float64)
    m = x.max(1, keepdims=True)
    logp = x - m - np.log(np.exp(x - m).sum(1, keepdims=True))
    return float(2 ** (-logp[np.arange(len(targets)), targets].mean()))


def ppl_wrong_sum(logits, targets):
    x = np.asarray(logits, np.float64)
    m = x.max(1, keepdims=True)
    logp = x - m - np.log(np.exp(x - m).sum(1, keepdims=True))
    return float(np.exp(-logp[np.arange(len(targets)), targets].sum()))


def ppl_wrong_argmax(logits, targets):
    """Scores the model's own best guess instead of the target."""
    x = np.asarray(logits, np.float64)
    m = x.max(1, keepdims=True)
    logp = x - m - np.log(np.exp(x - m).sum(1, keepdims=True))
    return float(np.exp(-logp.max(axis=1).mean()))


def ppl_wrong_shifted(logits, targets):
    """Shifts the alignment again (row i scored against targets[i + 1])."""
    x = np.asarray(logits, np.float64)[:-1]
    t = np.asarray(targets)[1:]
    if len(t) == 0:
        x, t = np.asarray(logits, np.float64), np.asarray(targets)
    m = x.max(1, keepdims=True)
    logp = x - m - np.log(np.exp(x - m).sum(1, keepdims=True))
    return float(np.exp(-logp[np.arange(len(t)), t].mean()))


def ppl_wrong_axis0(logits, targets):
    x = np.asarray(logits, np.float64)
    m = x.max(0, keepdims=True)
    logp = x - m - np.log(np.exp(x - m).sum(0, keepdims=True))
    return float(np.exp(-logp[np.arange(len(targets)), targets].mean()))


def ppl_wrong_global_max(logits, targets):
    """Shifts by the global maximum, not each row's: rows far below it underflow to log(0)."""
    x = np.asarray(logits, np.float32)
    z = x - x.max()
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.exp(-np.mean(np.log(p[np.arange(len(targets)), targets]))))


def ppl_wrong_eps(logits, targets):
    """Unstable softmax patched with an epsilon and nan_to_num."""
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(np.asarray(logits, np.float32))
        p = np.nan_to_num(e / e.sum(axis=1, keepdims=True))
    return float(np.exp(-np.mean(np.log(p[np.arange(len(targets)), targets] + 1e-9))))


def ppl_wrong_inplace(logits, targets):
    """Right value, but shifts the caller's logits in place."""
    logits -= logits.max(axis=1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return float(np.exp(-logp[np.arange(len(targets)), targets].astype(np.float64).mean()))


def ppl_wrong_torch_ce(logits, targets):
    """PyTorch's cross_entropy does the whole log-softmax and NLL."""
    import torch
    import torch.nn.functional as F
    loss = F.cross_entropy(torch.from_numpy(np.asarray(logits, np.float64)), torch.from_numpy(np.asarray(targets, np.int64)))
    return float(torch.exp(loss))


def ppl_wrong_array(logits, targets):
    """Right value returned as a 1-element array."""
    return np.array([ppl_right_float64(logits, targets)])


# ------------------------------------------------------------------ 09.export_dynamic

def _example(model, b=2, t=8):
    import torch
    t = min(t, model.context)
    return (torch.arange(b * t, dtype=torch.int64).reshape(b, t) % 50,)


def _quiet():
    import contextlib
    import io
    import warnings
    stack = contextlib.ExitStack()
    stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
    stack.enter_context(contextlib.redirect_stderr(io.StringIO()))
    stack.enter_context(warnings.catch_warnings())
    warnings.simplefilter("ignore")
    return stack


def exp_right_dict(model):
    import torch
    b, s = torch.export.Dim("b"), torch.export.Dim("s", max=model.context)
    with _quiet():
        prog = torch.onnx.export(model, _example(model, 3, 5), dynamo=True,
                                 dynamic_shapes={"ids": {0: b, 1: s}})
    return prog.model_proto


def exp_right_tuple_file(tmp):
    def export_dynamic(model):
        import onnx
        import torch
        path = tmp / "dyn.onnx"
        dims = ({0: torch.export.Dim("n"), 1: torch.export.Dim("t", min=1, max=model.context)},)
        with _quiet():
            torch.onnx.export(model, _example(model, 2, 11), str(path), dynamo=True, dynamic_shapes=dims,
                              input_names=["tokens"], output_names=["scores"])
        return onnx.load(str(path))
    return export_dynamic


def exp_right_auto_bytes(model):
    """Dim.AUTO on both axes, the full context as example length; serialized bytes."""
    import torch
    with _quiet():
        prog = torch.onnx.export(model, _example(model, 4, model.context), dynamo=True,
                                 dynamic_shapes={"ids": {0: torch.export.Dim.AUTO, 1: torch.export.Dim.AUTO}})
    return prog.model_proto.SerializeToString()


def exp_right_legacy(tmp):
    def export_dynamic(model):
        """The TorchScript exporter with dynamic_axes."""
        import io
        import onnx
        import torch
        buf = io.BytesIO()
        with _quiet():
            torch.onnx.export(model, _example(model, 2, 6), buf, dynamo=False, input_names=["ids"],
                              output_names=["logits"], dynamic_axes={"ids": {0: "batch", 1: "seq"},
                                                                     "logits": {0: "batch", 1: "seq"}},
                              opset_version=17)
        return onnx.load_from_string(buf.getvalue())
    return export_dynamic


def exp_wrong_static(model):
    import torch
    with _quiet():
        return torch.onnx.export(model, _example(model, 2, 8), dynamo=True).model_proto


def exp_wrong_size1_example(model):
    import torch
    with _quiet():
        return torch.onnx.export(model, _example(model, 1, 1), dynamo=True,
                                 dynamic_shapes={"ids": {0: torch.export.Dim("batch"),
                                                         1: torch.export.Dim("seq", max=model.context)}}).model_proto


def exp_wrong_batch_only(model):
    import torch
    with _quiet():
        return torch.onnx.export(model, _example(model, 2, 8), dynamo=True,
                                 dynamic_shapes={"ids": {0: torch.export.Dim("batch")}}).model_proto


def exp_wrong_seq_only(model):
    import torch
    with _quiet():
        return torch.onnx.export(model, _example(model, 2, 8), dynamo=True,
                                 dynamic_shapes={"ids": {1: torch.export.Dim("seq", max=model.context)}}).model_proto


def exp_wrong_batch1_seq_dynamic(model):
    """Batch 1 in the example with named Dims (measured: this torch keeps the batch dynamic all the same)."""
    import torch
    with _quiet():
        return torch.onnx.export(model, _example(model, 1, 8), dynamo=True,
                                 dynamic_shapes={"ids": {0: torch.export.Dim("batch"),
                                                         1: torch.export.Dim("seq", max=model.context)}}).model_proto


def exp_wrong_int32(model):
    """int32 example ids: the graph takes int32, not int64."""
    import torch
    ex = (_example(model)[0].to(torch.int32),)
    with _quiet():
        return torch.onnx.export(model, ex, dynamo=True,
                                 dynamic_shapes={"ids": {0: torch.export.Dim("batch"),
                                                         1: torch.export.Dim("seq", max=model.context)}}).model_proto


def exp_wrong_last_only(model):
    """Exports a wrapper that keeps only the last position's logits."""
    import torch

    class Last(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, ids):
            return self.m(ids)[:, -1, :]

    with _quiet():
        return torch.onnx.export(Last(model).eval(), _example(model), dynamo=True,
                                 dynamic_shapes={"ids": {0: torch.export.Dim("batch"),
                                                         1: torch.export.Dim("seq", max=model.context)}}).model_proto


def exp_wrong_path(tmp):
    def export_dynamic(model):
        import torch
        path = tmp / "model.onnx"
        with _quiet():
            torch.onnx.export(model, _example(model), str(path), dynamo=True,
                              dynamic_shapes={"ids": {0: torch.export.Dim("batch"),
                                                      1: torch.export.Dim("seq", max=model.context)}})
        return str(path)
    return export_dynamic


def exp_wrong_program(model):
    """Returns the ONNXProgram itself, not its model_proto."""
    import torch
    with _quiet():
        return torch.onnx.export(model, _example(model), dynamo=True,
                                 dynamic_shapes={"ids": {0: torch.export.Dim("batch"),
                                                         1: torch.export.Dim("seq", max=model.context)}})


def exp_wrong_legacy_no_axes(model):
    """TorchScript exporter without dynamic_axes: both dimensions frozen."""
    import io
    import onnx
    import torch
    buf = io.BytesIO()
    with _quiet():
        torch.onnx.export(model, _example(model, 2, 8), buf, dynamo=False, input_names=["ids"], opset_version=17)
    return onnx.load_from_string(buf.getvalue())


def exp_wrong_float_proto(model):
    """Converts the exported graph's weights to float16 'to make it smaller': logits drift."""
    import torch
    from onnx import numpy_helper, TensorProto
    with _quiet():
        proto = torch.onnx.export(model, _example(model), dynamo=True,
                                  dynamic_shapes={"ids": {0: torch.export.Dim("batch"),
                                                          1: torch.export.Dim("seq", max=model.context)}}).model_proto
    for init in proto.graph.initializer:
        if init.data_type == TensorProto.FLOAT:
            arr = numpy_helper.to_array(init)
            arr = arr.astype(np.float16).astype(np.float32) if arr.ndim < 2 else np.round(arr, 1)
            init.CopyFrom(numpy_helper.from_array(arr.astype(np.float32), init.name))
    return proto


CORPUS = {
    "09.generate": [
        Right("blind3-gen-while-loop", answer=gen_right_loop),
        Right("blind3-gen-named-outputs-array", answer=gen_right_named_outputs),
        Right("blind3-gen-prompt-token-by-token", answer=gen_right_token_by_token_prompt),
        Right("blind3-gen-indexed-outs-int32", answer=gen_right_ortvalues),
        Wrong("blind3-gen-no-cache", answer=gen_wrong_no_cache, skipped_skill=True),
        Wrong("blind3-gen-no-cache-base-class", answer=gen_wrong_no_cache_base_class, skipped_skill=True),
        Wrong("blind3-gen-no-cache-c-session", answer=gen_wrong_no_cache_c_session, skipped_skill=True),
        Wrong("blind3-gen-fresh-session-no-cache", answer=gen_wrong_fresh_session_no_cache, skipped_skill=True),
        Wrong("blind3-gen-torch-cache", answer=gen_wrong_torch, skipped_skill=True),
        Wrong("blind3-gen-first-position", answer=gen_wrong_first_position),
        Wrong("blind3-gen-flat-argmax", answer=gen_wrong_flat_argmax),
        Wrong("blind3-gen-with-prompt", answer=gen_wrong_with_prompt),
        Wrong("blind3-gen-one-short", answer=gen_wrong_one_short),
        Wrong("blind3-gen-swapped-kv", answer=gen_wrong_swapped_kv),
        Wrong("blind3-gen-stale-past", answer=gen_wrong_stale_past),
        Wrong("blind3-gen-growing-ids", answer=gen_wrong_growing_ids),
        Wrong("blind3-gen-sampling", answer=gen_wrong_sampling),
        Wrong("blind3-gen-reference-evaluator", answer=gen_wrong_reference_evaluator, outputs_wrong=False,
              skipped_skill=True),
    ],
    "09.perplexity": [
        Right("blind3-ppl-float64", answer=ppl_right_float64),
        Right("blind3-ppl-take-along-f32", answer=ppl_right_take_along),
        Right("blind3-ppl-python-loop", answer=ppl_right_loop),
        Right("blind3-ppl-logaddexp", answer=ppl_right_logaddexp),
        Wrong("blind3-ppl-unstable", answer=ppl_wrong_unstable),
        Wrong("blind3-ppl-nll-not-exp", answer=ppl_wrong_nll),
        Wrong("blind3-ppl-base2", answer=ppl_wrong_base2),
        Wrong("blind3-ppl-sum", answer=ppl_wrong_sum),
        Wrong("blind3-ppl-argmax", answer=ppl_wrong_argmax),
        Wrong("blind3-ppl-shifted", answer=ppl_wrong_shifted),
        Wrong("blind3-ppl-axis0", answer=ppl_wrong_axis0),
        Wrong("blind3-ppl-global-max", answer=ppl_wrong_global_max),
        Wrong("blind3-ppl-eps", answer=ppl_wrong_eps),
        Wrong("blind3-ppl-inplace", answer=ppl_wrong_inplace, outputs_wrong=False),
        Wrong("blind3-ppl-torch-ce", answer=ppl_wrong_torch_ce, outputs_wrong=False, skipped_skill=True),
        Wrong("blind3-ppl-array", answer=ppl_wrong_array, outputs_wrong=False),
    ],
    "09.export_dynamic": [
        Right("blind3-exp-dict-3x5", answer=exp_right_dict),
        Right("blind3-exp-tuple-file", make=exp_right_tuple_file),
        Right("blind3-exp-auto-bytes", answer=exp_right_auto_bytes),
        Right("blind3-exp-legacy-dynamic-axes", make=exp_right_legacy),
        Wrong("blind3-exp-static", answer=exp_wrong_static),
        Wrong("blind3-exp-size1-example", answer=exp_wrong_size1_example),
        Wrong("blind3-exp-batch-only", answer=exp_wrong_batch_only),
        Wrong("blind3-exp-seq-only", answer=exp_wrong_seq_only),
        Right("blind3-exp-batch1-example", answer=exp_wrong_batch1_seq_dynamic),
        Wrong("blind3-exp-int32-ids", answer=exp_wrong_int32),
        Wrong("blind3-exp-last-only", answer=exp_wrong_last_only),
        Wrong("blind3-exp-path", make=exp_wrong_path, outputs_wrong=False),
        Wrong("blind3-exp-program", answer=exp_wrong_program, outputs_wrong=False),
        Wrong("blind3-exp-legacy-no-axes", answer=exp_wrong_legacy_no_axes),
        Wrong("blind3-exp-rounded-weights", answer=exp_wrong_float_proto),
    ],
}
