"""A chapter's figure and its caption become one numbered figure with real alt text.

Chapters show a plot as the output of a code cell and describe it in the paragraph right after
the cell (or, failing that, right before it). This transform moves that paragraph into a
``figure`` node around the cell's images, so the page numbers the figure ("Fig. 12"), prints the paragraph as its caption, and gives each image
the caption's text (shortened) as alt text instead of the image file's hash. Images of figures that
already have a caption (glued figures) get their caption as alt text too.
"""
from docutils import nodes
from sphinx.transforms import SphinxTransform

ALT_CHARACTERS = 250


def _caption_children(paragraph: nodes.paragraph) -> list[nodes.Node]:
    """The paragraph's content without an emphasis wrapper or a leading "Figure:" label."""
    children = list(paragraph.children)
    if len(children) == 1 and isinstance(children[0], nodes.emphasis):
        children = list(children[0].children)
    if children and isinstance(children[0], nodes.Text):
        text = str(children[0])
        for label in ("Figure:", "Figure."):
            if text.startswith(label):
                children[0] = nodes.Text(text[len(label):].lstrip())
    return children


def _alt(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= ALT_CHARACTERS else text[:ALT_CHARACTERS - 1].rsplit(" ", 1)[0] + "…"


class CaptionCellFigures(SphinxTransform):
    default_priority = 800

    def apply(self) -> None:
        for figure in self.document.findall(nodes.figure):  # figures with captions of their own (glue)
            caption = next(iter(figure.findall(nodes.caption)), None)
            for img in figure.findall(nodes.image):
                if caption is not None and img.get("alt", img.get("uri")) == img.get("uri"):
                    img["alt"] = _alt(caption.astext())
        count = 0
        for cell in list(self.document.findall(nodes.container)):
            if "cell" not in cell.get("classes", []):
                continue
            images = [img for img in cell.findall(nodes.image)]
            if not images:
                continue
            parent = cell.parent
            index = parent.index(cell)
            following = parent[index + 1] if index + 1 < len(parent) else None
            if not isinstance(following, nodes.paragraph):  # else the paragraph that introduces the plot
                following = parent[index - 1] if index > 0 else None
                if not isinstance(following, nodes.paragraph):
                    continue
            count += 1
            caption = nodes.caption("", "", *_caption_children(following))
            figure = nodes.figure("", classes=["cell-figure"])
            figure["ids"].append(f"cell-figure-{count}")
            holder, at = images[0].parent, images[0].parent.index(images[0])
            for img in images:
                img["alt"] = _alt(caption.astext())
                img.parent.remove(img)
                figure += img
            figure += caption
            holder.insert(at, figure)  # where the cell showed its first image
            parent.remove(following)


def setup(app):
    app.add_transform(CaptionCellFigures)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
