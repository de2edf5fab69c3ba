"""Blind corpus round 14, lesson 10 (written without seeing the judges).
Truths relied on: the lesson's partitioner (providers in list order, each claims the nodes it supports that no
earlier provider took, the CPU provider takes every remaining node, appended at the end if not listed, and when
listed explicitly it takes everything left AT ITS POSITION, so providers listed after it get nothing). Proved in
onnxruntime 1.31.1 on this CPU build: with session.disable_cpu_ep_fallback=1 and the CPU provider NOT listed,
the session is refused only when a node lands on the CPU ("nodes assigned to the default CPU EP, but fallback
... disabled"); a graph with no node is then created (so ops=[] -> []); with the CPU provider listed explicitly
AND fallback disabled, ORT refuses every session ("Conflicting session configuration: explicitly added the CPU
EP ... but also disabled fallback"), whatever the nodes; a listed provider this build lacks is skipped with a
warning; a duplicate provider is ignored with a warning.
Ambiguities: (1) "None where ORT would refuse" reads as the whole answer None, not a None per node; an answer
giving [..., None, ...] per node is labelled wrong here. (2) `providers` is "the providers= list": ORT also
accepts (name, options) pairs there; the prompt does not say whether the check passes such pairs; my Right
answers accept both, no label depends on it. (3) "a list of names": a tuple of names is not labelled.
(4) The CPU-listed + fallback-disabled conflict is not in the prompt's text (only in the notebook cell's output
above it): a judge that forgets this case would accept the naive answer labelled wrong-cpu-listed-strict.
"""
from corpus import Right, Wrong


# ----------------------------------------------------------------------------------------------- Right answers

def right_claim_sets(ops, providers, supports, fallback=True):
    """Claims by provider with index sets; accepts (name, options) pairs in providers."""
    cpu = "CPUExecutionProvider"
    names = [p[0] if isinstance(p, (tuple, list)) else p for p in providers]
    if not fallback and cpu in names:
        return None
    free = set(range(len(ops)))
    owner = {}
    for name in names:
        if name == cpu:
            break
        if name not in supports:
            continue
        can = set(supports[name])
        took = {i for i in free if ops[i] in can}
        owner.update(dict.fromkeys(took, name))
        free -= took
    if free and not fallback:
        return None
    return [owner.get(i, cpu) for i in range(len(ops))]


def right_per_node_scan(ops, providers, supports, fallback=True):
    """For each node, the first listed provider that runs it (stopping at the CPU provider)."""
    import itertools

    cpu = "CPUExecutionProvider"
    order = []
    for p in providers:
        name = p if isinstance(p, str) else p[0]
        if name not in order:
            order.append(name)
    if not fallback and cpu in order:
        return None
    usable = [n for n in itertools.takewhile(lambda n: n != cpu, order) if n in supports]
    out = [next((n for n in usable if op in supports[n]), cpu) for op in ops]
    return None if (not fallback and cpu in out) else out


def right_reverse_overwrite(ops, providers, supports, fallback=True):
    """Walks the usable providers from LAST to first, letting each overwrite: the first listed wins."""
    cpu = "CPUExecutionProvider"
    names = [str(p if isinstance(p, str) else p[0]) for p in providers]
    cut = names.index(cpu) if cpu in names else len(names)
    result = [cpu] * len(ops)
    for name in reversed(names[:cut]):
        table = supports.get(name)
        if table is None:
            continue
        table = frozenset(table)
        result = [name if op in table else prev for op, prev in zip(ops, result)]
    if not fallback:
        if cpu in names or any(r == cpu for r in result):
            return None
    return list(result)


# ------------------------------------------------------------------------------------------------ Wrong answers

def wrong_supports_order(ops, providers, supports, fallback=True):
    """Walks `supports` (dict order) instead of the priority list."""
    cpu = "CPUExecutionProvider"
    if not fallback and cpu in providers:
        return None
    res = [None] * len(ops)
    for name, kinds in supports.items():
        if name not in providers:
            continue
        for i, op in enumerate(ops):
            if res[i] is None and op in kinds:
                res[i] = name
    if not fallback and None in res:
        return None
    return [r or cpu for r in res]


