"""Blind corpus round 13, lesson 06 (written without seeing the judges).

Truths relied on:
- 06.calibration: the answer is the FUNCTION `quantize_digits(model_path, images)` (the check receives only it,
  so every answer here carries its own reader class inside). Truth = onnxruntime.quantization.quantize_static(
  model, out, reader, quant_format=QDQ, per_channel=True) with the defaults MinMax / QInt8 activations / QInt8
  weights / reduce_range=False, reader = every image of `images` once, as float32, under the model's own input
  name; returned as an onnx.ModelProto (onnx.load). Proved on hand-built CNNs (input names "pixels", "image",
  "x") and unseen digits (flipped/noisy test digits): same QDQ nodes, same scale/zero-point initializers, same
  outputs as the reference.
- MinMax calibration is a min/max over all batches, so the batch size and the batch order do not change the
  result (checked: batches of 1 image, 7 images, or one batch of all give identical models).
- CalibrationDataReader has a __subclasshook__ (anything with get_next() is one): a duck-typed reader works.
- 06.int4_blocks truth = onnxruntime.capi._pybind_state.quantize_matmul_4bits (the C++ behind
  MatMulNBitsQuantizer, is_symmetric=False), unpacked low nibble first, for block sizes 16..256; for 8/12/24
  my own numpy reference (ORT refuses those sizes: "Only block sizes 16, 32, 64, 128, 256 are supported").
  ORT computes 1/scale and multiplies; dividing gives the same codes on ~1M random weights.
Ambiguities found in the prompts:
- int4_blocks, padding codes: ORT mostly leaves the codes of the zero padding rows at 0, while the prompt's
  literal recipe (pad with zeros, then q = clip(round(w/s + z))) puts z there. MatMulNBits never reads them.
  Both forms are labelled Right here (right-int4-ort-padding-zero writes 0, the others write z). Surprise: for
  an ODD K, ORT's own MatMulNBitsQuantizer writes a nonzero code into the padding slot next to the last real
  row (K=17, blocks of 16: the byte 0x4F holds codes 15 and 4 while that block's zero point is 0), so padding
  codes can be compared with neither 0 nor z: only the first K rows are well defined.
- int4_blocks, arithmetic precision: computing the block range/scale in float64 then casting gives scales
  that differ from ORT's float32 scales by 1 ulp in ~8% of blocks (codes and zero points identical). The
  prompt only says "scales as np.float32"; labelled Right (right-int4-python-loop-float64). If the judge wants
  bit-exact scales it will reject it.
- int4_blocks, a block of zeros: an unguarded 0/0 gives nan, and nan.astype(uint8) is 0 on x86, so a learner
  who "never divides by zero" only by luck gets ORT's arrays (with RuntimeWarnings). Not included.
- calibration: the prompt says "write the result to a temporary folder and return it loaded": returning the
  path instead is labelled outputs_wrong=False; whether quant_pre_process inside quantize_digits is allowed is
  not stated (not included).
"""
from corpus import Right, Wrong

# ============================================================================ 06.calibration
# Every answer defines its reader inside the function: the check gets only quantize_digits.


def right_calib_list_of_batches(model_path, images):
    # reader = a precomputed list of batches; input name = the first graph input that is not an initializer
    import tempfile
    from pathlib import Path

    import numpy as np
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static

    class DigitsReader(CalibrationDataReader):
        def __init__(self, images, input_name="image", batch_size=64):
            data = np.asarray(images, dtype=np.float32)
            self.batches = [{input_name: data[i:i + batch_size]} for i in range(0, len(data), batch_size)]
            self.pos = 0

        def get_next(self):
            if self.pos >= len(self.batches):
                return None
            self.pos += 1
            return self.batches[self.pos - 1]

        def rewind(self):
            self.pos = 0

    model = onnx.load(str(model_path))
    inits = {i.name for i in model.graph.initializer}
    name = next(i.name for i in model.graph.input if i.name not in inits)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "static.onnx"
        quantize_static(str(model_path), str(out), DigitsReader(images, name),
                        quant_format=QuantFormat.QDQ, per_channel=True)
        return onnx.load(str(out))


def right_calib_quant_config(model_path, images):
    # StaticQuantConfig + quantize(); reader is a generator over single images; input name from an ORT session
    import os
    import tempfile

    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import (CalibrationMethod, QuantFormat, QuantType, StaticQuantConfig,
                                          quantize)

    class OneByOne:
        def __init__(self, images, input_name):
            self.images, self.name = images, input_name
            self.rewind()

        def rewind(self):
            self.it = ({self.name: np.array(self.images[i:i + 1], dtype=np.float32)}
                       for i in range(len(self.images)))

        def get_next(self):
            return next(self.it, None)

    name = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"]).get_inputs()[0].name
    cfg = StaticQuantConfig(OneByOne(images, name), calibrate_method=CalibrationMethod.MinMax,
                            quant_format=QuantFormat.QDQ, activation_type=QuantType.QInt8,
                            weight_type=QuantType.QInt8, per_channel=True, reduce_range=False)
    fd, out = tempfile.mkstemp(suffix=".onnx")
    os.close(fd)
    try:
        quantize(str(model_path), out, cfg)
        with open(out, "rb") as fh:
            return onnx.load_model_from_string(fh.read())
    finally:
        os.remove(out)


