"""Links a reader follows: item and section ids to their pages, chapters to the library they call.

Chapters cross-reference statements with ``{prf:ref}``; ids also appear as plain text (outline
tables, front matter, API docstrings). After references are resolved, each such id that names a
statement (sphinx-proof's labels) or a section page (a ``(ftip-XXXX)=`` target) is wrapped in a
link to it; ids without a page stay text. Code blocks, math and existing links are left alone.

A chapter page also ends with the ``ftipbook`` objects its code imports, each linked to its entry
in the API pages (whose docstrings, in turn, name the items they implement, linked as above).
"""
import ast
import re

from docutils import nodes
from sphinx.util.nodes import make_refnode

ID = re.compile(r"ftip-[0-9A-Za-z]{4}\b")
SKIP = (nodes.reference, nodes.literal_block, nodes.raw, nodes.math, nodes.math_block, nodes.title,
        nodes.target, nodes.comment)


def _target(env, label: str):
    proof = getattr(env, "proof_list", {}).get(label)
    if proof is not None:
        return proof["docname"], label
    std = env.get_domain("std").labels.get(label)
    if std is not None and std[0]:
        return std[0], std[1]
    return None


def _skipped(node) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, SKIP):
            return True
        parent = parent.parent
    return False


def link_ids(app, doctree, fromdocname: str) -> None:
    env, builder = app.env, app.builder
    for text in list(doctree.findall(nodes.Text)):
        if not ID.search(text) or _skipped(text):
            continue
        parent = text.parent
        literal = isinstance(parent, nodes.literal)
        if literal:  # an id written as code (`ftip-0003`): link the whole literal
            found = _target(env, text.astext().lower()) if ID.fullmatch(text.astext()) else None
            if found is not None and not _skipped(parent):
                parent.replace_self(make_refnode(builder, fromdocname, found[0], found[1], parent.deepcopy()))
            continue
        pieces, last = [], 0
        for m in ID.finditer(text):
            found = _target(env, m.group().lower())
            if found is None:
                continue
            pieces.append(nodes.Text(text[last:m.start()]))
            pieces.append(make_refnode(builder, fromdocname, found[0], found[1], nodes.Text(m.group())))
            last = m.end()
        if pieces:
            pieces.append(nodes.Text(text[last:]))
            parent.replace(text, [p for p in pieces if not (isinstance(p, nodes.Text) and not p.astext())])


def _imported(code: str) -> list[str]:
    """Dotted names the code imports from ``ftipbook`` (``from ftipbook.x import y`` -> ``ftipbook.x.y``)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    return [f"{node.module}.{alias.name}" for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ftipbook")
            for alias in node.names]


def _documented(objects: dict, name: str) -> str | None:
    """The documented full name of ``name``, also when a package re-exports it from a submodule."""
    if name in objects:
        return name
    package, _, short = name.rpartition(".")
    found = sorted(k for k in objects if k.startswith(package + ".") and k.endswith("." + short))
    return found[0] if found else None


def link_api(app, doctree, fromdocname: str) -> None:
    if not fromdocname.startswith("chapters/"):
        return
    objects = app.env.get_domain("py").objects
    names: dict[str, None] = {}
    for block in doctree.findall(nodes.literal_block):
        for name in _imported(block.astext()):
            full = _documented(objects, name)
            if full is not None and objects[full].objtype != "module":
                names.setdefault(full)
    if not names:
        return
    para = nodes.paragraph("", "Library objects this chapter imports: ")
    for i, full in enumerate(sorted(names, key=lambda n: n.rsplit(".", 1)[-1].lower())):
        entry = objects[full]
        ref = make_refnode(app.builder, fromdocname, entry.docname, entry.node_id,
                           nodes.literal(full, full.rsplit(".", 1)[-1]))
        para += [nodes.Text(", ")] if i else []
        para += ref
    para += nodes.Text(".")
    section = nodes.section(ids=["library-objects"], classes=["library-objects"])
    section += nodes.rubric("", "In the library")
    section += para
    doctree += section


def setup(app):
    app.connect("doctree-resolved", link_ids)
    app.connect("doctree-resolved", link_api)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
