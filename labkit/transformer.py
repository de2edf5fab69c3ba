"""The course's small decoder-only transformer (lesson 09): a character-level language model of Python's
own documentation, its tokenizer, the shipped weights (verified by SHA-256) and the training run that made them.

The model is plain PyTorch: token and learned position embeddings, `N_LAYER` pre-norm blocks of causal
self-attention and a GELU MLP, a final LayerNorm and a linear head. Attention is written out with
matmuls and a softmax (no fused kernel), so the exported graph shows what an exporter emits for it.

`forward(ids, past_keys, past_values)` takes an optional key/value cache: the keys and values of the
positions already seen, stacked over layers as (n_layer, batch, n_head, past, head_dim). It returns the
logits and the *present* keys and values (past plus the new positions), so a generation loop feeds
only the new token once the prompt has been processed (prefill, then decode).

Training gives other weights on another CPU, so the course ships one trained model
(`labkit/assets/tiny_gpt.npz`) whose SHA-256 is `WEIGHTS_SHA256`; `labkit course-model --transformer`
retrains it. The same file holds a held-out slice of the text (`heldout_text()`), so quality numbers are
measured on the same characters on every machine and every Python version.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .models import CourseModelError, read_weights as _read_weights, save_weights  # noqa: F401 (what trained_gpt raises)

#: the vocabulary: newline and the 95 printable ASCII characters; anything else is read as "?"
VOCAB = "\n" + "".join(chr(i) for i in range(32, 127))
VOCAB_SIZE = len(VOCAB)
N_LAYER, N_HEAD, D_MODEL, CONTEXT = 2, 4, 96, 128

WEIGHTS_FILE = Path(__file__).with_name("assets") / "tiny_gpt.npz"
WEIGHTS_SHA256 = "f67628cb0c68b3bb669d8e87296daa04e9da4ca0ded86a1250e18fc5724beaec"
#: how the shipped weights were trained (`labkit course-model --transformer` uses these)
STEPS = 4000
SEED = 0
HELDOUT_CHARS = 12_000

_INDEX = {c: i for i, c in enumerate(VOCAB)}
_UNKNOWN = _INDEX["?"]


def encode(text: str) -> np.ndarray:
    """Characters to token ids (int64); tabs become 4 spaces, characters outside the vocabulary "?"."""
    text = text.replace("\t", "    ")
    return np.array([_INDEX.get(c, _UNKNOWN) for c in text], dtype=np.int64)


def decode(ids) -> str:
    """Token ids back to text."""
    return "".join(VOCAB[int(i)] if 0 <= int(i) < VOCAB_SIZE else "?" for i in np.asarray(ids).ravel())


def corpus() -> str:
    """The training text: the documentation topics of the running Python (`pydoc_data.topics`)."""
    from pydoc_data.topics import topics

    return "\n\n".join(topics[k].strip() for k in sorted(topics))


def _torch():
    import torch

    return torch


def TinyGPT(vocab_size: int = VOCAB_SIZE, n_layer: int = N_LAYER, n_head: int = N_HEAD, d_model: int = D_MODEL,
            context: int = CONTEXT, sdpa: bool = False):
    """A new (untrained) decoder-only transformer; `TinyGPT()` has the course model's shape.

    `sdpa=True` computes attention with `torch.nn.functional.scaled_dot_product_attention` instead of
    written-out matmuls and softmax: the same function of the same weights, exported as other nodes."""
    torch = _torch()
    nn = torch.nn
    F = torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(d_model)
            self.qkv = nn.Linear(d_model, 3 * d_model)
            self.proj = nn.Linear(d_model, d_model)
            self.ln2 = nn.LayerNorm(d_model)
            self.fc1 = nn.Linear(d_model, 4 * d_model)
            self.fc2 = nn.Linear(4 * d_model, d_model)

        def forward(self, x, past_k=None, past_v=None):
            b, t, c = x.shape
            hd = c // n_head
            q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
            q = q.view(b, t, n_head, hd).transpose(1, 2)
            k = k.view(b, t, n_head, hd).transpose(1, 2)
            v = v.view(b, t, n_head, hd).transpose(1, 2)
            if past_k is not None:
                k = torch.cat([past_k, k], dim=2)
                v = torch.cat([past_v, v], dim=2)
            s = k.shape[2]
            # query i sits at position (s - t) + i and may look at keys 0 .. (s - t) + i
            future = torch.arange(s).unsqueeze(0) > (torch.arange(t).unsqueeze(1) + (s - t))
            if sdpa:
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=~future)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / hd ** 0.5)
                att = att.masked_fill(future, float("-inf")).softmax(dim=-1)
                y = att @ v
            y = y.transpose(1, 2).reshape(b, t, c)
            x = x + self.proj(y)
            x = x + self.fc2(F.gelu(self.fc1(self.ln2(x))))
            return x, k, v

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.context = context
            self.n_layer, self.n_head, self.d_model = n_layer, n_head, d_model
            self.tok = nn.Embedding(vocab_size, d_model)
            self.pos = nn.Embedding(context, d_model)
            self.blocks = nn.ModuleList([Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(d_model)
            self.head = nn.Linear(d_model, vocab_size, bias=False)

        def forward(self, ids, past_keys=None, past_values=None):
            """Logits (batch, seq, vocab) and the present keys and values (n_layer, batch, head, past+seq, head_dim)."""
            t = ids.shape[1]
            past = 0 if past_keys is None else past_keys.shape[3]
            x = self.tok(ids) + self.pos(torch.arange(t) + past)
            keys, values = [], []
            for i, block in enumerate(self.blocks):
                x, k, v = block(x, None if past_keys is None else past_keys[i],
                                None if past_values is None else past_values[i])
                keys.append(k)
                values.append(v)
            return self.head(self.ln_f(x)), torch.stack(keys), torch.stack(values)

    return Model()


def LogitsOnly(model):
    """Wraps a TinyGPT so that `forward(ids)` returns only the logits (the graph lesson 09 exports first);
    `.context` is the longest sequence it takes."""
    nn = _torch().nn

    class Wrapper(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model
            self.context = model.context

        def forward(self, ids):
            return self.model(ids)[0]

    return Wrapper().eval()


def random_state(seed: int) -> tuple[dict, dict[str, np.ndarray]]:
    """A small random TinyGPT configuration and its weights, drawn from `seed` with numpy (no torch):
    `(config, state)` where `TinyGPT(**config).load_state_dict(state)` builds it. Test material for
    lesson 09: a model the learner has never seen, the same on every machine."""
    rng = np.random.default_rng(seed)
    n_head = int(rng.choice([2, 4]))
    d = n_head * int(rng.choice([8, 12]))
    config = dict(vocab_size=VOCAB_SIZE, n_layer=int(rng.integers(1, 3)), n_head=n_head, d_model=d, context=64)

    def w(*shape, scale=0.3):
        return (rng.normal(size=shape) * scale).astype(np.float32)

    state = {"tok.weight": w(VOCAB_SIZE, d, scale=1.0), "pos.weight": w(64, d, scale=0.5)}
    for i in range(config["n_layer"]):
        for name, shape in (("ln1", (d,)), ("qkv", (3 * d, d)), ("proj", (d, d)), ("ln2", (d,)),
                            ("fc1", (4 * d, d)), ("fc2", (d, 4 * d))):
            if name.startswith("ln"):
                state[f"blocks.{i}.{name}.weight"] = 1 + w(d, scale=0.1)
            else:
                state[f"blocks.{i}.{name}.weight"] = w(*shape, scale=1 / shape[1] ** 0.5)
            state[f"blocks.{i}.{name}.bias"] = w(shape[0], scale=0.1)
    state["ln_f.weight"], state["ln_f.bias"] = 1 + w(d, scale=0.1), w(d, scale=0.1)
    state["head.weight"] = w(VOCAB_SIZE, d, scale=1 / d ** 0.5)
    return config, state


def gpt_from_state(config: dict, state: dict[str, np.ndarray], sdpa: bool = False):
    """A TinyGPT of shape `config` holding the numpy arrays of `state`, in eval mode."""
    torch = _torch()
    model = TinyGPT(**config, sdpa=sdpa)
    model.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in state.items() if k != "heldout"})
    return model.eval()


_state: dict | None = None


def read_weights(path: Path = WEIGHTS_FILE, sha256: str = WEIGHTS_SHA256) -> dict[str, np.ndarray]:
    """The shipped file's arrays (state dict plus `heldout`), after checking its SHA-256 (no torch needed)."""
    return _read_weights(path, sha256, what="course transformer", regenerate="labkit course-model --transformer")


