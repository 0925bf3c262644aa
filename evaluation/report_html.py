"""The report as one self-contained HTML file: the markdown the report writes, rendered, images inlined.

A small renderer for exactly the markdown subset the report emits (headings, pipe tables, bullet lists,
images, paragraphs, **bold**, *italic*, `code`), so no markdown package is needed; PNGs become data: URIs
so the file can be mailed or attached on its own.
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

CSS = """body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}table{border-collapse:collapse;margin:0.8em 0;font-size:0.9em}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:left}th{background:#f2f2f2}
img{max-width:100%;display:block;margin:0.5em 0}figure{margin:1.2em 0}figcaption{font-size:0.9em;color:#444}
code{background:#f4f4f4;padding:0 3px}"""


def _inline(text: str) -> str:
    t = html.escape(text, quote=False)
    t = re.sub(r"`([^`]+)`", r"<code>\1</code>", t)
    t = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", t)
    t = re.sub(r"(?<![\w*])\*([^*]+)\*(?![\w*])", r"<em>\1</em>", t)
    t = re.sub(r"(?<![\w])_([^_]+)_(?![\w])", r"<em>\1</em>", t)
    return t


def _image(alt: str, src: str, base: Path) -> str:
    path = base / src
    if path.is_file():
        data = base64.b64encode(path.read_bytes()).decode()
        src_attr = f"data:image/png;base64,{data}"
    else:
        src_attr = html.escape(src)
    return f'<img alt="{html.escape(alt)}" src="{src_attr}">'


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def render(markdown: str, base: Path) -> str:
    """HTML body for the report's markdown; images are looked up relative to `base` and inlined."""
    out: list[str] = []
    lines = markdown.split("\n")
    i = 0
    para: list[str] = []

    def flush():
        if para:
            out.append("<p>" + _inline(" ".join(para)) + "</p>")
            para.clear()

    while i < len(lines):
        line = lines[i]
        m_img = re.fullmatch(r"!\[([^\]]*)\]\(([^)]+)\)", line.strip())
        if not line.strip():
            flush()
        elif m := re.match(r"(#{1,6}) (.*)", line):
            flush()
            n = len(m.group(1))
            out.append(f"<h{n}>{_inline(m.group(2))}</h{n}>")
        elif m_img:
            flush()
            caption = ""
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            if j < len(lines) and lines[j].startswith("*Figure"):
                caption, i = lines[j], j
            out.append("<figure>" + _image(m_img.group(1), m_img.group(2), base)
                       + (f"<figcaption>{_inline(caption)}</figcaption>" if caption else "") + "</figure>")
        elif line.startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(lines[i])
                i += 1
            head, body = _cells(rows[0]), [r for r in rows[1:] if not re.fullmatch(r"\|(-+\|)+", r.strip())]
            out.append("<table><thead><tr>" + "".join(f"<th>{_inline(c)}</th>" for c in head) + "</tr></thead>"
                       "<tbody>" + "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in _cells(r))
                                           + "</tr>" for r in body) + "</tbody></table>")
            continue
        elif line.startswith("- "):
            flush()
            items = []
            while i < len(lines) and lines[i].startswith("- "):
                items.append(lines[i][2:])
                i += 1
            out.append("<ul>" + "".join(f"<li>{_inline(t)}</li>" for t in items) + "</ul>")
            continue
        else:
            para.append(line)
        i += 1
    flush()
    return "\n".join(out)


def write_html(markdown: str, base: Path, path: Path) -> Path:
    title = markdown.split("\n", 1)[0].lstrip("# ").strip()
    doc = (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
           f"<link rel=\"icon\" href=\"data:,\"><style>{CSS}</style></head><body>\n{render(markdown, Path(base))}\n"
           "</body></html>\n")
    Path(path).write_text(doc)
    return Path(path)
