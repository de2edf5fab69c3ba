"""IPython startup file for nbval's run of the solutions (see `make test-notebooks`): every ONNX Runtime
session a notebook opens without choosing a thread count gets one intra-op thread instead of one per
core, so float sums take another path. Committed outputs must hold on it too."""
import onnxruntime as _ort

_original_init = _ort.InferenceSession.__init__


def _one_thread_init(self, path_or_bytes, sess_options=None, *args, **kwargs):
    options = sess_options if sess_options is not None else _ort.SessionOptions()
    if options.intra_op_num_threads == 0:  # 0 = ORT's default: one thread per physical core
        options.intra_op_num_threads = 1
    _original_init(self, path_or_bytes, options, *args, **kwargs)


_ort.InferenceSession.__init__ = _one_thread_init
