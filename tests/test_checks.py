"""The check machinery: plain data, collect/judge, panels, never raising into the notebook."""
from __future__ import annotations

import json

import numpy as np
import pytest

import labkit
from labkit import plain
from labkit.checks import (JUDGES, REGISTRY, RESULT_MIME, Question, Result, declare, evaluate,
                           exercise, expect_close, expect_equal, get, judge_saved, judge_spec, panel_html, quiz)
from labkit.plain import NotPlain, OnnxBlob, Raised


def test_plain_round_trip(tmp_path):
    value = {"a": [1, 2.5, float("nan"), float("-inf"), True, None, "s"],
             "arr": np.arange(6, dtype=np.int32).reshape(2, 3), "f": np.float32(1.5),
             "blob": OnnxBlob(b"\x08\x07"), "err": Raised("raised ValueError: x"), "nested": [[np.zeros(2)]]}
    data = plain.to_plain(value)
    plain.save(data, tmp_path)
    back = plain.load(tmp_path)
    assert back["a"][:2] == [1, 2.5] and np.isnan(back["a"][2]) and back["a"][3] == float("-inf")
    assert back["a"][4:] == [True, None, "s"]
    np.testing.assert_array_equal(back["arr"], value["arr"])
    assert back["arr"].dtype == np.int32
    assert back["f"] == 1.5 and back["blob"] == OnnxBlob(b"\x08\x07") and back["err"] == Raised("raised ValueError: x")
    np.testing.assert_array_equal(back["nested"][0][0], np.zeros(2))


@pytest.mark.parametrize("bad", [object(), np.array([object()]), {1: 2}, lambda: 0, [object()]])
def test_to_plain_rejects_objects(bad):
    with pytest.raises(NotPlain):
        plain.to_plain(bad)


def test_to_plain_rejects_eq_tricks():
    class AlwaysEqual(float):
        def __eq__(self, other):
            return True

    with pytest.raises(NotPlain):
        plain.to_plain(AlwaysEqual(1.0))


def test_load_refuses_pickles_and_escaping_paths(tmp_path):
    np.save(tmp_path / "a1.npy", np.array([{"x": 1}], dtype=object), allow_pickle=True)
    (tmp_path / "answer.json").write_text(json.dumps({"__npy__": "a1.npy"}))
    with pytest.raises(ValueError):
        plain.load(tmp_path)
    (tmp_path / "answer.json").write_text(json.dumps({"__onnx__": "../../etc/passwd"}))
    with pytest.raises(ValueError, match="bad file name"):
        plain.load(tmp_path)
    (tmp_path / "answer.json").write_text(json.dumps({"__weird__": 1}))
    with pytest.raises(ValueError, match="malformed"):
        plain.load(tmp_path)


def test_expect_close_messages():
    want = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert expect_close("t", want.copy(), want).passed
    r = expect_close("t", np.zeros((2, 3)), want)
    assert not r.passed and "expected shape (2, 2), got shape (2, 3)" in r.message
    r = expect_close("t", np.array([[1.0, 2.0], [3.0, 5.0]]), want)
    assert not r.passed and "at index (1, 1) expected 4, got 5" in r.message and "1 of 4" in r.message
    r = expect_close("t", np.array([[1.0, np.nan], [3.0, 4.0]]), want)
    assert not r.passed and "nan" in r.message
    r = expect_close("t", Raised("raised KeyError: 'X'"), want)
    assert not r.passed and "your function raised KeyError" in r.message
    r = expect_close("t", "text", want)
    assert not r.passed and "a str" in r.message
    r = expect_close("t", [[1, 2], [3]], want)
    assert not r.passed