def _weights() -> dict[str, np.ndarray]:
    global _state
    if _state is None:
        _state = read_weights()
    return _state


def trained_gpt(sdpa: bool = False):
    """The course TinyGPT with the shipped weights (hash-verified), in eval mode: the same model on every machine.

    `sdpa=True` builds it with `scaled_dot_product_attention` (the same function, other exported nodes)."""
    return gpt_from_state({}, _weights(), sdpa=sdpa)


def course_weights() -> dict[str, np.ndarray]:
    """The course transformer's weights as numpy arrays (hash-verified; no torch needed)."""
    return {k: v for k, v in _weights().items() if k != "heldout"}


def heldout_text() -> str:
    """The held-out text (never trained on), shipped with the weights: where lesson 09 measures quality."""
    return decode(_weights()["heldout"])


def _split(text: str) -> tuple[np.ndarray, np.ndarray]:
    ids = encode(text)
    return ids[:-HELDOUT_CHARS], ids[-HELDOUT_CHARS:]


def train(steps: int = STEPS, seed: int = SEED, batch: int = 24, lr: float = 3e-3, progress: bool = True):
    """Train a new TinyGPT on `corpus()` minus its last `HELDOUT_CHARS` characters with AdamW, one thread.

    Returns the model in eval mode and the held-out ids."""
    from tqdm.auto import tqdm

    torch = _torch()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(seed)
        train_ids, held = _split(corpus())
        data = torch.from_numpy(train_ids)
        model = TinyGPT()
        opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.05)
        gen = torch.Generator().manual_seed(seed)
        model.train()
        bar = tqdm(range(steps), desc="training", disable=not progress, leave=False)
        for _ in bar:
            start = torch.randint(0, len(data) - CONTEXT - 1, (batch,), generator=gen)
            x = torch.stack([data[s:s + CONTEXT] for s in start])
            y = torch.stack([data[s + 1:s + CONTEXT + 1] for s in start])
            logits = model(x)[0]
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB_SIZE), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            bar.set_postfix(loss=f"{loss.item():.3f}")
        return model.eval(), held
    finally:
        torch.set_num_threads(threads)


