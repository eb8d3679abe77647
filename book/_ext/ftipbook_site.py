"""After an HTML build: point the notebook buttons at the reader notebooks, drop what no
page loads and make what the pages do load smaller without changing what a reader sees.

A chapter's Colab button opens its reader notebook (``notebooks/...``, written by
``tools/reader_notebooks.py``: statements and references readable outside the book)
instead of the tested notebook, and the download button serves the same file. A script
that the page head carries twice is kept once, and only the search page loads the search
index.

The offline MathJax copy holds every MathJax bundle; the pages load ``tex-chtml.js``
only, which fetches TeX extensions from ``input/tex/extensions``, fonts from
``output/chtml`` and, when a reader turns them on in the math menu, the accessibility
components (``a11y``, ``sre``). Every other bundle and component goes
(:func:`_bundled_components`), and so do the TeX extensions no formula of the site can
load (:func:`_tex_extensions`), the JavaScript and CSS source maps of the theme, the
speech maps of languages other than the site's (:func:`_speech_maps`), the theme's
translation catalogues (:func:`_locales`) and the TrueType copies of its icon fonts
(:func:`_truetype_fallbacks`). The theme's stylesheet draws its icons from the Font
Awesome fonts, so the script that redraws them as SVG goes
(:func:`_font_awesome_script`), and so do the glyph rules of icons no page shows
(:func:`_icon_rules`).

Pages lose the markup that changes nothing on screen: highlighted code keeps only the
token spans that colour something (:func:`_code_spans`), tags keep only the classes a
stylesheet or script can select (:func:`_unused_classes`), comments and the extra space
between attributes go (:func:`_compact_markup`) and runs of whitespace between tags
shrink to one character (:func:`_collapse_whitespace`). Figures are stored as palette
PNGs where that is indistinguishable from the full-colour plot (:func:`_smaller_png`).
"""
import io
import json
import math
import re
import shutil
from pathlib import Path

from PIL import Image, ImageChops, ImageStat

COLAB_CHAPTERS = "/blob/main/chapters/"
COLAB_READER = "/blob/main/notebooks/"

#: MathJax files and folders the pages can load (relative to ``_static/mathjax``);
#: ``input/mml.js`` is what ``a11y/semantic-enrich`` needs besides ``a11y/sre``.
MATHJAX_KEEP = {"tex-chtml.js", "input/tex", "input/mml.js", "output/chtml", "a11y",
                "sre", "ui"}


