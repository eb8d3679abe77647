"""The site's post-build transforms (book/_ext/ftipbook_site.py) keep what readers see.

Each HTML transform keeps the rendered text (tags stripped) and, for highlighted code,
the colour of every visible character; the figure recompression keeps the picture; the
file pruning keeps what the pages and the math menu ask for.
"""
from __future__ import annotations

import html
import io
import json
import math
import re
import sys
from pathlib import Path

import pytest
from PIL import Image, ImageDraw
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book/_ext"))
pytest.importorskip("sphinx", reason="the site extensions need the book's environment (.venv), not the package")
import ftipbook_site as site  # noqa: E402
import ftipbook_verified  # noqa: E402

#: The structure of the built ``_static/pygments.css``: one rule per theme and class.
CSS = """
html[data-theme="light"] .highlight pre { line-height: 125%; }
html[data-theme="light"] .highlight .hll { background-color: #fae4c2 }
html[data-theme="light"] .highlight { background: #fefefe; color: #080808 }
html[data-theme="light"] .highlight .k { color: #6730C5 } /* Keyword */
html[data-theme="light"] .highlight .n { color: #080808 } /* Name */
html[data-theme="light"] .highlight .o { color: #00622F } /* Operator */
html[data-theme="light"] .highlight .p { color: #080808 } /* Punctuation */
html[data-theme="light"] .highlight .s2 { color: #00622F } /* Literal.String.Double */
html[data-theme="light"] .highlight .w { color: #080808 } /* Text.Whitespace */
html[data-theme="light"] .highlight .nb { color: #7F4707 } /* Name.Builtin */
html[data-theme="light"] .highlight .mi { color: #7F4707 } /* Literal.Number.Integer */
html[data-theme="light"] .highlight .ge { font-style: italic } /* Generic.Emph */
html[data-theme="light"] .highlight .nf { color: #080808 } /* Name.Function */
html[data-theme="dark"] .highlight { background: #2b2b2b; color: #F8F8F2 }
html[data-theme="dark"] .highlight .k { color: #DCC6E0 } /* Keyword */
html[data-theme="dark"] .highlight .n { color: #F8F8F2 } /* Name */
html[data-theme="dark"] .highlight .o { color: #ABE338 } /* Operator */
html[data-theme="dark"] .highlight .p { color: #F8F8F2 } /* Punctuation */
html[data-theme="dark"] .highlight .s2 { color: #ABE338 } /* Literal.String.Double */
html[data-theme="dark"] .highlight .w { color: #F8F8F2 } /* Text.Whitespace */
html[data-theme="dark"] .highlight .nb { color: #FFD900 } /* Name.Builtin */
html[data-theme="dark"] .highlight .mi { color: #FFD900 } /* Literal.Number.Integer */
html[data-theme="dark"] .highlight .ge { font-style: italic } /* Generic.Emph */
html[data-theme="dark"] .highlight .nf { color: #00E0E0 } /* Name.Function */
"""
CODE = '''def total(xs, start=0):
    """Sum with a start."""
    return sum(x * 2 for x in xs if x != 1) + start  # doubled

print(total([1, 2, 3]), "a" + "b")
'''
TAG = re.compile(r"<(/?)span(?: class=\"([\w-]+)\")?>|([^<]+)")


