"""Sphinx extension: copy MathJax's files into the site as mathjax/, from wherever
Python has them.

MathJax 3.2.2 comes from the pinned django-static-mathjax package (requirements.txt).
Its files are added to `html_extra_path` (copied into the site as they are, not loaded
into every page as a static path's scripts would be), found through the installed
package, so the build works from any environment and Python version. _config.yml's
`mathjax_path` points the pages at the site's own mathjax/es5/tex-mml-chtml.js: an
offline reader still sees typeset math.
"""

from pathlib import Path


def add_mathjax_files(app, config):
    import mathjax

    static = Path(mathjax.__file__).parent / "static"
    if not (static / "mathjax" / "es5" / "tex-mml-chtml.js").exists():
        raise RuntimeError(f"MathJax's files are missing under {static}")
    config.html_extra_path = [*config.html_extra_path, str(static)]


def setup(app):
    app.connect("config-inited", add_mathjax_files)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
