"""A griffe extension for the documentation site (`make docs`, mkdocs.yml): reST roles become API links.

The docstrings are Markdown prose that names other objects the Sphinx way, ``:class:`~agentmsg.content.TextContent```,
``:func:`read```, ``:mod:`agentmsg.ui```. Once the whole package is loaded, each role is resolved in the scope of the
docstring's object (its members, its imports, then its parents', as Python would) and replaced by an *optional*
mkdocs-autorefs reference: a link where the reference renders that object, plain code where it does not (a private
helper, another package), never a broken link. ``~`` shows the last name only, as in Sphinx.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?P<role>class|func|meth|attr|data|mod|exc|obj|const):`(?P<tilde>~?)(?P<target>[^`]+)`")
TITLED = re.compile(r"(?P<title>.+?)\s*<(?P<target>[^<>]+)>")


def _resolve(obj: griffe.Object, target: str) -> str | None:
    """The full path ``target`` names in ``obj``'s scope (griffe's resolution), or None when it names nothing loaded."""
    head, _, rest = target.partition(".")
    try:
        found = obj.resolve(head)
    except griffe.NameResolutionError:
        return None
    return f"{found}.{rest}" if rest else found


def _rewrite(obj: griffe.Object, text: str) -> str:
    def link(match: re.Match[str]) -> str:
        target = match["target"].strip()
        if titled := TITLED.fullmatch(target):  # :attr:`a title <the.target>`
            shown, target = titled["title"], titled["target"]
        else:
            target = target.removesuffix("()")
            shown = target.rsplit(".", 1)[-1] if match["tilde"] else target
            if match["role"] in ("func", "meth"):
                shown += "()"
        path = target if target.startswith("agentmsg.") else _resolve(obj, target)
        if path is None:
            return f"`{shown}`"
        return f'<autoref identifier="{path}" optional>`{shown}`</autoref>'

    return ROLE.sub(link, text)


def _walk(obj: griffe.Object, seen: set[str]) -> None:
    if obj.path in seen:
        return
    seen.add(obj.path)
    if obj.docstring is not None:
        obj.docstring.value = _rewrite(obj, obj.docstring.value)
    for member in obj.members.values():
        if not member.is_alias:
            _walk(member, seen)  # type: ignore[arg-type]


class ReSTRoles(griffe.Extension):
    """Rewrites the roles of every docstring in a package once it is loaded."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        _walk(pkg, set())