def _text(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def _shown_colours(code: str, colours: dict) -> list[tuple[str, tuple]]:
    """Each visible (non-space) character of highlighted code with its colours."""
    stack, shown = [], []
    for closing, token, text in TAG.findall(code):
        if text:
            colour = next((colours[t] for t in reversed(stack) if t in colours),
                          colours[None])
            shown += [(c, colour) for c in html.unescape(text) if not c.isspace()]
        elif closing:
            stack.pop()
        else:
            stack.append(token)
    return shown


def test_pygments_colours_are_read_from_the_stylesheet():
    colours = site._pygments_colours(CSS)
    assert colours[None] == ("#f8f8f2", "#080808")  # themes in name order: dark, light
    assert colours["n"] == colours["p"] == colours["w"] == colours[None]
    assert colours["o"] == colours["s2"] != colours[None]
    assert "ge" not in colours and "hll" not in colours  # styled other than by colour


def test_code_spans_keep_the_text_and_the_colour_of_every_character():
    colours = site._pygments_colours(CSS)
    code = highlight(CODE, PythonLexer(), HtmlFormatter(nowrap=True))
    lighter = site._code_spans(code, colours)
    assert _text(lighter) == _text(code) == CODE
    assert _shown_colours(lighter, colours) == _shown_colours(code, colours)
    assert len(lighter) < 0.7 * len(code)
    assert '<span class="n">' not in lighter and '<span class="p">' not in lighter
    assert '<span class="nf">total</span>' in lighter  # dark: not the text's colour
    assert site._code_spans(lighter, colours) == lighter


def test_code_spans_merge_same_colour_neighbours_only_across_whitespace():
    colours = site._pygments_colours(CSS)
    code = ('<span class="o">=</span> <span class="s2">"a"</span>'
            '<span class="o">+</span><span class="n">x</span><span class="o">-</span>\n'
            '<span class="hll"><span class="o">*</span></span>')
    merged = site._code_spans(code, colours)
    assert merged == ('<span class="o">= "a"+</span>x<span class="o">-</span>\n'
                      '<span class="hll"><span class="o">*</span></span>')
    assert _shown_colours(merged, colours) == _shown_colours(code, colours)


def test_lighter_code_touches_highlighted_blocks_only():
    colours = site._pygments_colours(CSS)
    signature = '<dt><span class="n"><span class="pre">arg</span></span></dt>'
    page = ('<p><span class="n">kept</span></p><div class="highlight"><pre>'
            '<span></span><span class="n">x</span> <span class="o">=</span> '
            f'<span class="mi">1</span>\n</pre></div>{signature}')
    lighter = site._lighter_code(page, colours)
    assert _text(lighter) == _text(page)
    assert lighter.startswith('<p><span class="n">kept</span></p>')
    assert '</span>x <span class="o">=</span> <span class="mi">1</span>' in lighter
    assert lighter.endswith(signature)
    assert site._lighter_code(page, {}) == page


def test_collapse_whitespace_keeps_the_rendered_text_and_preformatted_blocks():
    page = """<div class="a">
        <p>One  <em>two</em>   <strong>three</strong></p>
          <pre>  keep
     this  </pre>\t\t<textarea>  a\n  b</textarea>
    <script>
      const s = "  x  ";
    </script>  <style> p  {  } </style>
    <span>a</span> <span>b</span>
    </div>"""
    collapsed = site._collapse_whitespace(page)

    def blocks(markup: str) -> list[str]:
        return re.findall(r"<(pre|textarea|script|style)>.*?</\1>", markup, re.S)

    assert blocks(collapsed) == blocks(page)
    squeeze = re.compile(r"\s+")
    assert squeeze.sub(" ", _text(collapsed)) == squeeze.sub(" ", _text(page))
    assert "<span>a</span> <span>b</span>" in collapsed  # the one space still renders
    assert "</em> <strong>" in collapsed
    assert "One  <em>" in collapsed  # whitespace inside text is left as it is
    assert len(collapsed) < len(page)
    assert site._collapse_whitespace(collapsed) == collapsed


def _plot(size=(320, 200)) -> Image.Image:
    """A plot-like RGBA image: antialiased coloured lines on white, opaque."""
    image = Image.new("RGBA", size, "white")
    draw = ImageDraw.Draw(image)
    for k, colour in enumerate(["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"]):
        points = [(x, 100 + 60 * math.sin(x / (20 + 7 * k) + k))
                  for x in range(0, 320, 4)]
        draw.line(points, fill=colour, width=2)
    draw.text((10, 10), "loss vs step", fill="black")
    return image.resize((size[0] * 2, size[1] * 2), Image.LANCZOS)


def test_smaller_png_keeps_the_picture(tmp_path):
    path = tmp_path / "plot.png"
    plot = _plot()
    plot.save(path, dpi=(100, 100))
    before = path.stat().st_size
    site._smaller_png(path)
    with Image.open(path) as smaller:
        assert smaller.size == plot.size and round(smaller.info["dpi"][0]) == 100
        shown = smaller.convert("RGB")
    assert path.stat().st_size < before
    assert site._psnr(plot.convert("RGB"), shown) >= site.MIN_PSNR
    again = path.read_bytes()
    site._smaller_png(path)
    assert path.read_bytes() == again  # a second build leaves it alone


def test_smaller_png_keeps_transparent_pixels_exactly(tmp_path):
    path = tmp_path / "clear.png"
    plot = _plot()
    plot.putalpha(Image.linear_gradient("L").resize(plot.size))
    plot.save(path, compress_level=0)
    site._smaller_png(path)
    with Image.open(path) as smaller:
        assert smaller.mode == "RGBA" and smaller.tobytes() == plot.tobytes()


def test_speech_maps_keep_what_the_menu_offers(tmp_path):
    maps = tmp_path / "sre" / "mathmaps"
    maps.mkdir(parents=True)
    for locale in ("base", "en", "de", "fr", "nemeth"):
        (maps / f"{locale}.json").write_text("{}")
    bundle = tmp_path / "a11y" / "sre.js"
    bundle.parent.mkdir()
    bundle.write_text('x.LOCALES=new Map([["de","German"],["en","English"],'
                      '["fr","French"],["nemeth","Nemeth"]]),x.y=1')
    site._speech_maps(tmp_path, "en")
    assert sorted(p.stem for p in maps.iterdir()) == ["base", "en", "nemeth"]
    assert bundle.read_text() == ('x.LOCALES=new Map([["en","English"],'
                                  '["nemeth","Nemeth"]]),x.y=1')


def test_bundled_components_go_and_the_rest_stays(tmp_path):
    (tmp_path / "tex-chtml.js").write_text(
        'a.preLoad("loader","core","ui/menu","output/chtml/fonts/tex.js");'
        'b.preLoad("input/tex-base","[tex]/ams")')
    files = ["ui/menu.js", "ui/safe.js", "output/chtml/fonts/tex.js",
             "input/tex/extensions/ams.js", "input/tex/extensions/all-packages.js",
             "input/tex/extensions/physics.js"]
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    site._bundled_components(tmp_path, {"options": {}})
    left = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.js"))
    assert left == ["input/tex/extensions/physics.js", "tex-chtml.js", "ui/safe.js"]


def test_truetype_fallbacks(tmp_path):
    fonts = tmp_path / "vendor" / "webfonts"
    fonts.mkdir(parents=True)
    for name in ("a.woff2", "a.ttf", "b.ttf"):
        (fonts / name).write_bytes(b"")
    sheet = tmp_path / "styles" / "theme.css"
    sheet.parent.mkdir()
    sheet.write_text('@font-face{src:url(../vendor/webfonts/a.woff2) format("woff2"),'
                     'url(../vendor/webfonts/a.ttf) format("truetype")}'
                     '@font-face{src:url(../vendor/webfonts/b.ttf) format("truetype")}')
    site._truetype_fallbacks(tmp_path)
    assert sheet.read_text() == (
        '@font-face{src:url(../vendor/webfonts/a.woff2) format("woff2")}'
        '@font-face{src:url(../vendor/webfonts/b.ttf) format("truetype")}')
    assert sorted(p.name for p in fonts.iterdir()) == ["a.woff2", "b.ttf"]


def test_reader_notebooks_are_served_as_the_same_json(tmp_path):
    cell = {"cell_type": "markdown", "metadata": {}, "source": ["é $x$"]}
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    reader = tmp_path / "notebooks" / "part-1" / "a.ipynb"
    served = tmp_path / "out" / "_sources" / "chapters" / "part-1" / "a.ipynb"
    for path in (reader, served):
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(notebook, indent=1))

    class App:
        srcdir = str(tmp_path)

    site._reader_notebooks(App, tmp_path / "out")
    assert json.loads(served.read_text(encoding="utf-8")) == notebook
    assert served.stat().st_size < reader.stat().st_size


