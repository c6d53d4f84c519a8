"""The dashboard's stylesheet, inline in every page (no network, no file beside it).

Colours are a declared table per scheme so that the contrast test can read them: every text
colour reaches 4.5:1 on its background (WCAG AA) and every bar fill 3:1 (non-text contrast), in
both schemes. Print uses the light scheme and keeps the bars' colours.
"""

from __future__ import annotations

# name -> (light, dark)
COLOURS: dict[str, tuple[str, str]] = {
    "bg": ("#ffffff", "#0d1117"),
    "fg": ("#1f2328", "#e6edf3"),
    "muted": ("#57606a", "#9ba4ae"),
    "head": ("#f3f5f7", "#161b22"),
    "rule": ("#d0d7de", "#3d444d"),
    "link": ("#0550ae", "#6cb6ff"),
    "ok": ("#1a7f37", "#3fb950"),
    "short": ("#b4262e", "#ff7b72"),
    "track": ("#e6e9ec", "#262c34"),
}


def _vars(scheme: int) -> str:
    return ";".join(f"--{name}:{pair[scheme]}" for name, pair in COLOURS.items())


CSS = (
    f":root{{{_vars(0)};color-scheme:light dark}}"
    f"@media (prefers-color-scheme:dark){{:root{{{_vars(1)}}}}}"
    f"@media print{{:root{{{_vars(0)}}}"
    "*{print-color-adjust:exact;-webkit-print-color-adjust:exact}"
    "tr{break-inside:avoid}section{break-before:auto}body{margin:0}}"
    "body{margin:1.5rem;background:var(--bg);color:var(--fg);"
    "font:14px/1.4 system-ui,-apple-system,'Segoe UI','DejaVu Sans',sans-serif}"
    "h1{font-size:1.4rem;margin:0 0 .25rem}h2{font-size:1.1rem;margin:1.5rem 0 .5rem}"
    ".sum,.caveat{margin:.25rem 0}.caveat{color:var(--short);font-weight:600}"
    "a{color:var(--link)}"
    "table{border-collapse:collapse;width:100%}"
    "thead th:first-child{width:14rem}thead th:last-child{width:6rem}"
    "caption{text-align:left;color:var(--muted);padding-bottom:.25rem}"
    "th,td{border-bottom:1px solid var(--rule);padding:.3rem .45rem;text-align:left;"
    "vertical-align:top}"
    "thead th{background:var(--head);font-weight:600;font-size:.8rem}"
    "tbody th{font-weight:400}tbody th>a{font-weight:700}"
    ".t{display:block;color:var(--fg)}"
    "td b{display:block;font-weight:400;font-variant-numeric:tabular-nums;white-space:nowrap}"
    "td.none b{color:var(--muted)}td.short b{color:var(--short);font-weight:600}"
    "td.ok b{color:var(--ok)}"
    ".owes b{font-size:1.05rem}.owes.unknown b{color:var(--muted)}"
    "td b[style]{min-width:4rem;padding-top:.75rem;background:linear-gradient(to right,var(--c) var(--w),"
    "var(--track) var(--w)) 0 .2rem/4rem .45rem no-repeat}"
    "td.ok{--c:var(--ok)}td.short{--c:var(--short)}"
    "td>b~a,td>small~a{font-size:.75rem;margin-right:.3rem}"
    "small{display:block;color:var(--muted);font-size:.75rem}"
    ".fail{margin:.25rem 0;padding-left:1rem;color:var(--short)}"
    ".fail code{color:var(--fg)}"
    "tr.broken th{color:var(--short)}"
)
