"""Every item and section id written in running text (``ftip-00JP``) becomes a link to its page.

Chapters cross-reference statements with ``{prf:ref}``; ids also appear as plain text (outline
tables, front matter, API docstrings). After references are resolved, each such id that names a
statement (sphinx-proof's labels) or a section page (a ``(ftip-XXXX)=`` target) is wrapped in a
link to it; ids without a page stay text. Code blocks, math and existing links are left alone.
"""
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


def setup(app):
    app.connect("doctree-resolved", link_ids)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