def _mathjax_prune(root: Path) -> None:
    for path in sorted(root.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        rel = path.relative_to(root).as_posix()
        if any(rel == keep or rel.startswith(keep + "/") or keep.startswith(rel + "/")
               for keep in MATHJAX_KEEP):
            continue
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        elif path.exists():
            path.unlink()


PRELOAD = re.compile(r"preLoad\(([^)]*)\)")


def _bundled_components(mathjax: Path, config: object) -> None:
    """Drop the components that ``tex-chtml.js`` carries itself, and ``all-packages``.

    The combined file declares what it contains (``loader.preLoad(...)``: the menu, the
    CHTML font data, the assistive MathML and the TeX packages ``ams``, ``newcommand``
    and others); MathJax's loader never fetches a component it has, so these files are
    never requested. Of the TeX extensions the autoloader and ``\\require`` fetch each
    package by its own name; ``all-packages`` is loaded only when the MathJax
    configuration names it, and the site's (``mathjax3_config``) does not.
    """
    carried = PRELOAD.findall((mathjax / "tex-chtml.js").read_text(encoding="utf-8"))
    names = {n.strip().strip('"') for found in carried for n in found.split(",")}
    if "all-packages" not in str(config):
        names.add("[tex]/all-packages")
    for name in names:
        path = mathjax / name.replace("[tex]/", "input/tex/extensions/")
        path = path if path.suffix == ".js" else path.with_name(path.name + ".js")
        if path.is_file():
            path.unlink()


AUTOLOAD_MAP = re.compile(r"\{(action:\[.*?)\}")
AUTOLOAD_ENTRY = re.compile(r"(\w+):(\[(?:\[[^\]]*\]|[^\[\]])*\])")
QUOTED_WORD = re.compile(r'"(\w+)"')
DEPENDENCY = re.compile(r'"\[tex\]/(\w+)":\[((?:"[^"]*",?)*)\]')
TEX_PACKAGE = re.compile(r"\[tex\]/(\w+)")
TEX_NAME = re.compile(r"\\(?:begin\{)?([a-zA-Z]+)")
TEX_REQUIRE = re.compile(r"\\require\{(\w+)\}")


def _tex_extensions(mathjax: Path, pages: list[str], config: object) -> None:
    """Keep the TeX extensions that the site's formulas can make MathJax load.

    ``tex-chtml.js`` fetches an extension (``input/tex/extensions/<name>.js``) in three
    ways only: its autoload table names the macros and environments that load each
    one (``cancel: ["cancel", "bcancel", ...]``), ``\\require{<name>}`` loads any, and
    the MathJax configuration may name packages. So an extension is kept when a
    ``\\macro`` or ``\\begin{environment}`` written anywhere on a page is in its table
    entry, when a page requires it, or when the configuration names it, together with
    the extensions it depends on (the bundle's ``"[tex]/<name>": [...]`` list). Nothing
    is deleted if the bundle's table is not found.
    """
    bundle = (mathjax / "tex-chtml.js").read_text(encoding="utf-8")
    table = AUTOLOAD_MAP.search(bundle)
    folder = mathjax / "input" / "tex" / "extensions"
    if table is None or not folder.is_dir():
        return
    written = {name for html in pages for name in TEX_NAME.findall(html)}
    needed = {name for name, loaders in AUTOLOAD_ENTRY.findall(table.group(1))
              if set(QUOTED_WORD.findall(loaders)) & written}
    needed |= {name for html in pages for name in TEX_REQUIRE.findall(html)}
    needed |= {path.stem for path in folder.glob("*.js") if path.stem in str(config)}
    depends = {name: set(TEX_PACKAGE.findall(on))
               for name, on in DEPENDENCY.findall(bundle)}
    while extra := {d for name in needed for d in depends.get(name, ())} - needed:
        needed |= extra
    for path in folder.glob("*.js"):
        if path.stem not in needed:
            path.unlink()


#: Speech-rule-engine maps every language needs: ``base`` (the symbols' shared rules,
#: SRE's ``BASE_LOCALE``) and ``nemeth`` (the Braille output of the math menu).
SPEECH_SHARED = ("base", "nemeth")
LOCALE_MAP = re.compile(r"LOCALES=new Map\(\[(.*?)\]\)")
LOCALE_ENTRY = re.compile(r'\["([\w-]+)","[^"]*"\],?')


def _speech_maps(mathjax: Path, language: str) -> None:
    """Keep the speech maps of the site's language, ``base`` and ``nemeth`` only.

    The math menu's speech and Braille output (Accessibility > Speech) read
    ``sre/mathmaps/<locale>.json``: ``base`` always, the speech language (the page's,
    English here) and ``nemeth`` for Braille. The menu's Language submenu would also
    offer ten other languages (3.3 MB of maps); it now lists only the languages whose
    map is shipped, so no menu entry asks for a deleted file. The list is ``LOCALES`` of
    the speech-rule engine, which ``tex-chtml.js`` and ``a11y/sre.js`` each carry.
    """
    maps = mathjax / "sre" / "mathmaps"
    if not maps.is_dir():
        return
    keep = {language, *SPEECH_SHARED}
    for path in maps.glob("*.json"):
        if path.stem not in keep:
            path.unlink()

    def shipped(entry: re.Match) -> str:
        return entry.group() if entry.group(1) in keep else ""

    def menu_list(found: re.Match) -> str:
        entries = LOCALE_ENTRY.sub(shipped, found.group(1)).rstrip(",")
        return f"LOCALES=new Map([{entries}])"

    for bundle in mathjax.rglob("*.js"):
        text = bundle.read_text(encoding="utf-8")
        fixed = LOCALE_MAP.sub(menu_list, text)
        if fixed != text:
            bundle.write_text(fixed, encoding="utf-8")


def _locales(static: Path, language: str) -> None:
    """Drop the theme's translation catalogues (``_static/locales/<lang>``) but the
    site's language.

    sphinx-book-theme ships its gettext catalogues (``booktheme.po``/``.mo``) inside its
    static folder, so Sphinx copies all 46 languages next to the pages; the build reads
    them from the theme package and no page or script loads them.
    """
    for folder in (static / "locales").glob("*"):
        if folder.is_dir() and folder.name != language:
            shutil.rmtree(folder)


TRUETYPE_FALLBACK = re.compile(
    r'(url\([^)]*\.woff2\) format\("woff2"\)),url\(([^)]*\.ttf)\) format\("truetype"\)')


def _truetype_fallbacks(static: Path) -> None:
    """Serve the theme's Font Awesome fonts as WOFF2 only (the TrueType copies go).

    Each ``@font-face`` lists ``woff2`` first and ``ttf`` after it; a browser takes the
    first format it supports, and every browser that runs the theme supports WOFF2
    (Chrome 36, Firefox 39, Safari 12, all older than the ``<dialog>`` element that the
    theme's search needs), so no reader's browser requests the ``.ttf``. The fallback is
    cut from the stylesheets, and a ``.ttf`` that no stylesheet names is deleted.
    """
    named = set()
    for sheet in static.rglob("*.css"):
        css = sheet.read_text(encoding="utf-8")
        fixed = TRUETYPE_FALLBACK.sub(r"\1", css)
        if fixed != css:
            sheet.write_text(fixed, encoding="utf-8")
        named |= {Path(url).name for url in re.findall(r"url\(([^)]*\.ttf)\)", fixed)}
    for font in (static / "vendor").rglob("*.ttf"):
        if font.name not in named:
            font.unlink()


SCRIPT = re.compile(r"<script\b[^>]*>.*?</script>\n?", re.S)


def _unique_scripts(html: str) -> str:
    """Each ``<script>`` of the page head once: extensions set up before reading add
    theirs twice, and a repeated ``const THEBE_JS_URL`` is a SyntaxError in every
    page's console."""
    end = html.find("</head>")
    seen: set[str] = set()

    def once(match: re.Match) -> str:
        if match.group() in seen:
            return ""
        seen.add(match.group())
        return match.group()

    return SCRIPT.sub(once, html[:end]) + html[end:] if end > 0 else html


PYGMENTS_RULE = re.compile(
    r'html\[data-theme="(\w+)"\] \.highlight(?: \.([\w-]+))? \{([^}]*)\}')


def _pygments_colours(css: str) -> dict[str | None, tuple[str, ...]]:
    """Colour of each token class in every theme, read from the built ``pygments.css``.

    Only classes whose rule sets the colour and nothing else, in each theme, are listed
    (a tuple with one colour per theme); ``None`` maps to the code's default text
    colour. A class styled in any other way (italic, a background) is left out. The
    site's other stylesheets do not style token spans in code blocks (``basic.css``'s
    ``.sig-param.n`` is for API signatures).
    """
    rules: dict[str | None, dict[str, str]] = {}
    for theme, token, body in PYGMENTS_RULE.findall(css):
        decls = dict(d.split(":", 1) for d in body.split(";") if ":" in d)
        decls = {k.strip(): v.strip().lower() for k, v in decls.items()}
        if token and set(decls) == {"color"}:
            rules.setdefault(token, {})[theme] = decls["color"]
        elif not token and "color" in decls:
            rules.setdefault(None, {})[theme] = decls["color"]
    themes = sorted(rules.get(None, {}))
    return {token: tuple(by_theme[t] for t in themes)
            for token, by_theme in rules.items() if sorted(by_theme) == themes}


LEAF_SPAN = re.compile(r'<span class="([\w-]+)">([^<]*)</span>')


def _code_spans(code: str, colours: dict[str | None, tuple[str, ...]]) -> str:
    """Highlighted code with the token spans that change nothing on screen removed.

    A span whose class has the default text colour in every theme is unwrapped (its text
    stays), and neighbouring spans of the same colours merge into one, across the spaces
    and line breaks between them (whitespace shows no colour). Only innermost spans are
    touched; line highlights (``hll``) and other styled classes stay as they are.
    """
    plain = colours.get(None)

    def unwrap(span: re.Match) -> str:
        return span.group(2) if colours.get(span.group(1)) == plain else span.group()

    parts = LEAF_SPAN.split(LEAF_SPAN.sub(unwrap, code))
    out = [parts[0]]
    held: list[str] | None = None  # [class, text] of the span not written yet
    gap = ""
    for token, text, after in zip(parts[1::3], parts[2::3], parts[3::3]):
        if (held and colours.get(token) is not None and not gap.strip()
                and colours.get(token) == colours.get(held[0])):
            held[1] += gap + text
        else:
            if held:
                out += [f'<span class="{held[0]}">{held[1]}</span>', gap]
            held = [token, text]
        gap = after
    if held:
        out += [f'<span class="{held[0]}">{held[1]}</span>', gap]
    return "".join(out)


HIGHLIGHT = re.compile(r'(<div class="highlight"><pre>)(.*?)(</pre>)', re.S)


def _lighter_code(html: str, colours: dict[str | None, tuple[str, ...]]) -> str:
    """The page with :func:`_code_spans` applied to every highlighted code block."""
    if not colours.get(None):
        return html
    return HIGHLIGHT.sub(
        lambda block: block.group(1) + _code_spans(block.group(2), colours)
        + block.group(3), html)


WHITESPACE_RUN = re.compile(
    r"<(pre|textarea|script|style)\b.*?</\1\s*>|(?<=>)\s{2,}(?=<)", re.S | re.I)


def _collapse_whitespace(html: str) -> str:
    """Each run of whitespace between two tags as one character; ``<pre>``,
    ``<textarea>``, ``<script>`` and ``<style>`` untouched.

    A browser renders such a run as one space (no stylesheet of the site sets
    ``white-space: pre`` outside ``<pre>``), so a run with a newline becomes a newline
    and one without becomes a space.
    """

    def one(run: re.Match) -> str:
        if run.group(1):  # a block whose whitespace shows or is code
            return run.group()
        return "\n" if "\n" in run.group() else " "

    return WHITESPACE_RUN.sub(one, html)


FONT_AWESOME_SCRIPT = re.compile(
    r'\s*<script\b[^>]*src="[^"]*scripts/fontawesome\.js[^"]*"[^>]*></script>')
FONT_AWESOME_FACE = re.compile(r"@font-face\{[^}]*Font Awesome[^}]*woff2")


def _font_awesome_script(static: Path) -> bool:
    """Drop the theme's Font Awesome script (1.5 MB) if its stylesheets draw the icons.

    ``fontawesome.js`` swaps each ``<i class="fa-...">`` for an inline SVG; the theme's
    stylesheet also carries Font Awesome's CSS (an ``@font-face`` per WOFF2 font and a
    ``.fa-...:before`` glyph per icon), which draws the same icons from the fonts when
    no script replaces them. Returns whether the script is gone (the pages then drop
    its tag).
    """
    sheets = (sheet.read_text(encoding="utf-8") for sheet in static.rglob("*.css"))
    if not any(FONT_AWESOME_FACE.search(css) for css in sheets):
        return False
    for path in static.glob("scripts/fontawesome.js*"):  # the script and its licence
        path.unlink()
    return True


ICON_RULE = re.compile(r'(?<=[{}])((?:\.fa-[\w-]+::?before,?)+)(\{content:"[^"]*"\})')
ICON_SELECTOR = re.compile(r"\.(fa-[\w-]+)::?before")
ICON_NAME = re.compile(r"(?<![\w-])fa-[\w-]+")


def _icon_rules(static: Path, pages: list[str]) -> None:
    """Drop the glyph rules of the Font Awesome icons that no page and no script names.

    The theme's stylesheet carries ``.fa-<icon>:before{content:"..."}`` for each of
    Font Awesome's 1,900 icons (86 kB); a rule draws only on an element of class
    ``fa-<icon>``, which a page or a script would have to write. A name counts when it
    appears anywhere in a page or under ``_static`` in a script; of a rule listing
    aliases only the named ones stay.
    """
    texts = pages + [path.read_text(encoding="utf-8") for path in static.rglob("*.js")]
    named = {name for text in texts for name in ICON_NAME.findall(text)}

    def named_only(rule: re.Match) -> str:
        selectors = [selector.group() for selector in ICON_SELECTOR.finditer(rule[1])
                     if selector[1] in named]
        return ",".join(selectors) + rule[2] if selectors else ""

    for sheet in static.rglob("*.css"):
        css = sheet.read_text(encoding="utf-8")
        fixed = ICON_RULE.sub(named_only, css)
        if fixed != css:
            sheet.write_text(fixed, encoding="utf-8")


#: Classes kept whatever the stylesheets and scripts say: ``notranslate`` tells
#: translation tools to leave code and formulas alone, ``tex2jax_ignore`` tells
#: MathJax 2 and other TeX renderers to leave a notebook section alone (MathJax 3
#: reads its ``mathjax_ignore`` twin), and the tests of the built site
#: (``tests/browser``) find formulas, links, literals, labels, captions, figures, code
#: blocks and heading anchors by the others (a test counts ``class="math`` as a
#: formula, so ``mathjax_ignore`` must not come first).
CLASSES_KEPT = frozenset({
    "notranslate", "tex2jax_ignore", "math", "reference", "internal", "pre", "label",
    "fn-bracket", "caption-number", "cell-figure", "highlight", "headerlink"})
CSS_CLASS = re.compile(r"\.((?:[\w-]|\\.)+)")
CLASS_MATCH = re.compile(r"""\[class([*^$|~]?)=["']?([^"'\]]+)["']?\]""")
CLASS_PRESENT = re.compile(r"\[class\]")
COMPOUND_END = re.compile(r"([^\s,>+~{}]*)$")
TAG_NAME = re.compile(r"[a-zA-Z][\w-]*")
JS_WORD = re.compile(r"[\w$-]+")
INLINE_CODE = re.compile(r"<(script|style)\b[^>]*>(.*?)</\1\s*>", re.S | re.I)


class UsedClasses:
    """The class names that a stylesheet or a script of the site can select.

    Read from CSS: every ``.name`` of a selector, every ``[class*=part]`` (a class
    containing ``part`` is kept), every ``[class^=...]``, ``[class$=...]``,
    ``[class|=...]`` or ``[class=...]`` (an attribute containing the value is left
    whole, since these match the attribute's full text) and the tags of ``[class]``
    selectors (on those an attribute emptied stays, as ``class=""``; a ``[class]``
    without a tag keeps every attribute). Read from JavaScript, conservatively: every
    word and every hyphenated name counts as used, and a name ending in ``-`` (a prefix
    a script completes) keeps the classes it starts. Scripts are also read for attribute
    selectors, as stylesheets are.
    """

    def __init__(self) -> None:
        self.names: set[str] = set(CLASSES_KEPT)
        self.prefixes: set[str] = set()
        self.parts: set[str] = set()
        self.whole: set[str] = set()
        self.present_on: set[str] = set()
        self._verdicts: dict[str, bool] = {}

    def add_css(self, css: str) -> None:
        """Class names, attribute selectors and ``[class]`` tags of a stylesheet."""
        self.names |= {name.replace("\\", "") for name in CSS_CLASS.findall(css)}
        self._selectors(css)

    def add_js(self, script: str) -> None:
        """Every word and hyphenated name of a script; one ending in ``-`` prefixes."""
        words = set(JS_WORD.findall(script))
        self.names |= words | {part for word in words for part in word.split("-")}
        self.prefixes |= {word for word in words if word.endswith("-")}
        self._selectors(script)

    def _selectors(self, text: str) -> None:
        for operator, value in CLASS_MATCH.findall(text):
            target = self.parts if operator in "*~" else self.whole
            target.update(value.split())
        for found in CLASS_PRESENT.finditer(text):
            compound = COMPOUND_END.search(text[:found.start()]).group(1)
            tag = TAG_NAME.match(compound)
            self.present_on.add(tag.group().lower() if tag else "*")

    def used(self, name: str) -> bool:
        """Whether a stylesheet or script can select the class ``name``."""
        if name not in self._verdicts:
            self._verdicts[name] = (
                name in self.names or name.startswith(tuple(self.prefixes))
                or any(part in name for part in self.parts))
        return self._verdicts[name]

    def attribute(self, tag: str, value: str) -> str:
        """The ``class`` attribute (with its leading space) ``tag`` keeps, or ""."""
        if any(whole in value for whole in self.whole):
            return f' class="{value}"'
        names = value.split()
        kept = [name for name in names if self.used(name)]
        if kept == names:
            return f' class="{value}"'
        if kept or {"*", tag.lower()} & self.present_on:
            return f' class="{" ".join(kept)}"'
        return ""


def _used_classes(static: Path, pages: list[str]) -> UsedClasses:
    """What the site's stylesheets and scripts select: every CSS and JavaScript file
    under ``_static`` and every inline ``<style>`` and ``<script>`` of the pages."""
    used = UsedClasses()
    for path in static.rglob("*.css"):
        used.add_css(path.read_text(encoding="utf-8"))
    for path in static.rglob("*.js"):
        used.add_js(path.read_text(encoding="utf-8"))
    for html in pages:
        for kind, code in INLINE_CODE.findall(html):
            (used.add_css if kind.lower() == "style" else used.add_js)(code)
    return used


#: The attributes of a start tag: quoted values may hold ``>``.
ATTRIBUTES = r"""((?:"[^"]*"|'[^']*'|[^'">])*)>"""
TAG_OR_RAW = re.compile(
    r"<(script|style|textarea)\b.*?</\1\s*>|<([a-zA-Z][\w-]*)\b" + ATTRIBUTES,
    re.S | re.I)
CLASS_ATTRIBUTE = re.compile(r'\sclass="([^"]*)"')


def _unused_classes(html: str, used: UsedClasses) -> str:
    """The page with the class names no stylesheet or script selects left out of its
    tags (:class:`UsedClasses`); a ``class`` attribute left empty goes. The text of
    scripts, styles and text areas is not touched."""

    def tag(found: re.Match) -> str:
        if found.group(1):
            return found.group()
        attributes = CLASS_ATTRIBUTE.sub(
            lambda attr: used.attribute(found.group(2), attr.group(1)), found.group(3))
        return f"<{found.group(2)}{attributes}>"

    return TAG_OR_RAW.sub(tag, html)


MARKUP = re.compile(r"<(script|style|textarea|pre)\b.*?</\1\s*>|<!--.*?-->"
                    r"|(<[a-zA-Z][\w-]*)" + ATTRIBUTES, re.S | re.I)
QUOTED_OR_SPACE = re.compile(r"""("[^"]*"|'[^']*')|\s+""")


def _compact_markup(html: str) -> str:
    """The page without HTML comments and with one space between a tag's attributes.

    Neither shows: a comment is not rendered and the whitespace that separates
    attributes is not part of any value (quoted values keep theirs). ``<script>``,
    ``<style>``, ``<textarea>`` and ``<pre>`` blocks are left as they are.
    """

    def compact(found: re.Match) -> str:
        if found.group(1):
            return found.group()
        if not found.group(2):  # a comment
            return ""
        rest = QUOTED_OR_SPACE.sub(lambda part: part.group(1) or " ", found.group(3))
        return f"{found.group(2)}{rest}>"

    return MARKUP.sub(compact, html)


SEARCH_INDEX = re.compile(r'\s*<script src="[^"]*searchindex\.js"></script>')


def _pages(out: Path, pages: dict[Path, str], font_awesome_gone: bool) -> None:
    """Write each page (its path and text as built) with the transforms above."""
    pygments = out / "_static" / "pygments.css"
    colours = _pygments_colours(pygments.read_text()) if pygments.exists() else {}
    used = _used_classes(out / "_static", list(pages.values()))
    for page, html in pages.items():
        fixed = _unique_scripts(html).replace(COLAB_CHAPTERS, COLAB_READER)
        if page.name != "search.html":  # only the search page loads the index (0.9 MB)
            fixed = SEARCH_INDEX.sub("", fixed)
        if font_awesome_gone:
            fixed = FONT_AWESOME_SCRIPT.sub("", fixed)
        fixed = _unused_classes(_lighter_code(fixed, colours), used)
        fixed = _collapse_whitespace(_compact_markup(fixed))
        if fixed != html:
            page.write_text(fixed, encoding="utf-8")


#: Least peak signal-to-noise ratio (dB) of a palette PNG against its full-colour plot:
#: above about 40 dB a difference is not visible; matplotlib plots reach 46 and more.
MIN_PSNR = 40.0


def _psnr(image: Image.Image, other: Image.Image) -> float:
    """Peak signal-to-noise ratio of ``other`` against ``image`` (both RGB), in dB."""
    squared = ImageChops.difference(image, other).point(lambda d: d * d)
    mse = sum(ImageStat.Stat(squared).mean) / 3
    return math.inf if mse == 0 else 10 * math.log10(255**2 / mse)


def _smaller_png(path: Path) -> None:
    """Store a PNG in fewer bytes and the same look.

    Always tried: the same pixels recompressed (Pillow's ``optimize``). For an opaque
    image also a 256-colour palette, kept only if it is at least :data:`MIN_PSNR` dB
    close to the original. The smallest wins; an image already stored with a palette is
    left alone (so a rebuild does not quantize twice).
    """
    with Image.open(path) as image:
        image.load()
    if image.mode not in ("RGB", "RGBA"):
        return
    candidates = [image]
    if image.mode == "RGB" or image.getextrema()[3][0] == 255:
        rgb = image.convert("RGB")
        palette = rgb.quantize(256, method=Image.Quantize.MEDIANCUT)
        if _psnr(rgb, palette.convert("RGB")) >= MIN_PSNR:
            candidates.append(palette)
    best = path.read_bytes()
    kept = {key: image.info[key] for key in ("dpi",) if key in image.info}
    for candidate in candidates:
        buffer = io.BytesIO()
        candidate.save(buffer, "PNG", optimize=True, **kept)
        if len(buffer.getvalue()) < len(best):
            best = buffer.getvalue()
    if len(best) < path.stat().st_size:
        path.write_bytes(best)


def _reader_notebooks(app, out: Path) -> None:
    """Serve each chapter's reader notebook as its download, written without indentation
    (the same JSON: Jupyter opens it as it is and indents it again when it saves)."""
    reader = Path(app.srcdir) / "notebooks"
    for served in (out / "_sources" / "chapters").rglob("*.ipynb"):
        source = reader / served.relative_to(out / "_sources" / "chapters")
        if source.exists():
            notebook = json.loads(source.read_text(encoding="utf-8"))
            served.write_text(json.dumps(notebook, ensure_ascii=False,
                                         separators=(",", ":")), encoding="utf-8")


def finish(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    _reader_notebooks(app, out)
    pages = {page: page.read_text(encoding="utf-8") for page in out.rglob("*.html")}
    static = out / "_static"
    if (static / "mathjax" / "tex-chtml.js").exists():
        _mathjax_prune(static / "mathjax")
        mathjax_config = getattr(app.config, "mathjax3_config", None)
        _bundled_components(static / "mathjax", mathjax_config)
        _tex_extensions(static / "mathjax", list(pages.values()), mathjax_config)
        _speech_maps(static / "mathjax", app.config.language)
    _locales(static, app.config.language)
    _truetype_fallbacks(static)
    for source_map in static.rglob("*.map"):
        source_map.unlink()
    font_awesome_gone = _font_awesome_script(static)
    _icon_rules(static, list(pages.values()))
    # the pages last: the classes they keep are read from the files left
    _pages(out, pages, font_awesome_gone)
    for figure in (out / "_images").glob("*.png"):
        _smaller_png(figure)


def setup(app):
    # after the other build-finished listeners (default priority 500): the theme writes
    # the final pygments.css and sphinx-mathjax-offline copies MathJax there
    app.connect("build-finished", finish, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