def test_png_candidates_are_not_bigger_than_the_original(tmp_path):
    """A PNG that is already small (one flat colour) is not rewritten larger."""
    path = tmp_path / "flat.png"
    buffer = io.BytesIO()
    Image.new("RGB", (64, 64), "white").save(buffer, "PNG", optimize=True)
    path.write_bytes(buffer.getvalue())
    site._smaller_png(path)
    assert path.stat().st_size <= len(buffer.getvalue())


#: A stylesheet and a script as the theme writes them: plain class selectors, a
#: substring match, a prefix match on the whole attribute and ``[class]`` presence.
CLASS_CSS = ("div.cell>.out, .a.b:hover{x:1}[class*=hl-]{x:2}li[class^=toc-l]{x:3}"
             "a:not([href]):not([class]){x:4}.esc\\:x{x:5}")
CLASS_JS = 'e.classList.add("shown");t.className="tab-"+n;q(".copy-btn")'
SELECTED = {"cell", "out", "a", "b", "hl-python", "shown", "tab-1", "copy-btn", "esc:x"}
CLASS_PAGE = """<!DOCTYPE html><html><head><style>.inline{x:1}</style>
<script>var s = '<p class="later">';</script></head><body>
<div class="cell docutils container"><p class="out gone">Text <em class="a b c">x</em>
</p></div>
<div class="highlight-python notranslate"><pre><span class="k">def</span> f</pre></div>
<ul><li class="toc-l1 current">one</li><li class="gone">two</li></ul>
<a class="gone" title="no class left">link</a> <a class="shown gone" href="#">b</a>
<span class="tab-1 copy-btn esc:x inline unused">tab</span><textarea class="gone">
<b class="gone"></b></textarea></body></html>"""


