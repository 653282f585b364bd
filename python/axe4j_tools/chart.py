"""Grouped bar charts as PNG files, with no plotting library: the benchmarks write their pictures through this.

A chart is drawn into an RGB raster (bars, axis, value labels, legend) and written as an 8-bit truecolour PNG
(zlib-compressed scanlines, filter 0). Text uses a built-in 5x7 pixel font, scaled 2x; characters outside it are
refused with the list of those it has, so a label never silently disappears.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

# 5x7 glyphs: seven rows of five pixels each; '#' is ink.
_GLYPHS = {
    '0': '.###. #...# #..## #.#.# ##..# #...# .###.',
    '1': '..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.',
    '2': '.###. #...# ....# ...#. ..#.. .#... #####',
    '3': '##### ...#. ..#.. ...#. ....# #...# .###.',
    '4': '...#. ..##. .#.#. #..#. ##### ...#. ...#.',
    '5': '##### #.... ####. ....# ....# #...# .###.',
    '6': '..##. .#... #.... ####. #...# #...# .###.',
    '7': '##### ....# ...#. ..#.. .#... .#... .#...',
    '8': '.###. #...# #...# .###. #...# #...# .###.',
    '9': '.###. #...# #...# .#### ....# ...#. .##..',
    'x': '..... ..... #...# .#.#. ..#.. .#.#. #...#',
    '.': '..... ..... ..... ..... ..... .##.. .##..',
    '%': '##... ##..# ...#. ..#.. .#... #..## ...##',
    '/': '..... ....# ...#. ..#.. .#... #.... .....',
    '-': '..... ..... ..... .###. ..... ..... .....',
    ' ': '..... ..... ..... ..... ..... ..... .....',
    ':': '..... .##.. .##.. ..... .##.. .##.. .....',
    'a': '..... ..... .###. ....# .#### #...# .####',
    'c': '..... ..... .###. #.... #.... #...# .###.',
    'e': '..... ..... .###. #...# ##### #.... .###.',
    'i': '..#.. ..... .##.. ..#.. ..#.. ..#.. .###.',
    'j': '...#. ..... ..##. ...#. ...#. #..#. .##..',
    'm': '..... ..... ##.#. #.#.# #.#.# #...# #...#',
    'n': '..... ..... #.##. ##..# #...# #...# #...#',
    'o': '..... ..... .###. #...# #...# #...# .###.',
    'r': '..... ..... #.##. ##..# #.... #.... #....',
    's': '..... ..... .#### #.... .###. ....# ####.',
    't': '.#... .#... ###.. .#... .#... .#..# ..##.',
    'u': '..... ..... #...# #...# #...# #..## .##.#',
    'A': '.###. #...# #...# ##### #...# #...# #...#',
    'B': '####. #...# #...# ####. #...# #...# ####.',
    'E': '##### #.... #.... ####. #.... #.... #####',
    'F': '##### #.... #.... ####. #.... #.... #....',
    'G': '.###. #...# #.... #.### #...# #...# .####',
    'L': '#.... #.... #.... #.... #.... #.... #####',
    'M': '#...# ##.## #.#.# #.#.# #...# #...# #...#',
    'N': '#...# ##..# #.#.# #..## #...# #...# #...#',
    'O': '.###. #...# #...# #...# #...# #...# .###.',
    'P': '####. #...# #...# ####. #.... #.... #....',
    'S': '.#### #.... #.... .###. ....# ....# ####.',
    'T': '##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..',
    'b': '#.... #.... #.##. ##..# #...# #...# ####.',
    'd': '....# ....# .##.# #..## #...# #...# .####',
    'f': '..##. .#..# .#... ###.. .#... .#... .#...',
    'g': '..... .#### #...# #...# .#### ....# .###.',
    'h': '#.... #.... #.##. ##..# #...# #...# #...#',
    'k': '#.... #.... #..#. #.#.. ##... #.#.. #..#.',
    'l': '.##.. ..#.. ..#.. ..#.. ..#.. ..#.. .###.',
    'p': '..... ..... ####. #...# ####. #.... #....',
    'q': '..... ..... .##.# #..## .#### ....# ....#',
    'v': '..... ..... #...# #...# #...# .#.#. ..#..',
    'w': '..... ..... #...# #...# #.#.# #.#.# .#.#.',
    'y': '..... ..... #...# #...# .#### ....# .###.',
    'z': '..... ..... ##### ...#. ..#.. .#... #####',
    'C': '.###. #...# #.... #.... #.... #...# .###.',
    'D': '###.. #..#. #...# #...# #...# #..#. ###..',
    'H': '#...# #...# #...# ##### #...# #...# #...#',
    'I': '.###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.',
    'K': '#...# #..#. #.#.. ##... #.#.. #..#. #...#',
    'R': '####. #...# #...# ####. #.#.. #..#. #...#',
    'U': '#...# #...# #...# #...# #...# #...# .###.',
    'V': '#...# #...# #...# #...# #...# .#.#. ..#..',
    'W': '#...# #...# #...# #.#.# #.#.# #.#.# .#.#.',
    'X': '#...# #...# .#.#. ..#.. .#.#. #...# #...#',
    'Y': '#...# #...# .#.#. ..#.. ..#.. ..#.. ..#..',
    '(': '...#. ..#.. .#... .#... .#... ..#.. ...#.',
    ')': '.#... ..#.. ...#. ...#. ...#. ..#.. .#...',
    '=': '..... ..... ##### ..... ##### ..... .....',
    ',': '..... ..... ..... ..... .##.. ..#.. .#...',
}
SCALE = 2


def _glyph(ch: str) -> str:
    g = _GLYPHS.get(ch)
    if g is None:
        raise ValueError(f"chart text {ch!r} has no glyph; the font has {''.join(sorted(_GLYPHS))!r}")
    return g.replace(" ", "")


class Raster:
    def __init__(self, width: int, height: int, background=(255, 255, 255)):
        self.width, self.height = width, height
        self.pixels = bytearray(bytes(background) * (width * height))

    def rect(self, x0: int, y0: int, x1: int, y1: int, colour) -> None:
        x0, x1 = max(0, min(x0, x1)), min(self.width, max(x0, x1))
        y0, y1 = max(0, min(y0, y1)), min(self.height, max(y0, y1))
        row = bytes(colour) * (x1 - x0)
        for y in range(y0, y1):
            start = (y * self.width + x0) * 3
            self.pixels[start:start + len(row)] = row

    def text(self, x: int, y: int, text: str, colour=(0, 0, 0)) -> int:
        """Draws ``text`` with its top-left corner at (x, y); returns the x after it."""
        for ch in text:
            g = _glyph(ch)
            for r in range(7):
                for c in range(5):
                    if g[r * 5 + c] == "#":
                        self.rect(x + c * SCALE, y + r * SCALE, x + (c + 1) * SCALE, y + (r + 1) * SCALE, colour)
            x += 6 * SCALE
        return x

    @staticmethod
    def text_width(text: str) -> int:
        return 6 * SCALE * len(text)

    def png(self) -> bytes:
        raw = b"".join(b"\x00" + bytes(self.pixels[y * self.width * 3:(y + 1) * self.width * 3])
                       for y in range(self.height))

        def chunk(kind: bytes, data: bytes) -> bytes:
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


PALETTE = [(52, 101, 164), (204, 102, 0), (78, 154, 6), (117, 80, 123)]


def bar_chart(path, title: str, groups: list[str], series: dict[str, list[float]], notes: list[str] = ()) -> Path:
    """Writes a grouped bar chart: one group per label in ``groups``, one bar per series (name -> values, one value
    per group), each bar labelled with its value; ``notes`` (e.g. ratios) print under each group."""
    for name, values in series.items():
        if len(values) != len(groups):
            raise ValueError(f"series {name!r} has {len(values)} values for {len(groups)} groups")
    bars = len(series)
    bar_w, gap, left, top, plot_h = 36, 40, 70, 70, 320
    group_w = max(bars * bar_w + gap, max([Raster.text_width(g) for g in groups] + [0]) + 16)
    width = left + group_w * len(groups) + 30
    height = top + plot_h + 90
    img = Raster(width, height)
    img.text(left, 16, title)
    peak = max([v for values in series.values() for v in values] + [1e-9])
    base = top + plot_h
    img.rect(left - 2, top, left, base + 1, (0, 0, 0))
    img.rect(left - 2, base, width - 20, base + 2, (0, 0, 0))
    x = left + 40
    for i, name in enumerate(series):  # legend
        img.rect(x, 44, x + 14, 58, PALETTE[i % len(PALETTE)])
        x = img.text(x + 20, 45, name) + 24
    for gi, label in enumerate(groups):
        gx = left + gi * group_w + gap // 2
        for bi, (name, values) in enumerate(series.items()):
            h = int(plot_h * 0.9 * values[gi] / peak)
            bx = gx + bi * bar_w
            img.rect(bx + 3, base - h, bx + bar_w - 3, base, PALETTE[bi % len(PALETTE)])
            value = f"{values[gi]:.0f}" if values[gi] >= 10 else f"{values[gi]:.2f}"
            img.text(bx + (bar_w - Raster.text_width(value)) // 2, base - h - 18, value)
        img.text(gx, base + 10, label)
        if gi < len(notes):
            img.text(gx, base + 32, notes[gi], (90, 90, 90))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(img.png())
    return path