@pytest.mark.parametrize("compare", ["expect_close", "differential.compare"])
def test_an_infinite_expectation_is_met_only_exactly(compare, recwarn):
    """rtol * inf once excused any value where inf was expected (0 passed for -inf), and equal infinities
    warned (inf - inf); a wrong value is named, not a right one next to it."""
    from labkit.checks.differential import compare as diff_compare

    def check(got, want):
        if compare == "expect_close":
            return expect_close("t", np.array(got), np.array(want), rtol=1e-3, atol=0)
        return diff_compare("t", np.array(got), np.array(want), rtol=1e-3, atol=0)

    want = [np.inf, -np.inf, 0.0, 1.0]
    assert check([np.inf, -np.inf, 0.0, 1.0], want).passed
    for got, shown in (([np.inf, 0.0, 0.0, 1.0], "got 0"), ([np.inf, np.nan, 0.0, 1.0], "got nan"),
                       ([np.inf, np.inf, 0.0, 1.0], "got inf")):
        r = check(got, want)
        assert not r.passed and f"at index (1,) expected -inf, {shown} (1 of 4" in r.message, r.message
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_expect_equal_types():
    assert expect_equal("t", 3, 3).passed
    assert not expect_equal("t", True, 1).passed
    assert not expect_equal("t", "3", 3).passed
    assert expect_equal("t", {"a": 1}, {"a": 1}).passed


@pytest.fixture
def toy():
    """A throwaway function exercise: double the input."""
    def cases(seed):
        rng = np.random.default_rng(seed)
        return [(rng.normal(size=3),), (np.arange(4.0),)]

    names = tuple(f"case {i}" for i in range(len(cases(0))))

    @exercise("99.double", title="Double it", points=2, kind="function", hint=["x * 2"], cases=cases, tests=names,
              skill=names)
    def verdict(outputs, seed):
        for name, (x,), got in zip(names, cases(seed), outputs):
            yield expect_close(name, got, 2 * x)

    yield get("99.double")
    REGISTRY.pop("99.double")
    JUDGES.pop("99.double")


def test_function_exercise_verdicts(toy):
    assert evaluate(toy, lambda x: 2 * x).status == "passed"
    half = evaluate(toy, lambda x: 2 * x if len(x) == 3 else x)
    assert half.status == "failed" and half.points == 1.0 and "case 1" in half.message
    assert evaluate(toy, None).status == "not_attempted"

    def stub(x):
        raise NotImplementedError

    assert evaluate(toy, stub).status == "not_attempted"
    boom = evaluate(toy, lambda x: 1 / 0)
    assert boom.status == "failed" and "ZeroDivisionError" in boom.message
    assert evaluate(toy, 42).status == "error"
    assert "not a number" in evaluate(toy, lambda x: object()).message


def test_an_answer_that_changes_its_arguments_fails_and_cannot_corrupt_the_inputs(toy):
    """A caller notices a function that edits what it was given (differential judging, COURSE.md): the call
    comes back as raised, naming the argument; the judge's own inputs stay intact for the next answer."""
    def sneaky(x):
        y = 2 * x
        x[:] = 0  # changes the caller's array (and would corrupt the judge's inputs if they were shared)
        return y

    r = evaluate(toy, sneaky)
    assert r.status == "failed" and "changed what it was given in place (argument 1, the array)" in r.message, r
    assert evaluate(toy, lambda x: 2 * x).status == "passed"


