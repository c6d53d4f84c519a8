"""What the browser tests run inside the page: accessibility checks and a screenshot comparison.

Both are JavaScript run by Chromium (the page itself has none): the checks read the DOM and the
computed styles the browser resolved, so they see the colours a reader sees in each scheme.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from chromium_cdp import Page

# WCAG 2.1: contrast of text (4.5:1, 3:1 when large) and of graphics (3:1); tables with a
# caption, column and row headers; a text alternative for every image and bar (a bar is a
# count drawn over its background: its text is the count); named links; headings
# that do not skip a level. Returns one line per problem (empty: nothing found).
A11Y = r"""
(() => {
  const problems = [];
  const rgb = s => (s.match(/[\d.]+/g) || []).map(Number);
  const hex = s => { s = s.trim();
    return s.startsWith('#') ? [1, 3, 5].map(i => parseInt(s.slice(i, i + 2), 16)) : rgb(s); };
  const lum = ([r, g, b]) => { const f = c => { c /= 255;
      return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const ratio = (a, b) => { const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05); };
  const background = el => { for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0)) return c; }
    return [255, 255, 255]; };
  const where = el => (el.closest('tr') && el.closest('tr').id) || el.tagName.toLowerCase();
  if (!document.documentElement.lang) problems.push('the page names no language');
  if (!document.title.trim()) problems.push('the page has no title');
  for (const t of document.querySelectorAll('table')) {
    const caption = t.querySelector('caption');
    if (!caption || !caption.textContent.trim()) problems.push('a table without a caption');
    if (!t.tHead) { problems.push('a table without column headers'); continue; }
    const width = t.tHead.rows[0].cells.length;
    for (const th of t.tHead.querySelectorAll('th'))
      if (th.scope !== 'col') problems.push(`column header "${th.textContent}" has no scope`);
    for (const body of t.tBodies) for (const tr of body.rows) {
      const first = tr.cells[0];
      if (first.tagName !== 'TH' || first.scope !== 'row')
        problems.push(`row ${where(tr)}: no row header`);
      if (tr.cells.length !== width) problems.push(`row ${where(tr)}: ${tr.cells.length} cells`);
    }
  }
  for (const img of document.querySelectorAll('img:not([alt])'))
    problems.push(`${where(img)}: an img without alt`);
  for (const svg of document.querySelectorAll('svg:not([aria-hidden=true])'))
    if (svg.getAttribute('role') !== 'img' || !(svg.getAttribute('aria-label') || '').trim())
      problems.push(`${where(svg)}: an svg without a text alternative`);
  for (const el of document.querySelectorAll('[role=img]'))
    if (!(el.getAttribute('aria-label') || '').trim())
      problems.push(`${where(el)}: an image without a text alternative`);
  for (const bar of document.querySelectorAll('[style*="--w"]')) {
    if (!bar.textContent.trim()) problems.push(`${where(bar)}: a bar without text`);
    const fill = hex(getComputedStyle(bar).getPropertyValue('--c'));
    const r = ratio(fill, background(bar.parentElement));
    if (r < 3) problems.push(`${where(bar)}: bar contrast ${r.toFixed(2)} < 3`);
  }
  for (const a of document.querySelectorAll('a'))
    if (!(a.textContent || a.getAttribute('aria-label') || '').trim())
      problems.push(`${where(a)}: a link without a name`);
  const seen = new Set();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!n.data.trim() || seen.has(el)) continue;
    seen.add(el);
    const style = getComputedStyle(el);
    const size = parseFloat(style.fontSize), bold = Number(style.fontWeight) >= 700;
    const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    const r = ratio(rgb(style.color), background(el));
    if (r < need) problems.push(
      `${where(el)}: "${n.data.trim().slice(0, 30)}" contrast ${r.toFixed(2)} < ${need}`);
  }
  let level = 0;
  for (const h of document.querySelectorAll('h1, h2, h3, h4, h5, h6')) {
    const l = Number(h.tagName[1]);
    if (l > level + 1) problems.push(`heading "${h.textContent}" skips a level`);
    level = l;
  }
  return problems;
})()
"""

# Both images are shrunk by `factor` (the browser averages each block of pixels), so a glyph
# drawn a fraction of a pixel aside, or antialiased differently, moves a block's colour a little;
# a pixel "differs" only when a channel moves more than `threshold` (of 255).
_COMPARE = r"""
(async (a, b, factor, threshold) => {
  const load = src => new Promise((ok, bad) => {
    const i = new Image(); i.onload = () => ok(i); i.onerror = () => bad('not a PNG'); i.src = src; });
  const [x, y] = await Promise.all([load(a), load(b)]);
  if (x.width !== y.width || x.height !== y.height)
    return {size: [[x.width, x.height], [y.width, y.height]], differ: -1, pixels: 0};
  const w = Math.ceil(x.width / factor), h = Math.ceil(x.height / factor);
  const pixels = img => { const c = document.createElement('canvas');
    c.width = w; c.height = h; const g = c.getContext('2d');
    g.imageSmoothingEnabled = true; g.imageSmoothingQuality = 'high';
    g.drawImage(img, 0, 0, w, h); return g.getImageData(0, 0, w, h).data; };
  const p = pixels(x), q = pixels(y);
  let differ = 0;
  for (let i = 0; i < p.length; i += 4) {
    const d = Math.max(Math.abs(p[i] - q[i]), Math.abs(p[i + 1] - q[i + 1]),
                       Math.abs(p[i + 2] - q[i + 2]));
    if (d > threshold) differ++;
  }
  return {size: null, differ, pixels: w * h};
})
"""


def accessibility_problems(page: Page) -> list[str]:
    found: list[str] = page.evaluate(A11Y)
    return found


def compare_png(page: Page, a: bytes, b: bytes, factor: int = 4, threshold: int = 48) -> Any:
    """{size: null | [[w, h], [w, h]], differ: pixels beyond threshold, pixels: all of them}."""

    def url(png: bytes) -> str:
        return "data:image/png;base64," + base64.b64encode(png).decode()

    call = f"({_COMPARE})({json.dumps(url(a))}, {json.dumps(url(b))}, {factor}, {threshold})"
    return page.evaluate(call)
