"""05.rewrite_rule's check, learner side: how the rules an answer returns are applied (the spec's `call=`).

The answer is `matmul_add_rules()`; the check calls it, keeps what it returned only if it is made of
onnxscript's own `RewriteRule` objects, and applies them with onnxscript's `rewrite` to each test graph.
The answer never gets a model. What a rule runs while the rewriter works (its condition, its
replacement, its visitors) may not change the graph: a rule's work is the rewrite the rewriter makes
of its match, not an edit on the side. The rewriter's own code is checked unchanged before and after.
"""
from __future__ import annotations

import functools
import types
from typing import Any, Callable

__all__ = ["apply_rules"]

#: where onnxscript keeps its shipped rules: an answer built on them did not write a rule
_SHIPPED = "onnxscript.rewriter.rules"
#: the modules whose code applies a rule: an answer that patches them rewrites around the rewriter
_REWRITER = ("onnxscript.rewriter", "onnxscript.rewriter._rewrite_rule", "onnxscript.rewriter._matcher",
             "onnxscript.rewriter._pattern_ir", "onnxscript.rewriter._basics", "onnxscript.rewriter.pattern",
             "onnxscript.optimizer", "onnx_ir", "onnx_ir.serde", "onnx_ir._convenience", "onnx_ir.passes",
             "onnx_ir.passes.common")


class RuleError(Exception):
    """What the rules returned cannot be applied as a rule (said in one line)."""


def _shipped(rule) -> str:
    """The shipped class or function a rule's replacement or condition comes from, or ""."""
    parts = (getattr(getattr(rule, "_replacement_pattern", None), "_function", None),
             getattr(rule, "_condition_function", None))
    for part in parts:
        owner = getattr(part, "__self__", None)
        for where in [part, *(type(owner).__mro__ if owner is not None else ())]:
            if (getattr(where, "__module__", "") or "").startswith(_SHIPPED):
                return getattr(where, "__qualname__", "") or getattr(part, "__qualname__", "a shipped rule")
    return ""


def _rewriter_modules() -> list:
    import importlib

    return [importlib.import_module(name) for name in _REWRITER]


def _code_state() -> dict:
    """What each rewriter module and class holds: a patch shows as a changed entry."""
    state = {}
    for module in _rewriter_modules():
        name = module.__name__
        for key, value in list(vars(module).items()):
            state[(name, key)] = value
            if isinstance(value, type) and value.__module__ == name:
                for attr, member in list(vars(value).items()):
                    state[(name, key, attr)] = member
    return state


@functools.lru_cache(maxsize=1)
def _homes() -> tuple[str, ...]:
    """Where the rewriter's code and the standard library (dataclasses, typing: code they make) live."""
    import sysconfig

    return (*sorted({m.__file__.rsplit("/", 2)[0] for m in _rewriter_modules()}), sysconfig.get_paths()["stdlib"])


def _own(value: Any, key: str) -> bool:
    """`value` is a function whose code is the installed packages' or the standard library's (a
    @dataclass's methods, typing's protocol hooks)."""
    fn = getattr(value, "__func__", value)
    if not isinstance(fn, types.FunctionType):
        return False
    where = fn.__code__.co_filename
    return where.startswith(_homes()) or (where == "<string>" and key.startswith("__"))


def _is_function(value: Any) -> bool:
    return isinstance(getattr(value, "__func__", value), types.FunctionType)


#: the rewriter as this process first saw it (before any answer ran)
_BASELINE = _code_state()


def _patched() -> str:
    """Which rewriter entries an answer (or a notebook cell before it) replaced: a function whose code is
    not the packages' own, or an entry changed since the baseline to anything but such a function."""
    now = _code_state()
    changed = [k for k, v in now.items() if _is_function(v) and not _own(v, k[-1])]
    changed += [k for k, v in now.items() if k in _BASELINE and _BASELINE[k] is not v and not _own(v, k[-1])]
    changed += list(_BASELINE.keys() - now.keys())
    return ", ".join(sorted({".".join(k) for k in changed})[:2])


