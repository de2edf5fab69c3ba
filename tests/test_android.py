"""labkit.android: the Kotlin/Python downsampling twins, the tool wrappers, and the generated Android project.

No Android SDK is available here, so the project is tested for what can be tested off-device: every
file Gradle needs, model-derived names/shape/type in the Kotlin code, the .ort bytes in assets, the
onnxruntime-android version, determinism, and the Kotlin downsampling executed (translated to Python).
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from importlib import metadata
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from labkit import android

REQUIRED = [
    "settings.gradle.kts", "build.gradle.kts", "gradle.properties", "gradle/wrapper/gradle-wrapper.properties",
    "README.md", ".gitignore", "app/build.gradle.kts", "app/src/main/AndroidManifest.xml",
    "app/src/main/res/values/strings.xml",
]
KOTLIN = ["MainActivity.kt", "DrawView.kt", "Downsample.kt", "DigitClassifier.kt"]


# ---------------------------------------------------------------- Kotlin -> Python translation


def kotlin_to_python(src: str) -> dict:
    """Translate the `Downsample` object (a deliberately small Kotlin subset) to Python and run it.

    Handles `const val`, `val`/`var`, `for (i in a until b)`, `if`, `IntArray(n)`, minOf/maxOf,
    `&&`/`||`, integer `/` (all operands are non-negative, so Kotlin's truncation equals Python's //).
    Anything outside that subset fails the translation loudly.
    """
    body = src[src.index("object Downsample"):]
    out, consts = [], {}
    for raw in body.splitlines()[1:]:
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped.startswith(("//", "/*", "*")):
            continue
        if stripped == "}":
            continue
        indent = len(line) - len(line.lstrip()) - 4  # the object's body is indented once
        m = re.match(r"const val (\w+) = (\d+)$", stripped)
        if m:
            consts[m.group(1)] = int(m.group(2))
            continue
        m = re.match(r"fun (\w+)\(([^)]*)\): \w+ \{$", stripped)
        if m:
            args = ", ".join(a.split(":")[0].strip() for a in m.group(2).split(","))
            out.append(" " * indent + f"def {m.group(1)}({args}):")
            continue
        m = re.match(r"for \((\w+) in (.+) until (.+)\) \{$", stripped)
        if m:
            out.append(" " * indent + f"for {m.group(1)} in range({m.group(2)}, {m.group(3)}):")
            continue
        m = re.match(r"if \((.+)\) \{$", stripped)
        if m:
            out.append(" " * indent + f"if {m.group(1)}:")
            continue
        stmt = re.sub(r"^(val|var) ", "", stripped)
        if stmt.endswith("{") or stmt.endswith("}") or "?" in stmt or "->" in stmt:
            raise AssertionError(f"Kotlin outside the translatable subset: {stripped!r}")
        out.append(" " * indent + stmt)
    py = "\n".join(out)
    py = py.replace("&&", " and ").replace("||", " or ").replace("minOf(", "min(").replace("maxOf(", "max(")
    py = re.sub(r"IntArray\(([^()]*)\)", r"[0] * (\1)", py)
    py = re.sub(r"(?<![/])/(?![/])", "//", py)
    namespace = dict(consts)
    exec(compile(py, "Downsample.kt (translated)", "exec"), namespace)
    return namespace


@pytest.fixture(scope="module")
def kotlin_downsample(project):
    """The Downsample.kt of a generated project (what the app ships), translated to Python."""
    ns = kotlin_to_python(android.kotlin_downsample_source(project))
    return ns, lambda alpha: np.array(ns["toModelInput"](alpha.astype(int).ravel().tolist(),
                                                         alpha.shape[1], alpha.shape[0]), dtype=np.uint8)


def random_drawings(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    for i in range(n):
        h, w = int(rng.integers(8, 120)), int(rng.integers(8, 120))
        if i % 3 == 0:
            size = int(rng.integers(20, 140))
            strokes = [[tuple(rng.random(2)) for _ in range(int(rng.integers(1, 5)))] for _ in range(int(rng.integers(1, 3)))]
            yield android.draw_strokes(strokes, size=size, width=float(rng.uniform(1, size / 6)))
        elif i % 3 == 1:
            yield (rng.random((h, w)) < rng.uniform(0.01, 0.3)).astype(np.uint8) * 255
        else:
            yield rng.integers(0, 256, size=(h, w)).astype(np.uint8)  # partial alphas around the threshold


def test_kotlin_constants_are_the_python_ones(kotlin_downsample):
    """create_project writes Python's constants into the app (read back from the generated file)."""
    ns, _ = kotlin_downsample
    assert (ns["GRID"], ns["CELLS"], ns["INK_ALPHA"]) == (android.GRID, android.CELLS, android.INK_ALPHA)


def test_kotlin_and_python_downsampling_agree(kotlin_downsample):
    _, kotlin = kotlin_downsample
    for alpha in random_drawings(60):
        np.testing.assert_array_equal(kotlin(alpha), android.downsample(alpha)[0, 0].ravel())


@pytest.mark.parametrize("alpha", [
    np.zeros((10, 10), np.uint8), np.full((5, 7), 255, np.uint8), np.pad(np.full((1, 1), 255, np.uint8), ((3, 9), (0, 4))),
    np.full((1, 1), 128, np.uint8), np.full((1, 1), 127, np.uint8), np.eye(40, dtype=np.uint8) * 200,
])
def test_kotlin_and_python_agree_on_edge_cases(kotlin_downsample, alpha):
    _, kotlin = kotlin_downsample
    np.testing.assert_array_equal(kotlin(alpha), android.downsample(alpha)[0, 0].ravel())


def test_downsample_is_the_digits_recipe():
    assert android.downsample(np.zeros((30, 30), np.uint8)).tolist() == np.zeros((1, 1, 8, 8)).tolist()
    full = android.downsample(np.full((50, 50), 255, np.uint8))
    assert full.dtype == np.uint8 and full.shape == (1, 1, 8, 8) and (full == 16).all()
    # a tall thin bar is centred horizontally and fills the height, like the digits' "1"s
    bar = np.zeros((100, 100), np.uint8)
    bar[10:90, 20:30] = 255
    x = android.downsample(bar)[0, 0]
    assert (x.sum(axis=1) > 0).all() and x[:, 0].sum() == 0 and x[:, 7].sum() == 0
    assert (x[:, 3:5] > 0).all()
    # drawn 7 from strokes: ink lands where a 7 has it
    seven = android.downsample(android.draw_strokes([[(0.3, 0.2), (0.7, 0.2), (0.45, 0.85)]]))[0, 0]
    assert seven[0].sum() > seven[7].sum() > 0


def test_draw_strokes_ink_and_width():
    a = android.draw_strokes([[(0.5, 0.5)]], size=100, width=10)
    assert a.dtype == np.uint8 and a[50, 50] == 255 and a[0, 0] == 0
    assert 60 < int((a > 0).sum()) < 100  # a round dot of diameter 10


def test_with_preprocessing_matches_normalize():
    import torch

    from labkit.data import digits, normalize
    from labkit.models import DigitsCNN

    torch.manual_seed(1)
    cnn = DigitsCNN().eval()
    raw = digits(raw=True).x_test[:16]
    with torch.no_grad():
        want = torch.softmax(cnn(torch.from_numpy(normalize(raw))), dim=1).numpy()
        got = android.with_preprocessing(cnn)(torch.from_numpy(raw)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


LOG = """INFO:  Checking m.onnx for usability with ORT Mobile.
INFO:  Checking NNAPI
INFO:  1 partitions with a total of 8/33 nodes can be handled by the NNAPI EP.
INFO:  Unsupported nodes due to operator=0
INFO:  Unsupported nodes due to input having a dynamic shape=25
INFO:  Partition information if the model was updated to make the shapes fixed:
INFO:  1 partitions with a total of 33/33 nodes can be handled by the NNAPI EP.
INFO:  Unsupported nodes due to operator=0
INFO:  Checking CoreML MLProgram
INFO:  0 partitions with a total of 0/33 nodes can be handled by the CoreML MLProgram EP.
INFO:  Unsupported nodes due to operator=24
"""


def test_parse_usability():
    rows = android.parse_usability(LOG)
    assert rows[0] == {"ep": "NNAPI", "nodes": 33, "supported": 8, "partitions": 1, "blocked_by_dynamic_shape": 25,
                       "blocked_by_operator": 0, "supported_if_fixed": 33}
    assert rows[1]["ep"] == "CoreML MLProgram" and rows[1]["blocked_by_operator"] == 24
    assert rows[1]["supported_if_fixed"] == 0
    assert android.parse_usability("nothing") == []
    assert "ep" in android.format_rows(rows) and android.format_rows([]) == "(nothing)"


def test_run_tool_reports_failures(tmp_path):
    with pytest.raises(RuntimeError, match="make_dynamic_shape_fixed failed"):
        android.run_tool("make_dynamic_shape_fixed", "--dim_param", "batch", "--dim_value", "1",
                         tmp_path / "missing.onnx", tmp_path / "out.onnx")


# ---------------------------------------------------------------- the generated project


def tiny_model(path: Path, input_name="img_u8", output_name="scores", elem=TensorProto.UINT8, batch=1) -> Path:
    """A small real model with the app's contract (8x8 pixels in, 10 probabilities out), odd names."""
    w = np.random.default_rng(0).normal(size=(64, 10)).astype(np.float32)
    nodes = [helper.make_node("Cast", [input_name], ["xf"], to=TensorProto.FLOAT)] if elem != TensorProto.FLOAT else []
    nodes += [helper.make_node("Reshape", ["xf" if nodes else input_name, "shape"], ["flat"]),
              helper.make_node("MatMul", ["flat", "w"], ["logits"]),
              helper.make_node("Softmax", ["logits"], [output_name], axis=1)]
    g = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info(input_name, elem, [batch, 1, 8, 8])],
                          [helper.make_tensor_value_info(output_name, TensorProto.FLOAT, [batch, 10])],
                          [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array([-1, 64], np.int64), "shape")])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=9), path)
    return path


