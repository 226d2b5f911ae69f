"""Charts as inline SVG drawn here from the report's numbers: no charting library in the page, nothing to fetch,
and the same picture with scripts off. Colours come from CSS classes (`series-0` ...) so that light and dark
themes each pick readable ones; heatmap cells carry their own colour with a text colour that contrasts."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

WIDTH = 640
LABEL_W = 150
BAR_H = 13
GAP = 8
SERIES = 8


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def bar_chart(title: str, groups: Sequence[str], series: Sequence[str],
              values: dict[tuple[str, str], float | None]) -> str:
    """Horizontal grouped bars: one group per row label, one bar per series; values on a 0..max scale."""
    numbers = [v for v in values.values() if v is not None and math.isfinite(v)]
    top = max([1.0, *numbers]) if numbers and min(numbers) >= 0 else max([abs(v) for v in numbers] or [1.0])
    low = min([0.0, *numbers]) if numbers else 0.0
    span = (top - low) or 1.0
    plot_w = WIDTH - LABEL_W - 60
    legend_h = 22 if len(series) > 1 else 0
    group_h = len(series) * BAR_H + GAP
    height = legend_h + len(groups) * group_h + 24
    zero_x = LABEL_W + plot_w * (0 - low) / span
    parts = [f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{escape(title)}" '
             f'xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>']
    if len(series) > 1:
        x = LABEL_W
        for k, name in enumerate(series):
            parts.append(f'<rect class="series-{k % SERIES}" x="{x}" y="4" width="10" height="10"/>'
                         f'<text x="{x + 14}" y="13" class="legend">{escape(_short(name, 28))}</text>')
            x += 24 + 7 * min(len(name), 28)
    y = legend_h
    for group in groups:
        parts.append(f'<text x="{LABEL_W - 6}" y="{y + group_h / 2}" class="label" text-anchor="end" '
                     f'dominant-baseline="middle">{escape(_short(group, 22))}</text>')
        for k, name in enumerate(series):
            value = values.get((group, name))
            by = y + k * BAR_H
            if value is not None and math.isfinite(value):
                x0 = LABEL_W + plot_w * (min(value, 0) - low) / span
                w = max(plot_w * abs(value) / span, 0.5)
                parts.append(f'<rect class="series-{k % SERIES}" x="{x0:.1f}" y="{by + 1}" width="{w:.1f}" '
                             f'height="{BAR_H - 2}"><title>{escape(group)} · {escape(name)}: {_fmt(value)}</title>'
                             f'</rect><text x="{x0 + w + 4:.1f}" y="{by + BAR_H - 3}" class="value">{_fmt(value)}'
                             '</text>')
            else:
                parts.append(f'<text x="{zero_x + 4:.1f}" y="{by + BAR_H - 3}" class="value">–</text>')
        y += group_h
    parts.append(f'<line x1="{zero_x:.1f}" x2="{zero_x:.1f}" y1="{legend_h}" y2="{y}" class="axis"/>')
    for tick in _ticks(low, top):
        tx = LABEL_W + plot_w * (tick - low) / span
        parts.append(f'<text x="{tx:.1f}" y="{y + 14}" class="tick" text-anchor="middle">{tick:g}</text>')
    parts.append("</svg>")
    return "".join(parts)


def heatmap(title: str, rows: Sequence[str], cols: Sequence[str], matrix: Sequence[Sequence[float | None]],
            best: dict[str, str] | None = None) -> str:
    """A -1..1 diverging heatmap (blue negative, red positive), each cell labelled; `best[col] = row` is boxed."""
    cell_w, cell_h = 76, 26
    label_w = min(230, 12 + 7 * max((len(r) for r in rows), default=4))
    head_h = 18 + 6 * min(max((len(c) for c in cols), default=4), 24)
    width, height = label_w + cell_w * len(cols) + 8, head_h + cell_h * len(rows) + 8
    parts = [f'<svg class="chart heatmap" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}" '
             f'xmlns="http://www.w3.org/2000/svg" style="max-width:{width}px"><title>{escape(title)}</title>']
    for j, col in enumerate(cols):
        x = label_w + cell_w * j + cell_w / 2
        parts.append(f'<text class="label" transform="translate({x:.1f},{head_h - 6}) rotate(-35)">'
                     f'{escape(_short(col, 24))}</text>')
    for i, row in enumerate(rows):
        y = head_h + cell_h * i
        parts.append(f'<text x="{label_w - 6}" y="{y + cell_h / 2}" class="label" text-anchor="end" '
                     f'dominant-baseline="middle">{escape(_short(row, 32))}</text>')
        for j, col in enumerate(cols):
            value = matrix[i][j]
            fill, ink = _diverging(value)
            x = label_w + cell_w * j
            boxed = best is not None and best.get(col) == row
            parts.append(f'<rect x="{x}" y="{y}" width="{cell_w - 2}" height="{cell_h - 2}" fill="{fill}"'
                         f'{" class=best" if boxed else ""}><title>{escape(row)} × {escape(col)}: '
                         f'{_fmt(value)}</title></rect><text x="{x + cell_w / 2 - 1}" y="{y + cell_h / 2}" '
                         f'fill="{ink}" text-anchor="middle" dominant-baseline="middle" class="cell'
                         f'{" strong" if boxed else ""}">{"–" if value is None else f"{value:+.2f}"}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _diverging(value: float | None) -> tuple[str, str]:
    """RdBu-like colour for -1..1 and a text colour that stays readable on it."""
    if value is None or not math.isfinite(value):
        return "#9ca3af", "#111827"
    v = max(-1.0, min(1.0, value))
    white, red, blue = (247, 247, 247), (178, 24, 43), (33, 102, 172)
    end = red if v > 0 else blue
    rgb = [round(w + (e - w) * abs(v)) for w, e in zip(white, end, strict=True)]
    luminance = (0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]) / 255
    return "#{:02x}{:02x}{:02x}".format(*rgb), "#111827" if luminance > 0.55 else "#ffffff"


def _ticks(low: float, high: float) -> list[float]:
    span = high - low
    step = 10 ** math.floor(math.log10(span)) if span > 0 else 1
    if span / step < 3:
        step /= 5 if span / step < 1.5 else 2
    first = math.ceil(low / step) * step
    return [round(first + k * step, 10) for k in range(int((high - first) / step + 1e-9) + 1)]


def _short(text: str, limit: int) -> str:
    """A label cut to `limit` characters in the middle, keeping both ends: names of one family differ at the end
    (`tool-selection accuracy @4 tools`, `... @16 tools`), so cutting the end would draw them alike."""
    if len(text) <= limit:
        return text
    tail = (limit - 1) // 2
    return text[: limit - 1 - tail] + "…" + text[len(text) - tail:]
