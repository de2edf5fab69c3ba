"""Blind quiz strategies, round 15 (written without seeing the keys; its loader and main, which read the
specs from one checkout, are left out: tests/test_quiz_strategies.py scores it). One line per idea:
longest          - pick the longest option (writers pad the right answer with qualifiers)
shortest         - pick the shortest option (the contrarian of the above)
median-length    - pick the option of middle length (neither extreme)
longest-words    - longest by word count, ties kept
middle           - always the middle letter (b for three options)
last             - always the last letter ("none of the others" habit, padded last option)
absolute-out     - rule out options with absolute words (always, never, only, all, every, any...)
hedge            - pick the options with hedges (may, usually, most, little, likely, about...)
hedge-minus-abs  - score = hedges - absolutes, keep the best
negation-out     - rule out options with negations (not, no, cannot, never, nothing, fails...)
null-out         - rule out options that deny the premise ("Nothing:", "None:", "Never:", "No:")
null-in          - pick the premise-denying option if there is one (the surprising "nothing")
all-none-above   - "all of the above" wins, "none of the above" is ruled out
like-others      - the option sharing the most words with the other options (convergence)
odd-one-out      - the option sharing the fewest words with the others
similar-pair     - the two most similar options: one of them is right, guess between them
prompt-echo      - the option sharing the most content words with the prompt
prompt-echo-out  - rule out the option that parrots the prompt most (a trap)
code-token       - the option with the most code / API tokens (dots, underscores, brackets, camelCase)
code-token-out   - rule out options with code tokens
number-out       - rule out options with numbers and units (precise-sounding traps)
number-middle    - when all options hold numbers, the one with the middle value
because          - the option with a justification (because, since, so, colon clause, which)
qualified        - the most conditions/qualifiers (if, when, unless, but, only when, within, ;)
specific         - the most specific: capitalised / technical nouns and digits per option
unique-info      - the option with the most words that appear in no other option
grammar          - the option whose first word fits the question word (why->because, where->in...)
superlative-out  - rule out sales claims (faster, fastest, better, more accurate, much, twice...)
blame-out        - rule out options that blame the tool (bug, cannot, fails, refuses, rejects, error)
two-part         - the option that joins two facts (and, both, ;, colon + comma)
structure-odd    - the option whose punctuation pattern (colon/comma/none) differs from the others
vote             - majority vote of the single-pick signal strategies above
"""
from __future__ import annotations

import math
import re
from collections import Counter

# --------------------------------------------------------------------------- helpers

STOP = set("""a an the of to in on at for by with and or is are be been was were it its this that these those
as from into than then so such can will would do does did what which who when where why how you your
i we they he she them their there here not no yes""".split())

ABSOLUTE = [r"\balways\b", r"\bnever\b", r"\bonly\b", r"\ball\b", r"\bevery\b", r"\beverything\b",
            r"\bany\b", r"\bnone\b", r"\bnothing\b", r"\bmust\b", r"\bcannot\b", r"\bcan't\b",
            r"\bentire\b", r"\bwhole\b", r"\bat all\b", r"\bexactly\b", r"\bcompletely\b",
            r"\bguarantees?\b", r"\bimpossible\b", r"\beach\b", r"\bsame\b", r"\bidentical\b",
            r"\bfully\b", r"\bno\b"]
HEDGE = [r"\bmay\b", r"\bmight\b", r"\busually\b", r"\boften\b", r"\bmost(ly)?\b", r"\bsome\b",
         r"\bcan\b", r"\blikely\b", r"\brarely\b", r"\btypically\b", r"\bmaybe\b", r"\babout\b",
         r"\bmainly\b", r"\blittle\b", r"\bgenerally\b", r"\bsometimes\b", r"\btends?\b",
         r"\bprobably\b", r"\bwithin\b", r"\bnear(ly)?\b", r"\bapproximately\b", r"\bthose\b",
         r"\bpart\b", r"\bfew\b"]
NEGATION = [r"\bnot\b", r"\bno\b", r"\bnever\b", r"\bcannot\b", r"n't\b", r"\bnothing\b",
            r"\bnone\b", r"\bwithout\b", r"\bneither\b", r"\bnor\b", r"\bfails?\b", r"\brefuses?\b"]
