"""Plots and viewers the lessons share (matplotlib; Netron for graphs)."""
from __future__ import annotations

from typing import Sequence

from .bench import Timing


def plot_timings(timings: Sequence[Timing], title: str = "", ax=None, unit: str = "ms"):
    """Bar chart of median latencies with p10–p90 error bars (the spread of the runs)."""
    import matplotlib.pyplot as plt
    import numpy as np

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3))
    med = np.array([t.median_ms for t in timings])
    err = np.array([[t.median_ms - t.p10_ms for t in timings], [t.p90_ms - t.median_ms for t in timings]])
    ax.bar([t.label for t in timings], med, yerr=err, capsize=4, color="#4c72b0")
    ax.set_ylabel(f"median latency ({unit})")
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    return ax


# ---------------------------------------------------------------- Netron

#: (host, port) of the Netron server `netron()` started last, stopped when replaced or at exit
_netron_address: tuple[str, int] | None = None
_netron_atexit = False


def netron_url(port: int) -> str:
    """Where a browser reaches a local Netron server on `port`.

    Locally that is `http://127.0.0.1:<port>/`. On JupyterHub or Binder the browser is elsewhere, so
    the page goes through jupyter-server-proxy: `$JUPYTERHUB_SERVICE_PREFIX/proxy/<port>/`. The
    trailing slash matters: Netron fetches the model relative to the page's folder.
    """
    import os

    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "")
    if prefix:
        return f"{prefix.rstrip('/')}/proxy/{int(port)}/"
    return f"http://127.0.0.1:{int(port)}/"


def stop_netron() -> None:
    """Stop the Netron server `netron()` started, if one runs."""
    global _netron_address
    if _netron_address is not None:
        import netron as _nt

        _nt.stop(_netron_address)
        _netron_address = None


def _short_title(name: str) -> None:
    """Title the Netron page with the file's name, not the whole path `netron.serve` puts in its
    `name` meta tag (a model inside a package would show its site-packages path). netron 9.3 keeps
    what it serves on its request handler class; if that changes, the page keeps the long title."""
    import netron.server as _server

    content = getattr(getattr(_server, "_HTTPRequestHandler", None), "content", None)
    if content is not None and hasattr(content, "name"):
        content.name = name


def netron(model_or_path, port: int | None = None, height: int = 600):
    """Show an ONNX model in Netron inside the notebook; returns an IPython IFrame.

    `model_or_path` is an `onnx.ModelProto`, serialized model bytes, or the path of a model file
    (files saved with external data are served with the `.data` file beside them). Netron serves on
    127.0.0.1 (a free port unless `port` is given); the previous viewer's server is stopped.
    """
    global _netron_address, _netron_atexit
    import atexit
    import logging
    import os
    import tempfile

    import netron as _nt
    from IPython.display import IFrame

    if hasattr(model_or_path, "SerializeToString"):
        file, data = None, bytearray(model_or_path.SerializeToString())
    elif isinstance(model_or_path, (bytes, bytearray)):
        file, data = None, bytearray(model_or_path)
    else:
        file, data = os.fspath(model_or_path), None
        if not os.path.isfile(file):
            raise FileNotFoundError(f"no model file at {file!r}")
    if file is None:
        # a name in a folder that does not exist: Netron serves the bytes and no other file
        file = os.path.join(tempfile.gettempdir(), f"labkit-netron-{os.getpid()}", "model.onnx")
    stop_netron()
    root = logging.getLogger()
    guard = None
    if not root.hasHandlers():  # netron.serve would otherwise call logging.basicConfig(INFO)
        guard = logging.NullHandler()
        root.addHandler(guard)
    try:
        _netron_address = tuple(_nt.serve(file, data, address=("127.0.0.1", int(port or 0)), browse=False))
    finally:
        if guard is not None:
            root.removeHandler(guard)
    _short_title(os.path.basename(file))
    if not _netron_atexit:
        atexit.register(stop_netron)
        _netron_atexit = True
    return IFrame(netron_url(_netron_address[1]), width="100%", height=height)


def plot_grouped_timings(series: dict[str, Sequence[Timing]], groups: Sequence[str], title: str = "",
                         ax=None, unit: str = "ms", log: bool = False):
    """Grouped bars: one group per entry of `groups` (e.g. batch sizes), one bar per series (e.g. engine).

    `series` maps a label ("ONNX Runtime") to one Timing per group. Bars show the median, error
    bars the p10–p90 spread. `log=True` uses a log scale when groups differ by orders of magnitude.
    """
    import matplotlib.pyplot as plt
    import numpy as np

    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 3.2))
    x = np.arange(len(groups))
    width = 0.8 / max(1, len(series))
    for i, (label, timings) in enumerate(series.items()):
        med = np.array([t.median_ms for t in timings])
        err = np.array([[t.median_ms - t.p10_ms for t in timings], [t.p90_ms - t.median_ms for t in timings]])
        ax.bar(x + (i - (len(series) - 1) / 2) * width, med, width, yerr=err, capsize=3, label=label)
    ax.set_xticks(x, [str(g) for g in groups])
    ax.set_ylabel(f"median latency ({unit})")
    if log:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend()
    return ax


def op_diff_explorer(op_counts: dict, timings: dict | None = None, base: str | None = None):
    """A dropdown of graph versions (e.g. optimization levels) showing the op-type diff against `base`.

    `op_counts` maps a label ("BASIC") to a Counter of op types in that graph, `timings` the same
    labels to a `Timing` (optional). Picking a label shows its node count, the operators removed
    and added compared with `base` (default: the first label) and its median latency.
    """
    import html
    from collections import Counter

    import ipywidgets as w

    labels = list(op_counts)
    base = base or labels[0]
    e = html.escape

    def table(counter: Counter, color: str) -> str:
        if not counter:
            return "<i>none</i>"
        return "".join(f"<div style='color:{color}'>{n} × <code>{e(op)}</code></div>"
                       for op, n in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))

    def render(label: str) -> str:
        now, ref = Counter(op_counts[label]), Counter(op_counts[base])
        gone, new = ref - now, now - ref
        t = (timings or {}).get(label)
        speed = (f"median latency <b>{t.median_ms:.1f} ms</b> (p10–p90 {t.p10_ms:.1f}–{t.p90_ms:.1f} ms)"
                 if t is not None else "")
        return (f"<div style='font-family:sans-serif;font-size:13px'><b>{e(label)}</b>: "
                f"{sum(now.values())} nodes ({base}: {sum(ref.values())}){' · ' + speed if speed else ''}"
                f"<div style='display:flex;gap:2em;margin-top:4px'>"
                f"<div><b>removed vs {e(base)}</b> ({sum(gone.values())})<br>{table(gone, '#cf222e')}</div>"
                f"<div><b>added vs {e(base)}</b> ({sum(new.values())})<br>{table(new, '#1a7f37')}</div></div></div>")

    class Explorer(w.VBox):
        def _ipython_display_(self) -> None:   # with a static copy that survives a reopened notebook
            from .checks.display import show_with_fallback

            show_with_fallback(self, render(pick.value))

    pick = w.Dropdown(options=labels, value=labels[-1], description="level")
    view = w.HTML(render(labels[-1]))
    pick.observe(lambda change: setattr(view, "value", render(change["new"])), names="value")
    return Explorer([pick, view])
