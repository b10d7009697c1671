"""The HTML pieces report.html and compare.html share: the page, its
style, tables, figures. Every value that reaches the page is escaped
here, so callers pass plain text."""

import base64
import html

from simulation.plots import fmt

CSS = """
body { font-family: sans-serif; color: #222; line-height: 1.4;
       max-width: 62em; margin: 2em auto; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.8em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.7em; text-align: left; }
th { background: #f2f2f2; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1em 0 2em; }
img { max-width: 100%; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; }
.verdict td { vertical-align: top; }
.better-a, .better-b { font-weight: bold; }
.bottom-line { font-size: 1.1em; padding: 0.6em 0.9em;
               background: #f6f6f0; border-left: 4px solid #bcbd22; }
summary { cursor: pointer; font-weight: bold; margin: 0.5em 0; }
"""

_NUMERIC = ' class="n"'


def esc(value):
    """A value as escaped text, numbers formatted for people."""
    return html.escape(fmt(value) if not isinstance(value, str) else value)


def table(headers, rows, text_columns=(0,)):
    """An HTML table; every cell escaped, all but text_columns numbers.

    Numbers are right-aligned so that their digits line up.
    """
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = "".join(
            f"<td{'' if j in text_columns else _NUMERIC}>{esc(cell)}</td>"
            for j, cell in enumerate(row))
        body.append(f"<tr>{cells}</tr>")
    return (f"<table><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>")


def image(png, alt, caption):
    data = base64.b64encode(png).decode("ascii")
    return (f'<figure><img alt="{html.escape(alt)}" '
            f'src="data:image/png;base64,{data}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>")


def figure(div, caption):
    """A plotly div (already HTML) with its caption."""
    return (f"<figure>{div}<figcaption>{html.escape(caption)}"
            "</figcaption></figure>")


def page(title, parts):
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n'
            f'<meta charset="utf-8">\n<title>{html.escape(title)}</title>\n'
            f"<style>{CSS}</style>\n</head>\n<body>\n"
            f"<h1>{html.escape(title)}</h1>\n"
            + "\n".join(parts) + "\n</body>\n</html>\n")