NULL_START = re.compile(r"^\s*(nothing|none|never|no|neither|little)\b", re.I)
SUPERLATIVE = [r"\b\w+est\b", r"\bfaster\b", r"\bbetter\b", r"\bmore accurate\b", r"\bmuch\b",
               r"\btwice\b", r"\bbest\b", r"\bfastest\b", r"\bsmallest\b", r"\bfar\b",
               r"\bspeeds? up\b", r"\bmore\b"]
BLAME = [r"\bbug\b", r"\bcannot\b", r"\bfails?\b", r"\brefuses?\b", r"\brejects?\b", r"\berror\b",
         r"\bbroken\b", r"\bcrash", r"\bunsupported\b", r"\blacks?\b"]
JUSTIFY = [r"\bbecause\b", r"\bsince\b", r"\bso that\b", r"\bso\b", r"\bwhich is why\b", r":",
           r"\bwhich\b", r"\bthus\b", r"\bhence\b", r"\bas\b"]
QUALIFIER = [r"\bif\b", r"\bwhen\b", r"\bunless\b", r"\bbut\b", r"\bwithin\b", r"\bexcept\b",
             r"\bas long as\b", r"\bprovided\b", r";", r",", r"\bwhile\b", r"\bor\b"]
NUMBER = re.compile(r"(?<![A-Za-z_])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
UNIT = re.compile(r"\b(\d+\s*)?(kib|mib|gib|kb|mb|gb|ms|s|bits?|bytes?|%|x)\b", re.I)
CODE = re.compile(r"[A-Za-z_]\w*\.\w+|\w+_\w+|\w+\(|\[|\]|'[^']+'|`[^`]+`|\b[a-z]+[A-Z]\w*|"
                  r"\b[A-Z][a-z]+[A-Z]\w*|=")


def letters(options):
    return sorted(options)


def words(text):
    return re.findall(r"[A-Za-z][A-Za-z0-9_'.+-]*|\d+", text.lower())


def content(text):
    return {w.strip(".'") for w in words(text) if w not in STOP and len(w) > 2}


def count(patterns, text):
    t = text.lower()
    return sum(len(re.findall(p, t)) for p in patterns)


def best(options, score, higher=True):
    """Letters with the best score (a tie = list the learner guesses among)."""
    vals = {k: score(v) for k, v in options.items()}
    target = max(vals.values()) if higher else min(vals.values())
    picks = [k for k in letters(options) if vals[k] == target]
    return picks[0] if len(picks) == 1 else picks


def rule_out(options, flagged):
    """Drop flagged letters; if everything is flagged, nothing was learned: guess among all."""
    keep = [k for k in letters(options) if not flagged(options[k])]
    if not keep:
        keep = letters(options)
    return keep[0] if len(keep) == 1 else keep


def rule_out_min(options, score):
    """Keep the options with the smallest flag score (a graded rule-out)."""
    return best(options, score, higher=False)


def jaccard(a, b):
    if not a and not b:
        return 0.0
    return len(a & b) / len(a | b)


# --------------------------------------------------------------------------- strategies

def strategy_longest(prompt, options):
    return best(options, len)


def strategy_shortest(prompt, options):
    return best(options, len, higher=False)


def strategy_median_length(prompt, options):
    order = sorted(letters(options), key=lambda k: len(options[k]))
    n = len(order)
    if n % 2:
        return order[n // 2]
    return order[n // 2 - 1:n // 2 + 1]


def strategy_longest_words(prompt, options):
    return best(options, lambda t: len(t.split()))


def strategy_middle(prompt, options):
    ls = letters(options)
    n = len(ls)
    return ls[n // 2] if n % 2 else ls[n // 2 - 1:n // 2 + 1]


def strategy_last(prompt, options):
    return letters(options)[-1]


def strategy_absolute_out(prompt, options):
    return rule_out_min(options, lambda t: count(ABSOLUTE, t))


def strategy_hedge(prompt, options):
    return best(options, lambda t: count(HEDGE, t))


def strategy_hedge_minus_abs(prompt, options):
    return best(options, lambda t: count(HEDGE, t) - count(ABSOLUTE, t))


def strategy_negation_out(prompt, options):
    return rule_out_min(options, lambda t: count(NEGATION, t))


def strategy_null_out(prompt, options):
    return rule_out(options, lambda t: bool(NULL_START.match(t)))


def strategy_null_in(prompt, options):
    hits = [k for k in letters(options) if NULL_START.match(options[k])]
    if not hits:
        return letters(options)
    return hits[0] if len(hits) == 1 else hits


ABOVE_ALL = re.compile(r"\b(all|both) of the (above|others|these)\b", re.I)
ABOVE_NONE = re.compile(r"\b(none|neither) of the (above|others|these)\b", re.I)


def strategy_all_none_above(prompt, options):
    alls = [k for k in letters(options) if ABOVE_ALL.search(options[k])]
    if alls:
        return alls[0] if len(alls) == 1 else alls
    return rule_out(options, lambda t: bool(ABOVE_NONE.search(t)))


def _overlap_with_others(options):
    sets = {k: content(v) for k, v in options.items()}
    return {k: sum(jaccard(sets[k], sets[j]) for j in sets if j != k) for k in sets}


def strategy_like_others(prompt, options):
    ov = _overlap_with_others(options)
    return best({k: k for k in options}, lambda k: round(ov[k], 9))


def strategy_odd_one_out(prompt, options):
    ov = _overlap_with_others(options)
    return best({k: k for k in options}, lambda k: round(ov[k], 9), higher=False)


def strategy_similar_pair(prompt, options):
    sets = {k: content(v) | set(words(v)[:1]) for k, v in options.items()}
    ls = letters(options)
    pairs = [(jaccard(sets[a], sets[b]), a, b) for i, a in enumerate(ls) for b in ls[i + 1:]]
    top = max(p[0] for p in pairs)
    winners = [p for p in pairs if p[0] == top]
    if top == 0 or len(winners) > 1:
        return ls
    return [winners[0][1], winners[0][2]]


def strategy_prompt_echo(prompt, options):
    p = content(prompt)
    return best(options, lambda t: len(content(t) & p))


def strategy_prompt_echo_out(prompt, options):
    p = content(prompt)
    vals = {k: len(content(v) & p) for k, v in options.items()}
    top = max(vals.values())
    if top == 0 or list(vals.values()).count(top) == len(vals):
        return letters(options)
    return rule_out(options, lambda t: len(content(t) & p) == top)


def _code(t):
    return len(CODE.findall(t))


def strategy_code_token(prompt, options):
    return best(options, _code)


def strategy_code_token_out(prompt, options):
    return rule_out_min(options, _code)


def _numbers(t):
    return len(NUMBER.findall(t)) + len(UNIT.findall(t))


def strategy_number_out(prompt, options):
    return rule_out_min(options, _numbers)


def strategy_number_middle(prompt, options):
    vals = {}
    for k, v in options.items():
        nums = NUMBER.findall(v)
        if not nums:
            return letters(options)
        try:
            vals[k] = sum(abs(float(x)) for x in nums)
        except ValueError:
            return letters(options)
    order = sorted(vals, key=vals.get)
    if len(set(vals.values())) < len(vals) or len(order) % 2 == 0:
        return letters(options)
    return order[len(order) // 2]


def strategy_because(prompt, options):
    return best(options, lambda t: count(JUSTIFY, t))


def strategy_qualified(prompt, options):
    return best(options, lambda t: count(QUALIFIER, t))


def _specific(t):
    toks = re.findall(r"\S+", t)
    caps = sum(1 for i, w in enumerate(toks) if i > 0 and re.match(r"[A-Z0-9]", w))
    return caps + _code(t) + len(NUMBER.findall(t))


def strategy_specific(prompt, options):
    return best(options, _specific)


def strategy_unique_info(prompt, options):
    sets = {k: content(v) for k, v in options.items()}

    def uniq(k):
        others = set().union(*(sets[j] for j in sets if j != k))
        return len(sets[k] - others)
    return best({k: k for k in options}, uniq)


GRAMMAR = [  # question cue -> first words that fit it
    (r"^\s*why\b|\bwhy\b", r"^(because|since|so|as|the|it|a|an)\b"),
    (r"\bwhen\b", r"^(when|whenever|only|always|never|for|if|after|before|once)\b"),
    (r"\bwhere\b", r"^(in|at|on|inside|under|into|next)\b"),
    (r"\bhow (do|should|would) you\b", r"^(with|by|use|using|set|run|compare|check)\b"),
    (r"\bwhat (do|should|would) you\b", r"^(set|use|run|fix|try|change|ship|pass|write)\b"),
]


def strategy_grammar(prompt, options):
    p = prompt.lower()
    for q, a in GRAMMAR:
        if re.search(q, p):
            return rule_out(options, lambda t: not re.match(a, t.strip().lower()))
    # article agreement: a prompt ending in "a"/"an" needs a consonant/vowel start
    m = re.search(r"\b(a|an)\s*$", p.strip(" ?.:_"))
    if m:
        vowel = m.group(1) == "an"
        return rule_out(options, lambda t: (t.strip()[:1].lower() in "aeiou") != vowel)
    return letters(options)


def strategy_superlative_out(prompt, options):
    return rule_out_min(options, lambda t: count(SUPERLATIVE, t))


def strategy_blame_out(prompt, options):
    return rule_out_min(options, lambda t: count(BLAME, t))


def strategy_two_part(prompt, options):
    return best(options, lambda t: count([r"\band\b", r"\bboth\b", r";", r","], t)
                + (1 if ":" in t and "," in t.split(":", 1)[1] else 0))


def _shape(t):
    return (":" in t, "," in t, ";" in t)


def strategy_structure_odd(prompt, options):
    shapes = {k: _shape(v) for k, v in options.items()}
    c = Counter(shapes.values())
    if len(c) == 1:
        return letters(options)
    rare = min(c.values())
    picks = [k for k in letters(options) if c[shapes[k]] == rare]
    return picks[0] if len(picks) == 1 else picks


_SIGNAL = None  # filled below, after STRATEGIES


def strategy_vote(prompt, options):
    tally = Counter()
    for name, fn in _SIGNAL.items():
        pick = fn(prompt, options)
        ks = [pick] if isinstance(pick, str) else list(pick)
        if len(ks) == len(options):
            continue  # no signal
        for k in ks:
            tally[k] += 1 / len(ks)
    if not tally:
        return letters(options)
    top = max(tally.values())
    picks = [k for k in letters(options) if math.isclose(tally[k], top)]
    return picks[0] if len(picks) == 1 else picks


STRATEGIES = {
    "blind15-longest": strategy_longest,
    "blind15-shortest": strategy_shortest,
    "blind15-median-length": strategy_median_length,
    "blind15-longest-words": strategy_longest_words,
    "blind15-middle": strategy_middle,
    "blind15-last": strategy_last,
    "blind15-absolute-out": strategy_absolute_out,
    "blind15-hedge": strategy_hedge,
    "blind15-hedge-minus-abs": strategy_hedge_minus_abs,
    "blind15-negation-out": strategy_negation_out,
    "blind15-null-out": strategy_null_out,
    "blind15-null-in": strategy_null_in,
    "blind15-all-none-above": strategy_all_none_above,
    "blind15-like-others": strategy_like_others,
    "blind15-odd-one-out": strategy_odd_one_out,
    "blind15-similar-pair": strategy_similar_pair,
    "blind15-prompt-echo": strategy_prompt_echo,
    "blind15-prompt-echo-out": strategy_prompt_echo_out,
    "blind15-code-token": strategy_code_token,
    "blind15-code-token-out": strategy_code_token_out,
    "blind15-number-out": strategy_number_out,
    "blind15-number-middle": strategy_number_middle,
    "blind15-because": strategy_because,
    "blind15-qualified": strategy_qualified,
    "blind15-specific": strategy_specific,
    "blind15-unique-info": strategy_unique_info,
    "blind15-grammar": strategy_grammar,
    "blind15-superlative-out": strategy_superlative_out,
    "blind15-blame-out": strategy_blame_out,
    "blind15-two-part": strategy_two_part,
    "blind15-structure-odd": strategy_structure_odd,
}
# the vote uses the text signals only (not the fixed-position picks)
_SIGNAL = {k: v for k, v in STRATEGIES.items()
           if k not in ("blind15-middle", "blind15-last", "blind15-shortest",
                        "blind15-median-length", "blind15-null-in", "blind15-code-token-out",
                        "blind15-odd-one-out", "blind15-prompt-echo-out")}
STRATEGIES["blind15-vote"] = strategy_vote


