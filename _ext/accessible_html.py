"""Sphinx extension: the markup that the theme and the extensions write, given the right
accessible names when the page is written (no script patches them after load).

A control's accessible name must contain its visible text, so that a voice-control user
can say what they see (WCAG 2.5.3, axe-core: label-content-name-mismatch); a list must
hold list items (axe-core: aria-required-children). In each page's body:
- myst-nb's folded cells write `<summary aria-label="Toggle hidden content">`, which
  shows "Show code cell source" (or "Hide ..."): without the label, the name is that
  line;
- docutils writes the bibliography as `<div role="list" class="citation-list">`, whose
  children are not list items: the citations are a plain sequence, so the role goes.
The theme's own buttons are written by templates in _templates/ (theme-switcher.html,
search-button-field.html, toggle-primary-sidebar.html); tests/test_site.py checks
the written pages.
"""

import re

FIXES = [
    (re.compile(r'<summary aria-label="Toggle hidden content">'), "<summary>"),
    (
        re.compile(r'<div role="list" class="citation-list">'),
        '<div class="citation-list">',
    ),
]


def fix_body(app, pagename, templatename, context, doctree):
    body = context.get("body")
    if body:
        for pattern, replacement in FIXES:
            body = pattern.sub(replacement, body)
        context["body"] = body


def setup(app):
    app.connect("html-page-context", fix_body)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