def wrong_missing_provider_keyerror(ops, providers, supports, fallback=True):
    """Looks every listed provider up in `supports` without skipping those this build lacks."""
    cpu = "CPUExecutionProvider"
    if not fallback and cpu in providers:
        return None
    res = [None] * len(ops)
    for name in providers:
        if name == cpu:
            break
        for i, op in enumerate(ops):
            if res[i] is None and op in supports[name]:
                res[i] = name
    if not fallback and None in res:
        return None
    return [r or cpu for r in res]


def wrong_cpu_only_at_end(ops, providers, supports, fallback=True):
    """Treats the CPU provider as the fallback only: providers listed after it still claim nodes."""
    cpu = "CPUExecutionProvider"
    if not fallback and cpu in providers:
        return None
    res = [None] * len(ops)
    for name in providers:
        if name == cpu or name not in supports:
            continue
        for i, op in enumerate(ops):
            if res[i] is None and op in supports[name]:
                res[i] = name
    if not fallback and None in res:
        return None
    return [r or cpu for r in res]


def wrong_cpu_listed_strict(ops, providers, supports, fallback=True):
    """Believes that listing the CPU provider makes the CPU nodes 'assigned, not fallen back', so a strict
    session with the CPU listed is created (ORT refuses it: conflicting configuration)."""
    cpu = "CPUExecutionProvider"
    res = [None] * len(ops)
    for name in providers:
        if name == cpu:
            res = [r or cpu for r in res]
            break
        if name not in supports:
            continue
        for i, op in enumerate(ops):
            if res[i] is None and op in supports[name]:
                res[i] = name
    if not fallback and None in res:
        return None
    return [r or cpu for r in res]


def wrong_per_node_none(ops, providers, supports, fallback=True):
    """With fallback off, marks each node that would fall back as None instead of refusing the session."""
    cpu = "CPUExecutionProvider"
    res = [None] * len(ops)
    for name in providers:
        if name == cpu:
            break
        if name not in supports:
            continue
        for i, op in enumerate(ops):
            if res[i] is None and op in supports[name]:
                res[i] = name
    if not fallback:
        if cpu in providers:
            return None
        return res
    return [r or cpu for r in res]


def wrong_strict_always_none(ops, providers, supports, fallback=True):
    """Returns None whenever fallback is off, even when the accelerators run every node."""
    if not fallback:
        return None
    cpu = "CPUExecutionProvider"
    res = [None] * len(ops)
    for name in providers:
        if name == cpu:
            break
        if name not in supports:
            continue
        for i, op in enumerate(ops):
            if res[i] is None and op in supports[name]:
                res[i] = name
    return [r or cpu for r in res]


def wrong_refuse_only_if_nothing_offloaded(ops, providers, supports, fallback=True):
    """Reads 'a silent fallback can hide that the accelerator ran nothing' as: refuse only when NO node left
    the CPU; a partial fallback is accepted (ORT refuses it), and an empty graph is refused (ORT creates it)."""
    cpu = "CPUExecutionProvider"
    if not fallback and cpu in providers:
        return None
    res = [None] * len(ops)
    for name in providers:
        if name == cpu:
            break
        if name not in supports:
            continue
        for i, op in enumerate(ops):
            if res[i] is None and op in supports[name]:
                res[i] = name
    res = [r or cpu for r in res]
    if not fallback and all(r == cpu for r in res):
        return None
    return res


def wrong_last_wins(ops, providers, supports, fallback=True):
    """Every usable provider overwrites what an earlier one took: the LAST listed wins."""
    cpu = "CPUExecutionProvider"
    if not fallback and cpu in providers:
        return None
    res = [cpu] * len(ops)
    for name in providers:
        if name == cpu:
            break
        for i, op in enumerate(ops):
            if op in supports.get(name, ()):
                res[i] = name
    if not fallback and cpu in res:
        return None
    return res


def wrong_dict_form(ops, providers, supports, fallback=True):
    """Returns what the notebook's placement() helper returns: {provider: [op types]}, not one name per node."""
    cpu = "CPUExecutionProvider"
    if not fallback and cpu in providers:
        return None
    placed = {}
    taken = [False] * len(ops)
    for name in list(providers) + ([cpu] if cpu not in providers else []):
        if name != cpu and name not in supports:
            continue
        for i, op in enumerate(ops):
            if not taken[i] and (name == cpu or op in supports[name]):
                taken[i] = True
                placed.setdefault(name, []).append(op)
        if name == cpu:
            break
    if not fallback and cpu in placed:
        return None
    return placed


