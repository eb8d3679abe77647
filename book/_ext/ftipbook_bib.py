"""Author-year labels for the bibliography page, so that an entry is listed under the same
"Surname et al., year" that the chapters' author-year citations print."""
from pybtex.plugin import register_plugin
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.labels import BaseLabelStyle


def _surname(person) -> str:
    return " ".join(person.last_names).replace("{", "").replace("}", "")


def author_year_label(entry) -> str:
    """``"A, 2020"``, ``"A and B, 2020"`` or ``"A et al., 2020"`` from the entry's authors (or editors)."""
    persons = entry.persons.get("author") or entry.persons.get("editor") or []
    names = [_surname(p) for p in persons]
    if not names:
        who = entry.fields.get("title", entry.key)
    elif len(names) == 1:
        who = names[0]
    elif len(names) == 2:  # "Mozer and others" too: the form the author-year citations print
        who = f"{names[0]} and {names[1]}"
    else:
        who = f"{names[0]} et al."
    return f"{who}, {entry.fields.get('year', 'n.d.')}"


class AuthorYearLabels(BaseLabelStyle):
    def format_labels(self, sorted_entries):
        for entry in sorted_entries:
            yield author_year_label(entry)


class AuthorYearStyle(PlainStyle):
    default_label_style = "ftipbook_author_year"


def setup(app):
    register_plugin("pybtex.style.labels", "ftipbook_author_year", AuthorYearLabels)
    register_plugin("pybtex.style.formatting", "ftipbook_author_year", AuthorYearStyle)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