def test_a_call_that_changes_a_scikit_learn_model_in_place_is_named():
    """A fitted scikit-learn model given to a function is the caller's too (10.to_onnx's blind round 8: two
    answers cast its fitted arrays in place and scored full): its pickle is compared before and after."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    from labkit.checks.calls import call_each

    rng = np.random.default_rng(0)
    model = LogisticRegression().fit(rng.normal(size=(40, 3)), rng.integers(0, 2, 40))

    def cast_in_place(m):
        m.coef_ = m.coef_.astype(np.float32)
        return 1

    changed, untouched = call_each(cast_in_place, [(model,)]), call_each(lambda m: m.predict_proba(
        np.zeros((1, 3))).shape[1], [(model,)])
    assert "changed what it was given in place (argument 1, the scikit-learn model)" in str(changed[0])
    assert list(untouched) == [2], untouched  # reading (predicting) changes nothing


def test_a_namedtuple_is_a_tuple():
    """Blind round 12: a pair returned as a namedtuple is the pair the prompt asks for."""
    import collections

    from labkit import plain

    Folded = collections.namedtuple("Folded", "W b")
    out = plain.to_plain(Folded(np.ones(2), 3))
    assert isinstance(out, list) and np.array_equal(out[0], np.ones(2)) and out[1] == 3


def test_an_ordered_dict_is_a_dict_and_its_overrides_stay_home():
    """Blind round 14: {node: provider} returned as an OrderedDict was refused as not plain."""
    import collections

    from labkit import plain

    class Liar(dict):
        def items(self):
            return [("a", "forged")]

    assert plain.to_plain(collections.OrderedDict([("b", "x"), ("a", "y")])) == {"b": "x", "a": "y"}
    out = plain.to_plain(Liar(a="real"))
    assert type(out) is dict and out == {"a": "real"}


def test_a_call_that_changes_a_pytorch_module_in_place_is_named():
    """A PyTorch module given to a function is the caller's too (03.faithful's blind round 12: `net.double()` to
    get "a more exact reference" scored full): its state, dtypes and train/eval mode are compared."""
    import torch

    from labkit.checks.calls import call_each

    net = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2)).eval()
    x = torch.ones(4, 3)
    calls = {
        "to float64": lambda m: m.double() and 1,
        "back to training mode": lambda m: m.train() and 1,
        "a weight edited": lambda m: m[0].weight.data.mul_(2) is not None and 1,
    }
    for why, fn in calls.items():
        out = call_each(fn, [(net,)])
        assert "changed what it was given in place (argument 1, the PyTorch module)" in str(out[0]), why
    with torch.no_grad():
        untouched = call_each(lambda m: int(m(x).shape[1]), [(net,)])
    assert list(untouched) == [2], untouched  # running it in eval mode changes nothing


def test_the_form_of_each_result_crosses_to_the_judge(tmp_path):
    """Plain data merges forms a caller tells apart (a NumPy integer becomes an int, a tuple a list, bytes and a
    ModelProto the same OnnxBlob): the learner side records each result's form, and it survives the grader's
    folder, so a judge can hold an answer to the form its prompt promises (issue 32)."""
    import onnx

    from labkit.checks import collect
    from labkit.checks.differential import promised_form
    from labkit.checks.registry import make_exercise

    ex = make_exercise("99.forms", title="f", points=1, kind="function")
    values = [3, np.int64(3), (1, 2), [1, 2], b"\x08\x07", onnx.ModelProto(ir_version=7)]
    out = collect(ex, lambda i: values[i] if i < len(values) else 1 / 0, lambda: [(i,) for i in range(7)])
    want = ("int", "numpy.int64", "tuple", "list", "bytes", "onnx.ModelProto", "")
    assert isinstance(out, plain.Outputs) and out.forms == want
    assert out[:2] == [3, 3] and out[2] == out[3] == [1, 2]  # the values as plain data, as before
    plain.save(out, tmp_path)
    back = plain.load(tmp_path)
    assert isinstance(back, plain.Outputs) and back.forms == want and back[:4] == [3, 3, [1, 2], [1, 2]]
    assert back[6] == Raised(out[6].message)
    t = promised_form("an int", plain.Outputs(back[:2], back.forms[:2]), ("int",), "a Python int")
    assert not t.passed and "numpy.int64 (test input 2, 1 of 2 results)" in t.message, t
    assert promised_form("an int", plain.Outputs([3, Raised("x")], ["int", ""]), ("int",), "an int").passed
    assert not promised_form("an int", plain.Outputs([Raised("x")], [""]), ("int",), "an int").passed
    assert not promised_form("an int", [3], ("int",), "an int").passed  # forms not recorded: nothing to pass on
    (tmp_path / "answer.json").write_text(json.dumps({"__outputs__": [1, 2], "forms": ["int"]}))
    with pytest.raises(ValueError, match="malformed"):
        plain.load(tmp_path)


def test_check_never_raises_and_unknown_ids(toy):
    r = labkit.check("99.double", lambda x: 2 * x)
    assert isinstance(r, Result) and r.status == "passed"
    r = labkit.check("nope", 1)
    assert r.status == "error" and "no exercise" in r.message
    r = labkit.check(None, 1)
    assert r.status == "error"


def test_judge_bug_is_reported_not_raised():
    @exercise("99.buggy", title="b", points=1, kind="value", hint=[], tests=("t",), skill=("t",))
    def verdict(answer, seed):
        raise RuntimeError("judge bug")
        yield  # pragma: no cover

    try:
        r = evaluate(get("99.buggy"), 1)
        assert r.status == "error" and "judge bug" in r.message
    finally:
        REGISTRY.pop("99.buggy")
        JUDGES.pop("99.buggy")


def test_grading_mode_records_plain_data_only(toy, tmp_path, monkeypatch):
    """In a graded kernel the inputs come from the grader's folder (no seed, no judge import)."""
    plain.save_inputs(judge_spec(toy.id).cases(7), tmp_path / "inputs" / "99.double")
    monkeypatch.setenv("LABKIT_COLLECT_DIR", str(tmp_path / "answers"))
    monkeypatch.setenv("LABKIT_INPUTS_DIR", str(tmp_path / "inputs"))
    monkeypatch.setattr("labkit.checks.judging.judge_spec", lambda id: pytest.fail("a graded kernel imported a judge"))
    rec = labkit.check("99.double", lambda x: 2 * x)
    assert "recorded" in repr(rec)
    monkeypatch.undo()
    answers = tmp_path / "answers" / "99.double"
    assert judge_saved(toy, answers, 7).status == "passed"
    # the judge uses its own seed: outputs recorded for other inputs fail
    assert judge_saved(toy, answers, 8).status == "failed"
    monkeypatch.setenv("LABKIT_COLLECT_DIR", str(tmp_path / "answers"))
    labkit.check("99.double", None)
    assert judge_saved(toy, answers, 7).status == "not_attempted"
    assert judge_saved(toy, tmp_path / "never-ran", 7).status == "missing"