def _graph_state(model) -> tuple:
    """The model's nodes and how they connect, main graph, subgraphs and functions, by identity."""
    import onnx_ir as ir

    graphs = [model.graph, *model.functions.values()]
    return tuple((id(g), tuple((id(n), n.op_type, tuple(map(id, n.inputs)), tuple(map(id, n.outputs)),
                                tuple(n.attributes)) for n in ir.traversal.RecursiveGraphIterator(g)),
                  tuple(map(id, g.inputs)), tuple(map(id, g.outputs)),
                  tuple(getattr(g, "initializers", {}))) for g in graphs)


def _guarded_rules(items: list, model) -> list:
    """Each rule rebuilt from its parts so that what it runs during a rewrite is watched: a condition,
    replacement or visitor that changes the graph itself is refused."""
    from onnxscript.rewriter import pattern

    def watched(run: Callable, what: str) -> Callable:
        def call(*args, **kwargs):
            before = _graph_state(model)
            out = run(*args, **kwargs)
            if _graph_state(model) != before:
                raise RuleError(f"the rule's {what} changed the graph itself: a rule's work is the replacement "
                                "the rewriter puts in place of each match, not an edit on the side")
            return out
        return call

    class Watched(pattern.RewriteRule):
        def try_rewrite(self, *args, **kwargs):
            return watched(super().try_rewrite, "condition or replacement")(*args, **kwargs)

    return [Watched(r._target_pattern, r._replacement_pattern, r._condition_function, matcher=r._matcher,
                    name=r.name, remove_nodes=r.remove_nodes, as_function=r.as_function,
                    graph_pre_visitor=r.graph_pre_visitor and watched(r.graph_pre_visitor, "setup"),
                    graph_post_visitor=r.graph_post_visitor and watched(r.graph_post_visitor, "cleanup"))
            for r in items]


def _rules_of(rules: Any) -> list:
    """The RewriteRule objects an answer returned, or RuleError saying why they are not rules."""
    from onnxscript.rewriter import _matcher, _pattern_ir, pattern
    from onnxscript.rewriter._rewrite_rule import ReplacementPatternFunction

    from ..plain import describe

    if type(rules) is pattern.RewriteRuleSet:
        items = list(rules.rules)
    elif isinstance(rules, (list, tuple)):
        items = list(rules)
    else:
        items = [rules]
    odd = [r for r in items if type(r) is not pattern.RewriteRule]
    if not items or odd:
        got = "an empty list" if not items else describe(rules if odd[0] is rules else odd[0])
        raise RuleError(f"the function returned {got}: return a pattern.RewriteRule, a list of them or a "
                        "pattern.RewriteRuleSet (onnxscript's own classes, not subclasses), and the check "
                        "applies it with rewrite()")
    for r in items:
        if (type(r._matcher) is not _matcher.SimplePatternMatcher
                or type(r._target_pattern) is not _pattern_ir.GraphPattern
                or type(r._replacement_pattern) is not ReplacementPatternFunction):
            raise RuleError("a rule brings a matcher or pattern class of its own: build it from a target "
                            "function, a replacement function and a condition")
    shipped = next((name for name in map(_shipped, items) if name), "")
    if shipped:
        raise RuleError(f"a rule comes from onnxscript's shipped rules ({shipped}): write the pattern, the "
                        "replacement and the condition yourself")
    return items


def apply_rules(answer: Callable[[], Any], model):
    """05.rewrite_rule's check on one graph: `answer()` gives the rules, onnxscript's `rewrite` applies
    them to `model` (a ModelProto). The answer never sees the model, so a graph comes out rewritten only
    by the rules' matches."""
    import inspect

    import onnx_ir as ir
    from onnxscript.rewriter import pattern, rewrite

    try:
        needs = [p for p in inspect.signature(answer).parameters.values()
                 if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        needs = []
    if needs:
        raise RuleError(f"the function takes an argument ({needs[0].name}): matmul_add_rules() takes none, it "
                        "returns the rules and the check applies them to each graph")
    patched = _patched()
    if not patched:
        items = _rules_of(answer())
        patched = _patched()
    if not patched:
        ir_model = ir.serde.deserialize_model(model)
        rewrite(ir_model, pattern_rewrite_rules=pattern.RewriteRuleSet(_guarded_rules(items, ir_model)))
        patched = _patched()
    if patched:
        raise RuleError(f"the answer changed onnxscript's own code ({patched}): the rules must work through "
                        "the rewriter as it ships")
    return ir.serde.serialize_model(ir_model)