def perplexity_of(model, ids: np.ndarray, context: int = CONTEXT) -> tuple[float, float]:
    """Perplexity and next-token accuracy of a torch TinyGPT on `ids`, in windows of `context` tokens."""
    torch = _torch()
    ids = np.asarray(ids, np.int64)
    n = (len(ids) - 1) // context * context
    x = torch.from_numpy(ids[:n].reshape(-1, context))
    y = torch.from_numpy(ids[1:n + 1].reshape(-1, context))
    with torch.no_grad():
        logits = model(x)[0]
    nll = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
    return float(torch.exp(nll)), float((logits.argmax(-1) == y).float().mean())


def write_course_model(steps: int = STEPS, seed: int = SEED, path: Path = WEIGHTS_FILE) -> tuple[str, float]:
    """Maintainers: train the course transformer, write its weights (and the held-out text) to `path` and
    its SHA-256 into this module. Returns the SHA-256 and the held-out perplexity."""
    global _state
    model, held = train(steps=steps, seed=seed, progress=False)
    state = {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}
    state["heldout"] = held.astype(np.uint8)
    sha = save_weights(state, path, Path(__file__))
    _state = None
    return sha, perplexity_of(model, held)[0]


def GenaiLayout(model):
    """Wraps a TinyGPT with the inputs and outputs onnxruntime-genai expects of a decoder: `forward(input_ids,
    attention_mask, position_ids, past)` with `past` the per-layer keys and values [k0, v0, k1, v1, ...],
    each (batch, head, past, head_dim); returns the logits and the present keys and values in the same order.

    The same weights and function as `model` on an all-ones mask with positions 0, 1, ...; keys whose mask is
    0 (padding) get no attention. A masked score is -1e9, not -inf, so a padding row that sees no key gives a
    uniform row instead of NaN (exp(-1e9 - max) is exactly 0 in float32, so unmasked rows are unchanged)."""
    torch = _torch()
    nn, F = torch.nn, torch.nn.functional

    class Wrapper(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, position_ids, past):
            m = self.model
            b, t = input_ids.shape
            c, nh = m.d_model, m.n_head
            hd = c // nh
            s = past[0].shape[2] + t
            causal = torch.arange(s).unsqueeze(0) <= torch.arange(t).unsqueeze(1) + (s - t)
            allowed = causal[None, None] & attention_mask[:, None, None, :].bool()
            x = m.tok(input_ids) + m.pos(position_ids)
            present = []
            for i, blk in enumerate(m.blocks):
                q, k, v = (z.view(b, t, nh, hd).transpose(1, 2) for z in blk.qkv(blk.ln1(x)).split(c, dim=2))
                k = torch.cat([past[2 * i], k], dim=2)
                v = torch.cat([past[2 * i + 1], v], dim=2)
                att = (q @ k.transpose(-2, -1)) * (1.0 / hd ** 0.5)
                y = att.masked_fill(~allowed, -1e9).softmax(dim=-1) @ v
                x = x + blk.proj(y.transpose(1, 2).reshape(b, t, c))
                x = x + blk.fc2(F.gelu(blk.fc1(blk.ln2(x))))
                present += [k, v]
            return (m.head(m.ln_f(x)), *present)

    return Wrapper().eval()