def right_calib_modelproto_one_batch(model_path, images):
    # hands quantize_static a ModelProto; the reader gives all images in ONE batch (MinMax: same ranges);
    # every default spelled out
    import pathlib
    import shutil
    import tempfile

    import numpy as np
    import onnx
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                          quantize_static)

    class DigitsReader(CalibrationDataReader):
        def __init__(self, images, input_name="image", batch_size=64):
            self.images, self.input_name, self.batch_size = images, input_name, batch_size
            self.start = 0

        def get_next(self):
            if self.start >= len(self.images):
                return None
            stop = min(self.start + self.batch_size, len(self.images))
            batch = np.ascontiguousarray(self.images[self.start:stop], dtype=np.float32)
            self.start = stop
            return {self.input_name: batch}

        def rewind(self):
            self.start = 0

    proto = onnx.load(pathlib.Path(model_path))
    name = proto.graph.input[0].name
    tmp = tempfile.mkdtemp()
    try:
        dst = pathlib.Path(tmp, "q.onnx")
        quantize_static(proto, dst, DigitsReader(images, name, batch_size=max(1, len(images))),
                        quant_format=QuantFormat.QDQ, per_channel=True, reduce_range=False,
                        activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                        calibrate_method=CalibrationMethod.MinMax)
        return onnx.load(dst)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def right_calib_odd_batches(model_path, images):
    # batches of 7 built with np.array_split, reader keeps an index; per_channel passed positionally-free kwargs
    import tempfile
    from pathlib import Path

    import numpy as np
    import onnx
    from onnxruntime.quantization import QuantFormat, quantize_static

    class Reader:
        def __init__(self, images, input_name, batch_size=7):
            arr = np.asarray(images, np.float32)
            n = max(1, -(-len(arr) // batch_size))
            self.parts = [p for p in np.array_split(arr, n) if len(p)]
            self.input_name, self.i = input_name, 0

        def get_next(self):
            if self.i == len(self.parts):
                return None
            self.i += 1
            return {self.input_name: self.parts[self.i - 1]}

        def rewind(self):
            self.i = 0

    m = onnx.load(str(model_path), load_external_data=False)
    with tempfile.TemporaryDirectory() as d:
        out = Path(d, "out.onnx")
        quantize_static(model_input=Path(model_path), model_output=out,
                        calibration_data_reader=Reader(images, m.graph.input[0].name),
                        per_channel=True, quant_format=QuantFormat.QDQ)
        return onnx.load(out)


def wrong_calib_qoperator(model_path, images):
    # QOperator format (QLinearConv...) instead of QDQ
    import tempfile
    from pathlib import Path

    import numpy as np
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static

    class DigitsReader(CalibrationDataReader):
        def __init__(self, images, input_name="image", batch_size=64):
            self.images, self.input_name, self.batch_size, self.i = images, input_name, batch_size, 0
            self.starts = list(range(0, len(images), batch_size))

        def get_next(self):
            if self.i >= len(self.starts):
                return None
            s = self.starts[self.i]
            self.i += 1
            batch = np.asarray(self.images[s:s + self.batch_size], np.float32)
            return {self.input_name: batch}

        def rewind(self):
            self.i = 0

    model = onnx.load(str(model_path))
    out = Path(tempfile.mkdtemp()) / "static.onnx"
    quantize_static(str(model_path), str(out), DigitsReader(images, model.graph.input[0].name),
                    quant_format=QuantFormat.QOperator, per_channel=True, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax,
                    reduce_range=False, extra_options=None)
    return onnx.load(str(out))


def wrong_calib_per_tensor(model_path, images):
    # forgets per_channel=True (quantize_static's default is per-tensor)
    import tempfile
    from pathlib import Path

    import numpy as np
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static

    class DigitsReader(CalibrationDataReader):
        def __init__(self, images, input_name="image", batch_size=64):
            self.images, self.input_name, self.batch_size, self.i = images, input_name, batch_size, 0
            self.starts = list(range(0, len(images), batch_size))

        def get_next(self):
            if self.i >= len(self.starts):
                return None
            s = self.starts[self.i]
            self.i += 1
            batch = np.asarray(self.images[s:s + self.batch_size], np.float32)
            return {self.input_name: batch}

        def rewind(self):
            self.i = 0

    model = onnx.load(str(model_path))
    out = Path(tempfile.mkdtemp()) / "static.onnx"
    quantize_static(str(model_path), str(out), DigitsReader(images, model.graph.input[0].name),
                    quant_format=QuantFormat.QDQ, per_channel=False, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax,
                    reduce_range=False, extra_options=None)
    return onnx.load(str(out))


def wrong_calib_uint8_activations(model_path, images):
    # uint8 activations (the NNAPI setting) instead of the default int8
    import tempfile
    from pathlib import Path

    import numpy as np
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static

    class DigitsReader(CalibrationDataReader):
        def __init__(self, images, input_name="image", batch_size=64):
            self.images, self.input_name, self.batch_size, self.i = images, input_name, batch_size, 0
            self.starts = list(range(0, len(images), batch_size))

        def get_next(self):
            if self.i >= len(self.starts):
                return None
            s = self.starts[self.i]
            self.i += 1
            batch = np.asarray(self.images[s:s + self.batch_size], np.float32)
            return {self.input_name: batch}

        def rewind(self):
            self.i = 0

    model = onnx.load(str(model_path))
    out = Path(tempfile.mkdtemp()) / "static.onnx"
    quantize_static(str(model_path), str(out), DigitsReader(images, model.graph.input[0].name),
                    quant_format=QuantFormat.QDQ, per_channel=True, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax,
                    reduce_range=False, extra_options=None)
    return onnx.load(str(out))


def wrong_calib_percentile(model_path, images):
    # Percentile calibration instead of the default MinMax (one batch of all images: Percentile needs
    # equal-sized batches)
    import tempfile
    from pathlib import Path

    import numpy as np
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static

    class DigitsReader(CalibrationDataReader):
        def __init__(self, images, input_name="image", batch_size=64):
            self.images, self.input_name, self.batch_size, self.i = images, input_name, batch_size, 0
            self.starts = list(range(0, len(images), batch_size))

        def get_next(self):
            if self.i >= len(self.starts):
                return None
            s = self.starts[self.i]
            self.i += 1
            batch = np.asarray(self.images[s:s + self.batch_size], np.float32)
            return {self.input_name: batch}

        def rewind(self):
            self.i = 0

    model = onnx.load(str(model_path))
    out = Path(tempfile.mkdtemp()) / "static.onnx"
    quantize_static(str(model_path), str(out), DigitsReader(images, model.graph.input[0].name, batch_size=len(images)),
                    quant_format=QuantFormat.QDQ, per_channel=True, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.Percentile,
                    reduce_range=False, extra_options=None)
    return onnx.load(str(out))


def wrong_calib_rescaled_again(model_path, images):
    # divides the images by 16 again ("raw pixels are 0..16"), though they are already in [0, 1]
    import tempfile
    from pathlib import Path

    import numpy as np
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static

    class DigitsReader(CalibrationDataReader):
        def __init__(self, images, input_name="image", batch_size=64):
            self.images, self.input_name, self.batch_size, self.i = images, input_name, batch_size, 0
            self.starts = list(range(0, len(images), batch_size))

        def get_next(self):
            if self.i >= len(self.starts):
                return None
            s = self.starts[self.i]
            self.i += 1
            batch = np.asarray(self.images[s:s + self.batch_size], np.float32) / np.float32(16)
            return {self.input_name: batch}

        def rewind(self):
            self.i = 0

    model = onnx.load(str(model_path))
    out = Path(tempfile.mkdtemp()) / "static.onnx"
    quantize_static(str(model_path), str(out), DigitsReader(images, model.graph.input[0].name),
                    quant_format=QuantFormat.QDQ, per_channel=True, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax,
                    reduce_range=False, extra_options=None)
    return onnx.load(str(out))


def wrong_calib_hardcoded_name(model_path, images):
    # feeds the reader under "image" whatever the model's input is called
    import tempfile
    from pathlib import Path

    import numpy as np
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static

    class DigitsReader(CalibrationDataReader):
        def __init__(self, images, input_name="image", batch_size=64):
            self.images, self.input_name, self.batch_size, self.i = images, input_name, batch_size, 0
            self.starts = list(range(0, len(images), batch_size))

        def get_next(self):
            if self.i >= len(self.starts):
                return None
            s = self.starts[self.i]
            self.i += 1
            batch = np.asarray(self.images[s:s + self.batch_size], np.float32)
            return {self.input_name: batch}

        def rewind(self):
            self.i = 0

    out = Path(tempfile.mkdtemp()) / "static.onnx"
    quantize_static(str(model_path), str(out), DigitsReader(images, "image"),
                    quant_format=QuantFormat.QDQ, per_channel=True, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax,
                    reduce_range=False, extra_options=None)
    return onnx.load(str(out))


def wrong_calib_drops_last_batch(model_path, images):
    # range(len // batch_size): the incomplete last batch is never handed out
    import tempfile
    from pathlib import Path

    import numpy as np
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static

    class DigitsReader(CalibrationDataReader):
        def __init__(self, images, input_name="image", batch_size=64):
            self.images, self.input_name, self.batch_size, self.i = images, input_name, batch_size, 0
            self.starts = [j * batch_size for j in range(len(images) // batch_size)]

        def get_next(self):
            if self.i >= len(self.starts):
                return None
            s = self.starts[self.i]
            self.i += 1
            batch = np.asarray(self.images[s:s + self.batch_size], np.float32)
            return {self.input_name: batch}

        def rewind(self):
            self.i = 0

    model = onnx.load(str(model_path))
    out = Path(tempfile.mkdtemp()) / "static.onnx"
    quantize_static(str(model_path), str(out), DigitsReader(images, model.graph.input[0].name),
                    quant_format=QuantFormat.QDQ, per_channel=True, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax,
                    reduce_range=False, extra_options=None)
    return onnx.load(str(out))


def wrong_calib_first_batch_only(model_path, images):
    # reader hands out the first batch, then None: calibrated on 64 images only
    import tempfile
    from pathlib import Path

    import numpy as np
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static

    class DigitsReader(CalibrationDataReader):
        def __init__(self, images, input_name="image", batch_size=64):
            self.images, self.input_name, self.batch_size, self.i = images, input_name, batch_size, 0
            self.starts = [0]

        def get_next(self):
            if self.i >= len(self.starts):
                return None
            s = self.starts[self.i]
            self.i += 1
            batch = np.asarray(self.images[s:s + self.batch_size], np.float32)
            return {self.input_name: batch}

        def rewind(self):
            self.i = 0

    model = onnx.load(str(model_path))
    out = Path(tempfile.mkdtemp()) / "static.onnx"
    quantize_static(str(model_path), str(out), DigitsReader(images, model.graph.input[0].name),
                    quant_format=QuantFormat.QDQ, per_channel=True, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax,
                    reduce_range=False, extra_options=None)
    return onnx.load(str(out))


def wrong_calib_reduce_range(model_path, images):
    # reduce_range=True (7-bit weights, the advice for old x86 CPUs)
    import tempfile
    from pathlib import Path

    import numpy as np
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static

    class DigitsReader(CalibrationDataReader):
        def __init__(self, images, input_name="image", batch_size=64):
            self.images, self.input_name, self.batch_size, self.i = images, input_name, batch_size, 0
            self.starts = list(range(0, len(images), batch_size))

        def get_next(self):
            if self.i >= len(self.starts):
                return None
            s = self.starts[self.i]
            self.i += 1
            batch = np.asarray(self.images[s:s + self.batch_size], np.float32)
            return {self.input_name: batch}

        def rewind(self):
            self.i = 0

    model = onnx.load(str(model_path))
    out = Path(tempfile.mkdtemp()) / "static.onnx"
    quantize_static(str(model_path), str(out), DigitsReader(images, model.graph.input[0].name),
                    quant_format=QuantFormat.QDQ, per_channel=True, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax,
                    reduce_range=True, extra_options=None)
    return onnx.load(str(out))


def wrong_calib_symmetric_activations(model_path, images):
    # symmetric activation ranges (ActivationSymmetric) instead of the asymmetric default
    import tempfile
    from pathlib import Path

    import numpy as np
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static

    class DigitsReader(CalibrationDataReader):
        def __init__(self, images, input_name="image", batch_size=64):
            self.images, self.input_name, self.batch_size, self.i = images, input_name, batch_size, 0
            self.starts = list(range(0, len(images), batch_size))

        def get_next(self):
            if self.i >= len(self.starts):
                return None
            s = self.starts[self.i]
            self.i += 1
            batch = np.asarray(self.images[s:s + self.batch_size], np.float32)
            return {self.input_name: batch}

        def rewind(self):
            self.i = 0

    model = onnx.load(str(model_path))
    out = Path(tempfile.mkdtemp()) / "static.onnx"
    quantize_static(str(model_path), str(out), DigitsReader(images, model.graph.input[0].name),
                    quant_format=QuantFormat.QDQ, per_channel=True, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax,
                    reduce_range=False, extra_options={"ActivationSymmetric": True})
    return onnx.load(str(out))


def wrong_calib_course_digits(model_path, images):
    # calibrates on the course's training digits (a notebook global) instead of the `images` given
    import tempfile
    from pathlib import Path

    import numpy as np
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static
    import labkit

    x_calib = labkit.digits().x_train

    class DigitsReader(CalibrationDataReader):
        def __init__(self, images, input_name="image", batch_size=64):
            self.images, self.input_name, self.batch_size, self.i = images, input_name, batch_size, 0
            self.starts = list(range(0, len(images), batch_size))

        def get_next(self):
            if self.i >= len(self.starts):
                return None
            s = self.starts[self.i]
            self.i += 1
            batch = np.asarray(self.images[s:s + self.batch_size], np.float32)
            return {self.input_name: batch}

        def rewind(self):
            self.i = 0

    model = onnx.load(str(model_path))
    out = Path(tempfile.mkdtemp()) / "static.onnx"
    quantize_static(str(model_path), str(out), DigitsReader(x_calib, model.graph.input[0].name),
                    quant_format=QuantFormat.QDQ, per_channel=True, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax,
                    reduce_range=False, extra_options=None)
    return onnx.load(str(out))


def wrong_calib_returns_path(model_path, images):
    # right quantization, but returns the saved file's path instead of the loaded model
    import tempfile
    from pathlib import Path

    import numpy as np
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static

    class DigitsReader(CalibrationDataReader):
        def __init__(self, images, input_name="image", batch_size=64):
            self.images, self.input_name, self.batch_size, self.i = images, input_name, batch_size, 0
            self.starts = list(range(0, len(images), batch_size))

        def get_next(self):
            if self.i >= len(self.starts):
                return None
            s = self.starts[self.i]
            self.i += 1
            batch = np.asarray(self.images[s:s + self.batch_size], np.float32)
            return {self.input_name: batch}

        def rewind(self):
            self.i = 0

    model = onnx.load(str(model_path))
    out = Path(tempfile.mkdtemp()) / "static.onnx"
    quantize_static(str(model_path), str(out), DigitsReader(images, model.graph.input[0].name),
                    quant_format=QuantFormat.QDQ, per_channel=True, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax,
                    reduce_range=False, extra_options=None)
    return out


def wrong_calib_shuffles_input(model_path, images):
    # shuffles the caller's images IN PLACE first ("better calibration"); MinMax ignores order, so
    # the model is right, but the argument was mutated
    import tempfile
    from pathlib import Path

    import numpy as np
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static
    np.random.default_rng(0).shuffle(images)

    class DigitsReader(CalibrationDataReader):
        def __init__(self, images, input_name="image", batch_size=64):
            self.images, self.input_name, self.batch_size, self.i = images, input_name, batch_size, 0
            self.starts = list(range(0, len(images), batch_size))

        def get_next(self):
            if self.i >= len(self.starts):
                return None
            s = self.starts[self.i]
            self.i += 1
            batch = np.asarray(self.images[s:s + self.batch_size], np.float32)
            return {self.input_name: batch}

        def rewind(self):
            self.i = 0

    model = onnx.load(str(model_path))
    out = Path(tempfile.mkdtemp()) / "static.onnx"
    quantize_static(str(model_path), str(out), DigitsReader(images, model.graph.input[0].name),
                    quant_format=QuantFormat.QDQ, per_channel=True, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8, calibrate_method=CalibrationMethod.MinMax,
                    reduce_range=False, extra_options=None)
    return onnx.load(str(out))


# ---------------------------------------------------------------- shortcuts (calibration)


def shortcut_calib_unchanged(model_path, images):
    # returns the fp32 model, not quantized at all
    import onnx

    return onnx.load(str(model_path))


def shortcut_calib_dynamic(model_path, images):
    # quantize_dynamic: no calibration, no reader
    import tempfile
    from pathlib import Path

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory() as d:
        out = Path(d, "dyn.onnx")
        quantize_dynamic(str(model_path), str(out), weight_type=QuantType.QInt8, per_channel=True)
        return onnx.load(str(out))


def shortcut_calib_synthetic_data(model_path, images):
    # ignores the images: calibrates on two made-up batches (all 0 and all 1, "the full pixel range")
    import tempfile
    from pathlib import Path

    import numpy as np
    import onnx
    from onnxruntime.quantization import QuantFormat, quantize_static

    m = onnx.load(str(model_path))
    name = m.graph.input[0].name
    feeds = iter([{name: np.zeros((1, 1, 8, 8), np.float32)}, {name: np.ones((1, 1, 8, 8), np.float32)}])

    class R:
        def get_next(self):
            return next(feeds, None)

    with tempfile.TemporaryDirectory() as d:
        out = Path(d, "s.onnx")
        quantize_static(str(model_path), str(out), R(), quant_format=QuantFormat.QDQ, per_channel=True)
        return onnx.load(str(out))


def shortcut_calib_memoized(model_path, images):
    # quantizes once, then hands the same model back for every later call (whatever model/images)
    import tempfile
    from pathlib import Path

    import numpy as np
    import onnx
    from onnxruntime.quantization import QuantFormat, quantize_static

    cache = shortcut_calib_memoized.__dict__.setdefault("cache", [])
    if not cache:
        name = onnx.load(str(model_path)).graph.input[0].name
        feeds = iter([{name: np.asarray(images[i:i + 64], np.float32)} for i in range(0, len(images), 64)])

        class R:
            def get_next(self):
                return next(feeds, None)

        with tempfile.TemporaryDirectory() as d:
            out = Path(d, "q.onnx")
            quantize_static(str(model_path), str(out), R(), quant_format=QuantFormat.QDQ, per_channel=True)
            cache.append(onnx.load(str(out)))
    m = onnx.ModelProto()
    m.CopyFrom(cache[0])
    return m


# ============================================================================ 06.int4_blocks


def right_int4_vectorised_prompt(w, block_size):
    # vectorised: pad, transpose to (N, n_blocks, block_size), per-block range; padding codes = z (prompt recipe)
    import numpy as np

    w = np.asarray(w, dtype=np.float32)
    k, n = w.shape
    nb = -(-k // block_size)
    padded = np.zeros((nb * block_size, n), np.float32)
    padded[:k] = w
    blocks = np.ascontiguousarray(padded.T).reshape(n, nb, block_size)
    lo = np.minimum(blocks.min(axis=2), np.float32(0))
    hi = np.maximum(blocks.max(axis=2), np.float32(0))
    scales = ((hi - lo) / np.float32(15)).astype(np.float32)
    zero = scales == 0
    div = np.where(zero, np.float32(1), scales)
    zp = np.where(zero, 0, np.round(-lo / div))
    q = np.clip(np.round(blocks / div[..., None] + zp[..., None]), 0, 15)
    q[zero] = 0
    return q.astype(np.uint8), scales, zp.astype(np.uint8)


def right_int4_python_loop_float64(w, block_size):
    # loops over columns and blocks with Python floats (float64 arithmetic), casts at the end
    import math

    import numpy as np

    w = np.asarray(w)
    k, n = w.shape
    nb = math.ceil(k / block_size)
    q = np.zeros((n, nb, block_size), np.uint8)
    scales = np.zeros((n, nb), np.float32)
    zps = np.zeros((n, nb), np.uint8)
    for c in range(n):
        col = [float(v) for v in w[:, c]] + [0.0] * (nb * block_size - k)
        for b in range(nb):
            block = col[b * block_size:(b + 1) * block_size]
            lo, hi = min(min(block), 0.0), max(max(block), 0.0)
            s = (hi - lo) / 15.0
            if s == 0.0:
                continue  # scale 0, zero point 0, codes 0
            z = float(np.round(-lo / s))
            scales[c, b] = s
            zps[c, b] = int(z)
            for i, v in enumerate(block):
                q[c, b, i] = int(min(max(np.round(v / s + z), 0), 15))
    return q, scales, zps


def right_int4_ort_padding_zero(w, block_size):
    # ORT's own arithmetic: multiply by 1/scale, round halves away from zero, padding codes left at 0
    import numpy as np

    w = np.asarray(w, np.float32)
    k, n = w.shape
    nb = (k + block_size - 1) // block_size
    wt = np.pad(w, ((0, nb * block_size - k), (0, 0))).T.reshape(n, nb, block_size)
    lo = np.fmin(wt.min(-1), 0).astype(np.float32)
    hi = np.fmax(wt.max(-1), 0).astype(np.float32)
    s = (hi - lo) / np.float32(15)
    inv = np.divide(np.float32(1), s, out=np.zeros_like(s), where=s != 0)

    def roundf(v):
        return np.sign(v) * np.floor(np.abs(v) + np.float32(0.5))

    z = np.clip(roundf(-lo * inv), 0, 15)
    q = np.clip(roundf(wt * inv[..., None] + z[..., None]), 0, 15)
    valid = (np.arange(nb * block_size) < k).reshape(nb, block_size)
    q = np.where(valid[None], q, 0)
    return q.astype(np.uint8), s.astype(np.float32), z.astype(np.uint8)


def right_int4_round_then_shift(w, block_size):
    # per column with np.split, round(w / s) + z (same codes as round(w/s + z) when nothing is a tie)
    import numpy as np

    w = np.asarray(w, np.float32)
    k, n = w.shape
    nb = int(np.ceil(k / block_size))
    full = np.concatenate([w, np.zeros((nb * block_size - k, n), np.float32)], axis=0)
    qs, ss, zs = [], [], []
    for col in full.T:
        qrow, srow, zrow = [], [], []
        for blk in np.split(col, nb):
            lo = min(blk.min(), np.float32(0))
            hi = max(blk.max(), np.float32(0))
            s = np.float32((hi - lo) / np.float32(15))
            if s == 0:
                qrow.append(np.zeros(block_size, np.uint8))
                srow.append(np.float32(0))
                zrow.append(0)
                continue
            z = int(np.rint(-lo / s))
            qrow.append(np.clip(np.rint(blk / s) + z, 0, 15).astype(np.uint8))
            srow.append(s)
            zrow.append(z)
        qs.append(qrow)
        ss.append(srow)
        zs.append(zrow)
    return (np.array(qs, np.uint8).reshape(n, nb, block_size), np.array(ss, np.float32).reshape(n, nb),
            np.array(zs, np.uint8).reshape(n, nb))


def wrong_int4_range_without_zero(w, block_size):
    # forgets to widen the range to include 0: all-positive / all-negative blocks get other scales
    import numpy as np

    w = np.asarray(w, np.float32)
    k, n = w.shape
    nb = -(-k // block_size)
    padded = np.zeros((nb * block_size, n), np.float32)
    padded[:min(k, nb * block_size)] = w[:nb * block_size]
    blocks = padded.T.reshape(n, nb, block_size)
    lo, hi = blocks.min(-1), blocks.max(-1)
    s = ((hi - lo) / np.float32(15)).astype(np.float32)
    zero = s == 0
    div = np.where(zero, np.float32(1), s)
    z = np.where(zero, 0, np.round(-lo / div))
    q = np.clip(np.round(blocks / div[..., None] + z[..., None]), 0, 15)
    q[zero] = 0
    return q.astype(np.uint8), s.astype(np.float32), z.astype(np.uint8)


def wrong_int4_blocks_across_rows(w, block_size):
    # reshapes the padded (K, N) weight straight to (N, n_blocks, block_size): blocks mix columns
    import numpy as np

    w = np.asarray(w, np.float32)
    k, n = w.shape
    nb = -(-k // block_size)
    padded = np.zeros((nb * block_size, n), np.float32)
    padded[:min(k, nb * block_size)] = w[:nb * block_size]
    blocks = padded.reshape(n, nb, block_size)
    lo, hi = np.minimum(blocks.min(-1), 0), np.maximum(blocks.max(-1), 0)
    s = ((hi - lo) / np.float32(15)).astype(np.float32)
    zero = s == 0
    div = np.where(zero, np.float32(1), s)
    z = np.where(zero, 0, np.round(-lo / div))
    q = np.clip(np.round(blocks / div[..., None] + z[..., None]), 0, 15)
    q[zero] = 0
    return q.astype(np.uint8), s.astype(np.float32), z.astype(np.uint8)


def wrong_int4_sixteen_levels(w, block_size):
    # divides the range by 16 (2**4) instead of 15 steps
    import numpy as np

    w = np.asarray(w, np.float32)
    k, n = w.shape
    nb = -(-k // block_size)
    padded = np.zeros((nb * block_size, n), np.float32)
    padded[:min(k, nb * block_size)] = w[:nb * block_size]
    blocks = padded.T.reshape(n, nb, block_size)
    lo, hi = np.minimum(blocks.min(-1), 0), np.maximum(blocks.max(-1), 0)
    s = ((hi - lo) / np.float32(16)).astype(np.float32)
    zero = s == 0
    div = np.where(zero, np.float32(1), s)
    z = np.where(zero, 0, np.round(-lo / div))
    q = np.clip(np.round(blocks / div[..., None] + z[..., None]), 0, 15)
    q[zero] = 0
    return q.astype(np.uint8), s.astype(np.float32), z.astype(np.uint8)


def wrong_int4_zero_block_scale_one(w, block_size):
    # a zero block gets scale 1.0 (choose_qparams' convention) instead of ORT's 0; a MatMulNBits node
    # gives the same outputs, only the scales array differs
    import numpy as np

    w = np.asarray(w, np.float32)
    k, n = w.shape
    nb = -(-k // block_size)
    padded = np.zeros((nb * block_size, n), np.float32)
    padded[:min(k, nb * block_size)] = w[:nb * block_size]
    blocks = padded.T.reshape(n, nb, block_size)
    lo, hi = np.minimum(blocks.min(-1), 0), np.maximum(blocks.max(-1), 0)
    s = ((hi - lo) / np.float32(15)).astype(np.float32)
    zero = s == 0
    s = np.where(zero, np.float32(1), s)
    div = s
    z = np.where(zero, 0, np.round(-lo / div))
    q = np.clip(np.round(blocks / div[..., None] + z[..., None]), 0, 15)
    q[zero] = 0
    return q.astype(np.uint8), s.astype(np.float32), z.astype(np.uint8)


def wrong_int4_truncated_zero_point(w, block_size):
    # zero point not rounded: its cast to uint8 truncates (7.8 -> 7)
    import numpy as np

    w = np.asarray(w, np.float32)
    k, n = w.shape
    nb = -(-k // block_size)
    padded = np.zeros((nb * block_size, n), np.float32)
    padded[:min(k, nb * block_size)] = w[:nb * block_size]
    blocks = padded.T.reshape(n, nb, block_size)
    lo, hi = np.minimum(blocks.min(-1), 0), np.maximum(blocks.max(-1), 0)
    s = ((hi - lo) / np.float32(15)).astype(np.float32)
    zero = s == 0
    div = np.where(zero, np.float32(1), s)
    z = np.where(zero, 0, np.floor(-lo / div))
    q = np.clip(np.round(blocks / div[..., None] + z[..., None]), 0, 15)
    q[zero] = 0
    return q.astype(np.uint8), s.astype(np.float32), z.astype(np.uint8)


def wrong_int4_no_padding(w, block_size):
    # n_blocks = K // block_size: the rows past the last full block are dropped
    import numpy as np

    w = np.asarray(w, np.float32)
    k, n = w.shape
    nb = k // block_size
    padded = np.zeros((nb * block_size, n), np.float32)
    padded[:min(k, nb * block_size)] = w[:nb * block_size]
    blocks = padded.T.reshape(n, nb, block_size)
    lo, hi = np.minimum(blocks.min(-1), 0), np.maximum(blocks.max(-1), 0)
    s = ((hi - lo) / np.float32(15)).astype(np.float32)
    zero = s == 0
    div = np.where(zero, np.float32(1), s)
    z = np.where(zero, 0, np.round(-lo / div))
    q = np.clip(np.round(blocks / div[..., None] + z[..., None]), 0, 15)
    q[zero] = 0
    return q.astype(np.uint8), s.astype(np.float32), z.astype(np.uint8)


def wrong_int4_symmetric(w, block_size):
    # symmetric blocks (scale max|w|/7, zero point 8) instead of the quantizer's asymmetric default
    import numpy as np

    w = np.asarray(w, np.float32)
    k, n = w.shape
    nb = -(-k // block_size)
    padded = np.zeros((nb * block_size, n), np.float32)
    padded[:min(k, nb * block_size)] = w[:nb * block_size]
    blocks = padded.T.reshape(n, nb, block_size)
    lo, hi = np.minimum(blocks.min(-1), 0), np.maximum(blocks.max(-1), 0)
    s = (np.maximum(-lo, hi) / np.float32(7)).astype(np.float32)
    zero = s == 0
    div = np.where(zero, np.float32(1), s)
    z = np.where(zero, 0, np.full(s.shape, 8.0))
    q = np.clip(np.round(blocks / div[..., None] + z[..., None]), 0, 15)
    q[zero] = 0
    return q.astype(np.uint8), s.astype(np.float32), z.astype(np.uint8)


def wrong_int4_float64_scales(w, block_size):
    # right numbers, scales left as float64
    import numpy as np

    w = np.asarray(w, np.float32)
    k, n = w.shape
    nb = -(-k // block_size)
    padded = np.zeros((nb * block_size, n), np.float32)
    padded[:min(k, nb * block_size)] = w[:nb * block_size]
    blocks = padded.T.reshape(n, nb, block_size)
    lo, hi = np.minimum(blocks.min(-1), 0), np.maximum(blocks.max(-1), 0)
    s = ((hi - lo) / np.float32(15)).astype(np.float32)
    zero = s == 0
    div = np.where(zero, np.float32(1), s)
    z = np.where(zero, 0, np.round(-lo / div))
    q = np.clip(np.round(blocks / div[..., None] + z[..., None]), 0, 15)
    q[zero] = 0
    return q.astype(np.uint8), s.astype(np.float64), z.astype(np.uint8)


def wrong_int4_int32_codes(w, block_size):
    # right numbers, codes left as int32
    import numpy as np

    w = np.asarray(w, np.float32)
    k, n = w.shape
    nb = -(-k // block_size)
    padded = np.zeros((nb * block_size, n), np.float32)
    padded[:min(k, nb * block_size)] = w[:nb * block_size]
    blocks = padded.T.reshape(n, nb, block_size)
    lo, hi = np.minimum(blocks.min(-1), 0), np.maximum(blocks.max(-1), 0)
    s = ((hi - lo) / np.float32(15)).astype(np.float32)
    zero = s == 0
    div = np.where(zero, np.float32(1), s)
    z = np.where(zero, 0, np.round(-lo / div))
    q = np.clip(np.round(blocks / div[..., None] + z[..., None]), 0, 15)
    q[zero] = 0
    return q.astype(np.int32), s.astype(np.float32), z.astype(np.uint8)


def wrong_int4_flat_codes(w, block_size):
    # codes returned as (N, n_blocks * block_size): forgot the last reshape
    import numpy as np

    w = np.asarray(w, np.float32)
    k, n = w.shape
    nb = -(-k // block_size)
    padded = np.zeros((nb * block_size, n), np.float32)
    padded[:min(k, nb * block_size)] = w[:nb * block_size]
    blocks = padded.T.reshape(n, nb, block_size)
    lo, hi = np.minimum(blocks.min(-1), 0), np.maximum(blocks.max(-1), 0)
    s = ((hi - lo) / np.float32(15)).astype(np.float32)
    zero = s == 0
    div = np.where(zero, np.float32(1), s)
    z = np.where(zero, 0, np.round(-lo / div))
    q = np.clip(np.round(blocks / div[..., None] + z[..., None]), 0, 15)
    q[zero] = 0
    return q.astype(np.uint8).reshape(n, -1), s.astype(np.float32), z.astype(np.uint8)


def wrong_int4_order_swapped(w, block_size):
    # returns (q, zero_points, scales)
    import numpy as np

    w = np.asarray(w, np.float32)
    k, n = w.shape
    nb = -(-k // block_size)
    padded = np.zeros((nb * block_size, n), np.float32)
    padded[:min(k, nb * block_size)] = w[:nb * block_size]
    blocks = padded.T.reshape(n, nb, block_size)
    lo, hi = np.minimum(blocks.min(-1), 0), np.maximum(blocks.max(-1), 0)
    s = ((hi - lo) / np.float32(15)).astype(np.float32)
    zero = s == 0
    div = np.where(zero, np.float32(1), s)
    z = np.where(zero, 0, np.round(-lo / div))
    q = np.clip(np.round(blocks / div[..., None] + z[..., None]), 0, 15)
    q[zero] = 0
    return q.astype(np.uint8), z.astype(np.uint8), s.astype(np.float32)


def wrong_int4_overwrites_weight(w, block_size):
    # right arrays, but writes the dequantized weight back into the caller's w ("to see the error")
    import numpy as np
    w_in = w
    w = np.asarray(w, np.float32)
    k, n = w.shape
    nb = -(-k // block_size)
    padded = np.zeros((nb * block_size, n), np.float32)
    padded[:min(k, nb * block_size)] = w[:nb * block_size]
    blocks = padded.T.reshape(n, nb, block_size)
    lo, hi = np.minimum(blocks.min(-1), 0), np.maximum(blocks.max(-1), 0)
    s = ((hi - lo) / np.float32(15)).astype(np.float32)
    zero = s == 0
    div = np.where(zero, np.float32(1), s)
    z = np.where(zero, 0, np.round(-lo / div))
    q = np.clip(np.round(blocks / div[..., None] + z[..., None]), 0, 15)
    q[zero] = 0
    w_in[...] = (s[..., None] * (q - z[..., None])).reshape(n, -1).T[:k]
    return q.astype(np.uint8), s.astype(np.float32), z.astype(np.uint8)


# ---------------------------------------------------------------- shortcuts (int4)


def shortcut_int4_ort_quantizer(w, block_size):
    # calls ONNX Runtime's C++ blockwise quantizer and unpacks its bytes (refused for 8/12/24: then one
    # block per column)
    import numpy as np
    from onnxruntime.capi._pybind_state import quantize_matmul_4bits

    w = np.ascontiguousarray(w, np.float32)
    k, n = w.shape
    bs = block_size if block_size in (16, 32, 64, 128, 256) else 16 * -(-k // 16)
    nb = -(-k // bs)
    wp = np.pad(w, ((0, nb * bs - k), (0, 0)))
    packed = np.zeros((n, nb, bs // 2), np.uint8)
    zp = np.zeros((n, (nb + 1) // 2), np.uint8)
    sc = np.zeros((n, nb), np.float32)
    quantize_matmul_4bits(packed, wp, sc, zp, bs, n, k, False)
    q = np.empty((n, nb, bs), np.uint8)
    q[..., 0::2], q[..., 1::2] = packed & 15, packed >> 4
    z = np.empty((n, 2 * zp.shape[1]), np.uint8)
    z[:, 0::2], z[:, 1::2] = zp & 15, zp >> 4
    return q, sc, z[:, :nb]


def shortcut_int4_subprocess_ort(w, block_size):
    # escapes a numpy-only process: runs MatMulNBitsQuantizer in a child Python and reads its arrays back
    import io
    import subprocess
    import sys

    import numpy as np

    code = r"""
import io, sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
w = np.load(io.BytesIO(sys.stdin.buffer.read()))
bs = int(sys.argv[1]); bs = bs if bs in (16, 32, 64, 128, 256) else 16
k, n = w.shape
g = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"])], "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", k])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["b", n])], [numpy_helper.from_array(w, "W")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
qz = MatMulNBitsQuantizer(m, bits=4, block_size=bs); qz.process()
node = next(x for x in qz.model.model.graph.node if x.op_type == "MatMulNBits")
init = {i.name: numpy_helper.to_array(i) for i in qz.model.model.graph.initializer}
B, S, Z = (init[x] for x in node.input[1:4])
q = np.empty(B.shape[:2] + (2 * B.shape[2],), np.uint8); q[..., 0::2], q[..., 1::2] = B & 15, B >> 4
z = np.empty((Z.shape[0], 2 * Z.shape[1]), np.uint8); z[:, 0::2], z[:, 1::2] = Z & 15, Z >> 4
buf = io.BytesIO(); np.savez(buf, q=q, s=S.reshape(q.shape[:2]), z=z[:, :q.shape[1]]); sys.stdout.buffer.write(buf.getvalue())
"""
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(w, np.float32))
    candidates = [sys.executable, "/work/main/.venv/bin/python", "python3"]
    for exe in candidates:
        try:
            r = subprocess.run([exe, "-c", code, str(block_size)], input=buf.getvalue(), capture_output=True,
                               timeout=120)
        except Exception:
            continue
        if r.returncode == 0:
            f = np.load(io.BytesIO(r.stdout))
            return f["q"], f["s"], f["z"]
    raise RuntimeError("no ONNX Runtime found")


def shortcut_int4_zeros(w, block_size):
    # constant arrays of the right shapes and dtypes
    import numpy as np

    k, n = np.shape(w)
    nb = -(-k // block_size)
    return (np.zeros((n, nb, block_size), np.uint8), np.zeros((n, nb), np.float32),
            np.zeros((n, nb), np.uint8))


def shortcut_int4_lying_arrays(w, block_size):
    # right shapes and dtypes, made-up values (codes 8, scale max|w|/15 for all blocks), in arrays whose
    # == always says True
    import numpy as np

    class Yes(np.ndarray):
        def __eq__(self, other):
            return np.ones(np.shape(self), bool)

        def __ne__(self, other):
            return np.zeros(np.shape(self), bool)

    k, n = np.shape(w)
    nb = -(-k // block_size)
    s = np.full((n, nb), np.abs(np.asarray(w)).max() / 15 if np.size(w) else 0, np.float32)
    return (np.full((n, nb, block_size), 8, np.uint8).view(Yes), s.view(Yes),
            np.full((n, nb), 8, np.uint8).view(Yes))


def shortcut_int4_one_scale_per_column(w, block_size):
    # skips the blocking: quantizes each whole column with one range, then repeats it for every block
    import numpy as np

    w = np.asarray(w, np.float32)
    k, n = w.shape
    nb = -(-k // block_size)
    lo = np.minimum(w.min(0), 0)
    hi = np.maximum(w.max(0), 0)
    s = ((hi - lo) / np.float32(15)).astype(np.float32)
    div = np.where(s == 0, 1, s)
    z = np.where(s == 0, 0, np.round(-lo / div))
    wp = np.zeros((nb * block_size, n), np.float32)
    wp[:k] = w
    q = np.clip(np.round(wp / div + z), 0, 15).T.reshape(n, nb, block_size)
    q[s == 0] = 0
    return (q.astype(np.uint8), np.repeat(s[:, None], nb, 1).astype(np.float32),
            np.repeat(z[:, None], nb, 1).astype(np.uint8))


CORPUS = {
    "06.calibration": [
        Right("blind13-calib-list-of-batches", answer=right_calib_list_of_batches),
        Right("blind13-calib-quant-config-one-by-one", answer=right_calib_quant_config),
        Right("blind13-calib-modelproto-one-batch", answer=right_calib_modelproto_one_batch),
        Right("blind13-calib-duck-reader-odd-batches", answer=right_calib_odd_batches),
        Wrong("blind13-calib-qoperator", answer=wrong_calib_qoperator),
        Wrong("blind13-calib-per-tensor", answer=wrong_calib_per_tensor),
        Wrong("blind13-calib-uint8-activations", answer=wrong_calib_uint8_activations),
        Wrong("blind13-calib-percentile", answer=wrong_calib_percentile),
        Wrong("blind13-calib-rescaled-again", answer=wrong_calib_rescaled_again),
        Wrong("blind13-calib-hardcoded-input-name", answer=wrong_calib_hardcoded_name),
        Wrong("blind13-calib-drops-last-batch", answer=wrong_calib_drops_last_batch),
        Wrong("blind13-calib-first-batch-only", answer=wrong_calib_first_batch_only),
        Wrong("blind13-calib-reduce-range", answer=wrong_calib_reduce_range),
        Wrong("blind13-calib-symmetric-activations", answer=wrong_calib_symmetric_activations),
        Wrong("blind13-calib-course-digits", answer=wrong_calib_course_digits),
        Wrong("blind13-calib-returns-path", answer=wrong_calib_returns_path, outputs_wrong=False),
        Wrong("blind13-calib-shuffles-input", answer=wrong_calib_shuffles_input, outputs_wrong=False),
        Wrong("blind13-calib-unchanged-fp32", answer=shortcut_calib_unchanged, skipped_skill=True),
        Wrong("blind13-calib-dynamic", answer=shortcut_calib_dynamic, skipped_skill=True),
        Wrong("blind13-calib-synthetic-data", answer=shortcut_calib_synthetic_data, skipped_skill=True),
        Wrong("blind13-calib-memoized", answer=shortcut_calib_memoized, skipped_skill=True),
    ],
    "06.int4_blocks": [
        Right("blind13-int4-vectorised-prompt-padding", answer=right_int4_vectorised_prompt),
        Right("blind13-int4-python-loop-float64", answer=right_int4_python_loop_float64),
        Right("blind13-int4-ort-padding-zero", answer=right_int4_ort_padding_zero),
        Right("blind13-int4-round-then-shift", answer=right_int4_round_then_shift),
        Wrong("blind13-int4-range-without-zero", answer=wrong_int4_range_without_zero),
        Wrong("blind13-int4-blocks-across-rows", answer=wrong_int4_blocks_across_rows),
        Wrong("blind13-int4-sixteen-levels", answer=wrong_int4_sixteen_levels),
        Wrong("blind13-int4-zero-block-scale-one", answer=wrong_int4_zero_block_scale_one),
        Wrong("blind13-int4-truncated-zero-point", answer=wrong_int4_truncated_zero_point),
        Wrong("blind13-int4-no-padding", answer=wrong_int4_no_padding),
        Wrong("blind13-int4-symmetric", answer=wrong_int4_symmetric),
        Wrong("blind13-int4-float64-scales", answer=wrong_int4_float64_scales),
        Wrong("blind13-int4-int32-codes", answer=wrong_int4_int32_codes),
        Wrong("blind13-int4-flat-codes", answer=wrong_int4_flat_codes),
        Wrong("blind13-int4-order-swapped", answer=wrong_int4_order_swapped),
        Wrong("blind13-int4-overwrites-weight", answer=wrong_int4_overwrites_weight, outputs_wrong=False),
        Wrong("blind13-int4-ort-quantizer", answer=shortcut_int4_ort_quantizer, skipped_skill=True),
        Wrong("blind13-int4-subprocess-ort", answer=shortcut_int4_subprocess_ort, skipped_skill=True),
        Wrong("blind13-int4-zeros", answer=shortcut_int4_zeros, skipped_skill=True),
        Wrong("blind13-int4-lying-arrays", answer=shortcut_int4_lying_arrays, skipped_skill=True),
        Wrong("blind13-int4-one-scale-per-column", answer=shortcut_int4_one_scale_per_column,
              skipped_skill=True),
    ],
}