@pytest.fixture(scope="module")
def ort_model(tmp_path_factory):
    d = tmp_path_factory.mktemp("ort")
    return android.convert_to_ort(tiny_model(d / "tiny.onnx"), d / "out")


@pytest.fixture(scope="module")
def project(ort_model, tmp_path_factory):
    dest = tmp_path_factory.mktemp("proj") / "App"
    return android.create_project(dest, ort_model["ort"], [f"digit {i}" for i in range(10)])


def test_convert_to_ort_outputs(ort_model):
    assert ort_model["ort"].is_file() and android.is_ort_format(ort_model["ort"].read_bytes())
    assert ort_model["config"].is_file() and any("MatMul" in line for line in ort_model["operators"])


def test_project_has_every_file_gradle_needs(project):
    for rel in REQUIRED:
        assert (project / rel).is_file(), rel
    src = project / "app/src/main/java/org/onnxlab/digits"
    for name in KOTLIN:
        assert (src / name).is_file(), name
    assert not list(project.rglob("*.tmpl"))
    for path in project.rglob("*"):
        if path.is_file() and path.suffix != ".ort":
            assert "@@" not in path.read_text(), path
    ET.parse(project / "app/src/main/AndroidManifest.xml")
    strings = ET.parse(project / "app/src/main/res/values/strings.xml").getroot()
    assert {s.get("name") for s in strings} >= {"app_name", "result", "draw_prompt", "clear", "unavailable"}
    settings = (project / "settings.gradle.kts").read_text()
    assert 'include(":app")' in settings and "google()" in settings and "mavenCentral()" in settings
    root = (project / "build.gradle.kts").read_text()
    assert f'id("com.android.application") version "{android.ANDROID_GRADLE_PLUGIN}"' in root
    app = (project / "app/build.gradle.kts").read_text()
    assert 'namespace = "org.onnxlab.digits"' in app and "minSdk" in app
    wrapper = (project / "gradle/wrapper/gradle-wrapper.properties").read_text()
    assert f"gradle-{android.GRADLE}-bin.zip" in wrapper


