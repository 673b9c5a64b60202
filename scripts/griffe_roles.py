"""A griffe extension for the documentation site (`make docs`, mkdocs.yml): reST-isms in docstrings become Markdown.

The docstrings are prose written for both ``help()`` and Sphinx-minded readers; mkdocstrings renders them as
Markdown. Once the whole package is loaded, each docstring gets three rewrites:

- Roles (``:class:`~agentmsg.content.TextContent```, ``:func:`read```, ``:attr:`title <a.b>```) are resolved in the
  scope of the docstring's object (its members, its imports, then its parents', as Python would) and become
  *optional* mkdocs-autorefs references: a link where the site renders that object, plain code where it does not
  (a private helper, another package), never a broken link. ``~`` shows the last name only, as in Sphinx.
- Simple tables (``====  ====`` borders) are kept as they are laid out, in a preformatted block: their authors wrap
  the first column too, which no Markdown table can hold (reST would split such a row in two).
- Literal blocks (a paragraph ending in ``::`` and the indented block after it) become fenced code blocks.
"""

from __future__ import annotations

import re
import textwrap
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?P<role>class|func|meth|attr|data|mod|exc|obj|const):`(?P<tilde>~?)(?P<target>[^`]+)`")
TITLED = re.compile(r"(?P<title>.+?)\s*<(?P<target>[^<>]+)>")
BORDER = re.compile(r"^(?P<indent> *)=+(?: +=+)+ *$")


def _resolve(obj: griffe.Object, target: str) -> str | None:
    """The full path ``target`` names in ``obj``'s scope (griffe's resolution), or None when it names nothing loaded."""
    head, _, rest = target.partition(".")
    try:
        found = obj.resolve(head)
    except griffe.NameResolutionError:
        return None
    return f"{found}.{rest}" if rest else found


def _roles(obj: griffe.Object, text: str) -> str:
    """Roles become optional references; inside a fenced block (a literal block, a table) their plain text."""
    fenced = False

    def link(match: re.Match[str]) -> str:
        target = match["target"].strip()
        if titled := TITLED.fullmatch(target):
            shown, target = titled["title"], titled["target"]
        else:
            target = target.removesuffix("()")
            shown = target.rsplit(".", 1)[-1] if match["tilde"] else target
            if match["role"] in ("func", "meth"):
                shown += "()"
        if fenced:
            return shown
        # a full path into this package as written, anything else in the docstring's scope
        path = target if target.partition(".")[0] == obj.package.name else _resolve(obj, target)
        if path is None:
            return f"`{shown}`"
        return f'<autoref identifier="{path}" optional>`{shown}`</autoref>'

    out = []
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        out.append(ROLE.sub(link, line))
    return "\n".join(out)


def _tables(text: str) -> str:
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        start = BORDER.match(lines[i])
        if start is None:
            out.append(lines[i])
            i += 1
            continue
        # A table is two or three identical border lines; it ends at the third, or at one a blank line follows.
        borders = [i]
        j = i + 1
        while j < len(lines) and len(borders) < 3:
            if lines[j] == lines[i]:
                borders.append(j)
                if j + 1 >= len(lines) or not lines[j + 1].strip():
                    break
            j += 1
        if len(borders) < 2:
            out.append(lines[i])
            i += 1
            continue
        pad = start["indent"]
        table = textwrap.dedent("\n".join(lines[i : borders[-1] + 1]))
        out += ["", f"{pad}```text", *(pad + row for row in table.split("\n")), f"{pad}```", ""]
        i = borders[-1] + 1
    return "\n".join(out)


def _literal_blocks(text: str) -> str:
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.rstrip().endswith("::"):
            out.append(line)
            i += 1
            continue
        indent = len(line) - len(line.lstrip())
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        block_end = j
        while block_end < len(lines) and (
            not lines[block_end].strip() or len(lines[block_end]) - len(lines[block_end].lstrip()) > indent
        ):
            block_end += 1
        if block_end == j:  # no indented block follows: not a literal block
            out.append(line)
            i += 1
            continue
        intro = line.rstrip()[:-2].rstrip()
        if intro.strip():
            out.append(f"{intro}:" if not intro.endswith(":") else intro)
        pad = " " * indent
        code = textwrap.dedent("\n".join(lines[j:block_end])).strip("\n")
        out += ["", f"{pad}```python", *(pad + c if c else c for c in code.split("\n")), f"{pad}```", ""]
        i = block_end
    return "\n".join(out)


def _walk(obj: griffe.Object, seen: set[str]) -> None:
    if obj.path in seen:
        return
    seen.add(obj.path)
    if obj.docstring is not None:
        obj.docstring.value = _roles(obj, _tables(_literal_blocks(obj.docstring.value)))
    for member in obj.members.values():
        if not member.is_alias:
            _walk(member, seen)  # type: ignore[arg-type]


class ReSTRoles(griffe.Extension):
    """Rewrites every docstring of a package once it is loaded (roles, simple tables, literal blocks)."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        _walk(pkg, set())