def _classes_of(markup: str) -> list[list[str]]:
    """The class lists of the tags outside scripts, styles and text areas."""
    markup = re.sub(r"<(script|style|textarea)\b.*?</\1>", "", markup, flags=re.S)
    return [value.split() for value in re.findall(r'\sclass="([^"]*)"', markup)]


def _used(css: str = CLASS_CSS, js: str = CLASS_JS, pages=(CLASS_PAGE,)):
    used = site.UsedClasses()
    used.add_css(css)
    used.add_js(js)
    for markup in pages:
        for kind, code in site.INLINE_CODE.findall(markup):
            (used.add_css if kind == "style" else used.add_js)(code)
    return used


def test_unused_classes_keep_every_selected_class_and_the_text():
    out = site._unused_classes(CLASS_PAGE, _used())
    assert _text(out) == _text(CLASS_PAGE)
    before = [name for names in _classes_of(CLASS_PAGE) for name in names]
    after = [name for names in _classes_of(out) for name in names]
    assert [n for n in before if n in SELECTED | site.CLASSES_KEPT] == [
        n for n in after if n in SELECTED | site.CLASSES_KEPT]
    assert {"gone", "c", "unused", "docutils", "container"}.isdisjoint(after)
    assert "inline" in after  # selected by the page's own <style>
    assert "k" not in after  # no stylesheet colours it here


def test_unused_classes_leave_scripts_whole_and_presence_as_it_was():
    out = site._unused_classes(CLASS_PAGE, _used())
    assert "<script>var s = '<p class=\"later\">';</script>" in out
    assert '<textarea class="gone">\n<b class="gone"></b></textarea>' in out
    assert '<li class="toc-l1 current">' in out  # [class^=toc-l] reads the whole value
    assert '<li>two</li>' in out  # no class left: the attribute goes
    assert '<a class="" title="no class left">' in out  # a:not([class]) must not match
    assert '<a class="shown" href="#">' in out


def test_used_classes_read_prefixes_from_scripts_only_as_words():
    used = _used()
    assert used.used("tab-anything") and used.used("shown") and used.used("hl-x")
    assert used.used("later")  # a word of the page's inline script
    assert not used.used("classList-x") and not used.used("nothing")
    assert site._unused_classes('<p class="a">x</p>', used) == '<p class="a">x</p>'