def test_dependency_matches_installed_onnxruntime(project):
    version = metadata.version("onnxruntime").split("+")[0]
    app = (project / "app/build.gradle.kts").read_text()
    assert f'implementation("com.microsoft.onnxruntime:onnxruntime-android:{version}")' in app


def test_assets_hold_the_exact_ort_file(project, ort_model):
    (asset,) = (project / "app/src/main/assets").iterdir()
    assert asset.name == "tiny.ort" and asset.read_bytes() == ort_model["ort"].read_bytes()
    main = next(project.rglob("MainActivity.kt")).read_text()
    assert f'const val MODEL_ASSET = "{asset.name}"' in main


def test_kotlin_names_the_models_inputs_outputs_and_shape(project):
    kt = next(project.rglob("DigitClassifier.kt")).read_text()
    assert 'const val INPUT_NAME = "img_u8"' in kt
    assert 'const val OUTPUT_NAME = "scores"' in kt
    assert "val INPUT_SHAPE = longArrayOf(1L, 1L, 8L, 8L)" in kt
    assert "OnnxJavaType.UINT8" in kt
    assert '"pixels"' not in kt and '"probabilities"' not in kt  # nothing typed for the course model
    assert 'arrayOf("digit 0", "digit 1"' in kt
    for api in ("addXnnpack(", "addNnapi()", "createSession(", "override fun close()", "s.close()",
                "session.enable_saved_runtime_optimizations"):
        assert api in kt, api
    main = next(project.rglob("MainActivity.kt")).read_text()
    assert "classifier.close()" in main and "Downsample.toModelInput" in main and "System.nanoTime" in kt


