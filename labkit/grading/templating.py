"""The grader's HTML pages (a learner's feedback, the class report) from jinja2 templates.

Every value is escaped unless marked safe: the pages are given plain data (the judge's `Result`
fields, names, messages, numbers) and the templates in `templates/` decide the markup. The only
markup added outside them is the course's inline Markdown of messages and hints (`markdown`,
`hint` filters), which escapes its text first (`checks.display.inline_markdown`).
"""
from __future__ import annotations

from functools import lru_cache

from markupsafe import Markup


@lru_cache(maxsize=1)
def environment():
    """The one jinja2 environment of the grader: package templates, autoescape on, undefined names an error."""
    from jinja2 import Environment, PackageLoader, StrictUndefined

    from ..checks.display import hint_html, inline_markdown

    env = Environment(loader=PackageLoader("labkit.grading", "templates"), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["markdown"] = lambda text: Markup(inline_markdown(str(text)))
    env.filters["hint"] = lambda text: Markup(hint_html(str(text)))
    return env


def render(template: str, **data: object) -> str:
    """`templates/<template>` rendered with `data` (escaped by default)."""
    return environment().get_template(template).render(**data)