def wrong_appends_cpu_to_callers_list(ops, providers, supports, fallback=True):
    """Right names, but appends the CPU provider to the caller's own `providers` list (like ORT does
    internally) and records it in the caller's `supports`: the arguments come back changed."""
    cpu = "CPUExecutionProvider"
    if not fallback and cpu in providers:
        return None
    if cpu not in providers:
        providers.append(cpu)
    supports[cpu] = set(ops)
    res = [None] * len(ops)
    for name in providers:
        if name not in supports:
            continue
        for i, op in enumerate(ops):
            if res[i] is None and op in supports[name]:
                res[i] = name
    if not fallback and cpu in res:
        return None
    return res


# ------------------------------------------------------------------------------------------------- shortcuts

def shortcut_all_cpu(ops, providers, supports, fallback=True):
    """What this CPU build prints for every cell: everything on the CPU."""
    return ["CPUExecutionProvider"] * len(ops)


def shortcut_first_provider(ops, providers, supports, fallback=True):
    """Every node on the first listed provider."""
    first = providers[0] if providers else "CPUExecutionProvider"
    return [first] * len(ops)


def shortcut_ask_real_ort(ops, providers, supports, fallback=True):
    """Builds a one-node-per-op ONNX graph and asks this machine's ONNX Runtime where it placed each node,
    ignoring `supports` (the build here has no accelerator, so the real partitioner says CPU)."""
    import onnxruntime as ort
    from onnx import TensorProto, helper

    cpu = "CPUExecutionProvider"
    avail = set(ort.get_available_providers())
    names = [p for p in providers if p in avail]
    if not fallback and cpu in names:
        return None
    if not ops:
        return []
    # the real session needs real operators: stand in Identity for each op type, in order
    nodes = [helper.make_node("Identity", [f"t{i}"], [f"t{i + 1}"], name=f"n{i}") for i in range(len(ops))]
    g = helper.make_graph(nodes, "probe", [helper.make_tensor_value_info("t0", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info(f"t{len(ops)}", TensorProto.FLOAT, [1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    so = ort.SessionOptions()
    so.log_severity_level = 4
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    if not fallback:
        so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    try:
        sess = ort.InferenceSession(m.SerializeToString(), so, providers=names or [cpu])
    except Exception:
        return None
    where = {}
    for sub in sess.get_provider_graph_assignment_info():
        for n in sub.get_nodes():
            where[n.name] = sub.ep_name
    return [where.get(f"n{i}", cpu) for i in range(len(ops))]


def shortcut_agreeable_list(ops, providers, supports, fallback=True):
    """A list that says it equals whatever it is compared with (all-CPU underneath)."""

    class Agrees(list):
        def __eq__(self, other):
            return True

        def __ne__(self, other):
            return False

        __hash__ = None

    return Agrees(["CPUExecutionProvider"] * len(ops))


CORPUS = {"10.placement": [
    Right("blind14-place-claim-sets", answer=right_claim_sets),
    Right("blind14-place-per-node-scan", answer=right_per_node_scan),
    Right("blind14-place-reverse-overwrite", answer=right_reverse_overwrite),
    Wrong("blind14-place-supports-order", answer=wrong_supports_order),
    Wrong("blind14-place-missing-provider-keyerror", answer=wrong_missing_provider_keyerror),
    Wrong("blind14-place-cpu-only-at-end", answer=wrong_cpu_only_at_end),
    Wrong("blind14-place-cpu-listed-strict", answer=wrong_cpu_listed_strict),
    Wrong("blind14-place-per-node-none", answer=wrong_per_node_none),
    Wrong("blind14-place-strict-always-none", answer=wrong_strict_always_none),
    Wrong("blind14-place-refuse-only-if-nothing-offloaded", answer=wrong_refuse_only_if_nothing_offloaded),
    Wrong("blind14-place-last-wins", answer=wrong_last_wins),
    Wrong("blind14-place-dict-form", answer=wrong_dict_form),
    Wrong("blind14-place-mutates-args", answer=wrong_appends_cpu_to_callers_list, outputs_wrong=False),
    Wrong("blind14-place-all-cpu", answer=shortcut_all_cpu, skipped_skill=True),
    Wrong("blind14-place-first-provider", answer=shortcut_first_provider, skipped_skill=True),
    Wrong("blind14-place-ask-real-ort", answer=shortcut_ask_real_ort, skipped_skill=True),
    Wrong("blind14-place-agreeable-list", answer=shortcut_agreeable_list, skipped_skill=True),
]}
