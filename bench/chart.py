"""The bar chart of ``make bench``: speed-up over numpy.einsum(optimize=True), log scale, and
(issue 15) each engine's single-threaded time as a multiple of the measured floor.

Uses matplotlib when it is installed (``make bench`` installs it, the
``bench`` extra); otherwise draws the speed-up bars itself and writes the PNG
with zlib, without text (the numbers are in ``results.json`` and the tables)."""

from __future__ import annotations

import math
import struct
import zlib
from pathlib import Path
from typing import Any

import numpy as np

COLORS = {"native": (31, 119, 180), "native out=": (23, 190, 207), "native pad 8": (174, 199, 232),
          "opt_einsum": (255, 127, 14), "hand numpy": (44, 160, 44), "hand C": (214, 39, 40),
          "numpy.einsum": (127, 127, 127)}


def bar_chart(rows: list[Any], path: Path, single: list[Any] | None = None) -> None:
    """Speed-ups of ``rows`` (the all-cores run) and, when ``single`` (the single-threaded run's rows)
    carry a floor, a second panel of their times as multiples of it."""
    from . import floor_multiples, speedups

    names, series = speedups(rows)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        write_png(path, raster(names, series))
        return
    panels = [(names, series, "speed-up over numpy.einsum(optimize=True), all cores", 1.0)]
    if single and any("x floor" in r.extra for r in single):
        fnames, fseries = floor_multiples(single)
        panels.append((fnames, fseries, "time / measured floor, single thread (target: 2x)", 2.0))
    fig, axes = plt.subplots(len(panels), 1, figsize=(11, 5 * len(panels)), squeeze=False)
    for ax, (pnames, pseries, label, line) in zip(axes[:, 0], panels, strict=True):
        width = 0.8 / len(pseries)
        x = np.arange(len(pnames))
        for i, (m, vals) in enumerate(pseries.items()):
            ax.bar(x + (i - (len(pseries) - 1) / 2) * width, np.nan_to_num(vals, nan=0.0), width, label=m,
                   color=[c / 255 for c in COLORS[m]])
        ax.axhline(1.0, color="black", linewidth=0.8)
        if line != 1.0:
            ax.axhline(line, color="black", linewidth=0.8, linestyle="--")
        ax.set_yscale("log")
        ax.set_ylabel(label)
        ax.set_xticks(x, pnames, rotation=15, ha="right")
        ax.legend(fontsize="small")
    axes[0, 0].set_title("core-teil native engine (median of runs, this machine)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def raster(names: list[str], series: dict[str, list[float]], h: int = 400, w: int = 900) -> np.ndarray:
    """Bars on a log scale (0.1x .. 100x), a black line at 1x."""
    img = np.full((h, w, 3), 255, dtype=np.uint8)
    lo, hi = math.log10(0.1), math.log10(100.0)

    def y(v: float) -> int:
        t = (math.log10(max(v, 0.1)) - lo) / (hi - lo)
        return int(h - 20 - t * (h - 40))

    group = (w - 40) / max(len(names), 1)
    bw = group * 0.8 / max(len(series), 1)
    for g in range(len(names)):
        for i, (m, vals) in enumerate(series.items()):
            if not math.isfinite(vals[g]) or vals[g] <= 0:  # a kernel without this column
                continue
            x0 = int(20 + g * group + group * 0.1 + i * bw)
            top, base = sorted((y(vals[g]), y(1.0)))
            img[top:base + 1, x0:int(x0 + bw) - 1] = COLORS[m]
    img[y(1.0), 10:w - 10] = 0
    return img


def write_png(path: Path, img: np.ndarray) -> None:
    h, w, _ = img.shape
    raw = b"".join(b"\x00" + img[r].tobytes() for r in range(h))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))