def test_compact_markup_drops_comments_and_the_space_between_attributes():
    page = ('<!-- a note -->\n<a class="x"\n     href="y.html"   title="two  spaces"\n'
            '   >link</a><pre>  <!-- shown -->  </pre>'
            '<script>/* <!-- */ a  =  1</script>'
            "<img src='a b.png'  alt=\"x > y\"  />")
    out = site._compact_markup(page)
    assert out == ('\n<a class="x" href="y.html" title="two  spaces" >link</a>'
                   "<pre>  <!-- shown -->  </pre>"
                   "<script>/* <!-- */ a  =  1</script>"
                   "<img src='a b.png' alt=\"x > y\" />")


def test_font_awesome_script_goes_only_when_the_stylesheet_draws_the_icons(tmp_path):
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    for name in ("fontawesome.js", "fontawesome.js.LICENSE.txt", "bootstrap.js"):
        (scripts / name).write_text("")
    sheet = tmp_path / "styles" / "theme.css"
    sheet.parent.mkdir()
    sheet.write_text(".fa-x:before{content:\"\\f00\"}")
    assert not site._font_awesome_script(tmp_path)
    assert len(list(scripts.iterdir())) == 3
    sheet.write_text('@font-face{font-family:"Font Awesome 6 Free";'
                     'src:url(../webfonts/fa-solid-900.woff2) format("woff2")}')
    assert site._font_awesome_script(tmp_path)
    assert [p.name for p in scripts.iterdir()] == ["bootstrap.js"]
    page = ('<head><script defer src="../_static/scripts/fontawesome.js?digest=1">'
            '</script>\n<script src="a.js"></script></head>')
    kept = '<head>\n<script src="a.js"></script></head>'
    assert site.FONT_AWESOME_SCRIPT.sub("", page) == kept


def test_icon_rules_keep_the_icons_a_page_or_script_names(tmp_path):
    sheet = tmp_path / "styles" / "theme.css"
    sheet.parent.mkdir()
    sheet.write_text('.fa-lg{x:1}.fa-bars:before,.fa-navicon:before{content:"\\f0c9"}'
                     '.fa-php:before{content:"\\f457"}.x .fa-php:before{content:"y"}'
                     '@media print{.fa-sun::before{content:"\\f185"}}')
    (tmp_path / "theme.js").write_text('i.className = "fa-solid fa-sun"')
    site._icon_rules(tmp_path, ['<i class="fa-solid fa-bars"></i>'])
    assert sheet.read_text() == ('.fa-lg{x:1}.fa-bars:before{content:"\\f0c9"}'
                                 '.x .fa-php:before{content:"y"}'
                                 '@media print{.fa-sun::before{content:"\\f185"}}')


def test_tex_extensions_keep_what_the_formulas_load(tmp_path):
    (tmp_path / "tex-chtml.js").write_text(
        'a={action:["toggle"],amscd:[[],["CD"]],cancel:["cancel","bcancel"],'
        'mhchem:["ce","pu"]},b={"[tex]/cancel":["input/tex-base","[tex]/enclose"],'
        '"[tex]/mhchem":["input/tex-base","[tex]/ams"]}')
    folder = tmp_path / "input" / "tex" / "extensions"
    folder.mkdir(parents=True)
    for name in ("action", "amscd", "cancel", "enclose", "mhchem", "physics",
                 "mathtools", "bussproofs"):
        (folder / f"{name}.js").write_text("")
    pages = [r'<span class="math">\(\bcancel{x}\)</span>',
             r'<div class="math">\[\begin{CD} A @>>> B \end{CD}\require{physics}\]',
             "</div>"]
    site._tex_extensions(tmp_path, pages, {"loader": {"load": ["[tex]/mathtools"]}})
    assert sorted(p.stem for p in folder.iterdir()) == [
        "amscd", "cancel", "enclose", "mathtools", "physics"]


def test_verification_line_names_the_recorded_run_or_says_there_was_none():
    record = {"python": "3.11.7", "torch": "2.13.0", "numpy": "2.4.6", "cpu": "AMD EPYC", "capability": "AVX512",
              "other_kernels": "ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE", "date": "2026-12-07",
              "commit": "abc1234"}
    line = ftipbook_verified.verification_text(record)
    for value in record.values():
        assert value in line
    assert "Not verified" in ftipbook_verified.verification_text(None)
    assert "commit" not in ftipbook_verified.verification_text({**record, "commit": None})