def test_generating_twice_gives_identical_files(project, ort_model, tmp_path):
    first = android.project_files(project)
    again = android.create_project(tmp_path / "again", ort_model["ort"], [f"digit {i}" for i in range(10)])
    assert android.project_files(again) == first
    android.create_project(project, ort_model["ort"], [f"digit {i}" for i in range(10)])  # over itself
    assert android.project_files(project) == first


def test_readme_says_how_to_run_and_what_was_verified(project):
    readme = (project / "README.md").read_text()
    for words in ("Android Studio", "File → Open", "Run", "Verified off-device only", "Not verified", "NNAPI",
                  "deprecated from Android 15", "XNNPACK"):
        assert words in readme, words


def test_float_input_and_symbolic_batch(tmp_path):
    ort_path = android.convert_to_ort(tiny_model(tmp_path / "f.onnx", "x", "y", TensorProto.FLOAT, batch="N"),
                                      tmp_path)["ort"]
    dest = android.create_project(tmp_path / "p", ort_path, [str(i) for i in range(10)])
    kt = next(dest.rglob("DigitClassifier.kt")).read_text()
    assert "OnnxJavaType.FLOAT" in kt and "longArrayOf(1L, 1L, 8L, 8L)" in kt and "['N', 1, 8, 8]" in kt


def test_onnx_input_is_converted(tmp_path):
    dest = android.create_project(tmp_path / "p", tiny_model(tmp_path / "m.onnx"), [str(i) for i in range(10)])
    (asset,) = (dest / "app/src/main/assets").iterdir()
    assert android.is_ort_format(asset.read_bytes())


def test_bad_inputs_are_refused(tmp_path, ort_model):
    with pytest.raises(ValueError, match="10 scores but 3 labels"):
        android.create_project(tmp_path / "a", ort_model["ort"], ["a", "b", "c"])
    with pytest.raises(ValueError, match="package name"):
        android.create_project(tmp_path / "b", ort_model["ort"], [str(i) for i in range(10)], package="Bad-Name")
    fake = tmp_path / "fake.ort"
    fake.write_bytes(b"not a model at all")
    with pytest.raises(ValueError, match="not an ORT-format file"):
        android.create_project(tmp_path / "c", fake, [str(i) for i in range(10)])


def test_labels_are_escaped_for_kotlin(tmp_path, ort_model):
    labels = ['quote"', "dollar$x", "back\\slash"] + [str(i) for i in range(7)]
    dest = android.create_project(tmp_path / "p", ort_model["ort"], labels)
    kt = next(dest.rglob("DigitClassifier.kt")).read_text()
    assert r'"quote\""' in kt and r'"dollar\$x"' in kt and r'"back\\slash"' in kt