def test_broken_exercise_module_says_so(tmp_path, monkeypatch):
    """A SyntaxError or a missing dependency in an exercise module surfaces as such."""
    monkeypatch.syspath_prepend(str(tmp_path))
    import labkit.exercises

    (tmp_path / "l97.py").write_text("def broken(:\n")
    (tmp_path / "l96.py").write_text("import no_such_dependency_xyz\n")
    monkeypatch.setattr(labkit.exercises, "__path__", [*labkit.exercises.__path__, str(tmp_path)])
    r = labkit.check("97.thing", 1)
    assert r.status == "error" and "SyntaxError" in r.message and "no exercise" not in r.message
    r = labkit.check("96.thing", 1)
    assert r.status == "error" and "no_such_dependency_xyz" in r.message and "no exercise" not in r.message
    r = labkit.check("95.thing", 1)  # no module at all: that is an unknown exercise
    assert r.status == "error" and "no exercise" in r.message


def test_panel_html_is_escaped_and_has_hint(toy):
    def hostile(x):
        raise ValueError("<script>alert(1)</script>")

    page = panel_html(evaluate(toy, hostile))
    assert "<script>" not in page and "&lt;script&gt;alert(1)" in page
    assert "Hint" in page and "labkit-check" in page and "labkit-failed" in page
    ok = panel_html(evaluate(toy, lambda x: 2 * x))
    assert "labkit-passed" in ok and "Hint" not in ok


def test_result_display_bundle_carries_verdict(toy):
    """What a check cell really displays: the HTML panel, the text, and the verdict as JSON."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shown = []
    shell.display_pub.publish = lambda data, metadata=None, **kw: shown.append(data)
    r = evaluate(toy, lambda x: 2 * x)
    r._ipython_display_()
    assert len(shown) == 1, shown
    bundle = shown[0]
    assert bundle[RESULT_MIME] == r.to_dict() and bundle[RESULT_MIME]["status"] == "passed"
    assert bundle[RESULT_MIME]["points"] == 2.0 and bundle[RESULT_MIME]["exercise"] == "99.double"
    assert "labkit-passed" in bundle["text/html"] and bundle["text/plain"] == repr(r)


def test_exercise_registration_validates():
    spec = dict(title="x", points=1, hint=[], tests=("t",), skill=("t",))
    with pytest.raises(ValueError, match="must look like"):
        exercise("bad id", kind="value", **spec)
    with pytest.raises(ValueError, match="cases="):
        exercise("99.x", kind="function", **spec)  # a function exercise needs its inputs
    with pytest.raises(ValueError, match="cases="):
        exercise("99.x", kind="value", cases=lambda seed: [], **spec)
    with pytest.raises(ValueError, match="quiz"):
        exercise("99.x", kind="quiz", **spec)
    with pytest.raises(ValueError, match="not one of its options"):
        quiz("99.x", title="q", points=1, questions=[Question("q1", "?", {"a": "x", "b": "y"}, answer="c")])
    with pytest.raises(ValueError, match="distinct keys"):
        quiz("99.x", title="q", points=1, questions=[Question("q1", "?", {"a": "x"}, answer="a")] * 2)
    assert "99.x" not in REGISTRY and "99.x" not in JUDGES


def test_the_learner_side_and_the_spec_must_agree():
    """The generated module and the spec both register an exercise: a stale generated module (another
    title, other points...) is refused with a message that says to run `labkit assign`; the learner side
    never holds a quiz's answers."""
    spec = dict(title="Double it", points=2, kind="value", hint=["x * 2"])
    declare("99.same", **spec)
    try:
        exercise("99.same", **spec, tests=("t",), skill=("t",))(lambda a, s: [])
        declare("99.same", **spec)  # the same again: fine
        with pytest.raises(ValueError, match=r"99.same: .*\(points\).*run `labkit assign`"):
            declare("99.same", **{**spec, "points": 3})
        with pytest.raises(ValueError, match=r"labkit_judges/l99.py disagrees .*\(title\)"):
            exercise("99.same", **{**spec, "title": "Triple it"}, tests=("t",), skill=("t",))
    finally:
        REGISTRY.pop("99.same", None)
        JUDGES.pop("99.same", None)
    with pytest.raises(ValueError, match="never holds a quiz's answers"):
        declare("99.q", title="q", points=1, kind="quiz", questions=[Question("q1", "?", {"a": "x"}, answer="a")])
    assert "99.q" not in REGISTRY


def test_call_names_how_a_function_answer_is_called():
    """call="labkit.module:name": the check calls name(answer, *case), so an answer can be the rules a check applies
    (05.rewrite_rule) rather than the process; refused for other kinds, for confined answers and for other packages."""
    import onnx
    from onnx import TensorProto, helper
    from onnxscript.rewriter import pattern

    from labkit.checks import collect
    from labkit.checks.registry import make_exercise

    ex = make_exercise("99.called", title="c", points=1, kind="function", call="labkit.material.l05_rules:apply_rules")
    info = helper.make_tensor_value_info
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Relu", ["r"], ["y"])], "g",
        [info("x", TensorProto.FLOAT, [2])], [info("y", TensorProto.FLOAT, [2])]))
    once = pattern.RewriteRule(lambda op, x: op.Relu(op.Relu(x)), lambda op, x: op.Relu(x))
    out = collect(ex, lambda: [once], lambda: [(model,)])
    assert [n.op_type for n in onnx.load_from_string(out[0].data).graph.node] == ["Relu"], out
    assert "takes none" in collect(ex, lambda m: m, lambda: [(model,)])[0].message
    for bad in ({"kind": "value"}, {"tools": ("numpy",)}):
        with pytest.raises(ValueError, match="call="):
            make_exercise("99.called", title="c", points=1, **{"kind": "function", **bad},
                          call="labkit.material.l05_rules:apply_rules")
    with pytest.raises(ValueError, match="call="):
        make_exercise("99.called", title="c", points=1, kind="function", call="os:system")
