#!/usr/bin/env python3
"""Generate the BitmapFont glyph tables in this folder from the X11 misc-fixed fonts.

Usage: python3 generate-fonts.py [FONT_DIR]

FONT_DIR defaults to /usr/share/fonts/X11/misc (Debian's xfonts-base package).
Each <name>.pcf.gz there is decompressed and converted to BDF with `pcf2bdf`
(Debian package pcf2bdf); a plain <name>.bdf in FONT_DIR is used instead if present.
The Swift files are written next to this script. Python 3 standard library only.

Every glyph is placed in the cell from its BBX and the font's FONT_ASCENT /
FONT_DESCENT, so that all glyphs share one baseline.

Which code points: Basic Latin and Latin-1 (every font has all of them), every
character GSM-7 can carry (an SMS reply is drawn with these fonts; the script stops
if a font lacks one), and of
the blocks in EXTRA_BLOCKS whatever each font has: the letters people's names are
written with in Latin, Greek and Cyrillic script, and the apostrophes, quotes and
dashes names contain. Combining marks are left out: a cell font cannot overstrike.

A code point of those blocks that a font lacks but whose canonical decomposition
leads to one it has (U+1EBF 'ế' -> U+00EA 'ê' -> 'e') is mapped to that glyph:
the base letter is more use on a 4-pixel-wide font than no letter at all.

Glyphs are stored once each, in code point order; a table of runs maps code points
to them, so sparse coverage (4x6 has 6 of Latin Extended-B's 208 letters) costs no
empty cells. FontComposition.swift, written too, lets the renderer draw a letter
typed as base + combining mark (NFD) with the precomposed glyph.
"""

import gzip
import os
import subprocess
import sys
import unicodedata

# (file stem, Swift property, width, height)
FONTS = [
    ("4x6", "small", 4, 6),
    ("6x10", "regular", 6, 10),
    ("10x20", "large", 10, 20),
]

# Every font has all of these; the screens' own text is written in them.
REQUIRED = [(0x0020, 0x007E), (0x00A0, 0x00FF)]

# GSM 03.38's printable characters, default alphabet and extension table: what a contact's
# phone sends in a plain SMS. Every font must draw every one of them.
GSM7 = ("@£$¥èéùìòÇØøÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
        "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
        "^{}\\[~]|€")

# (first, last, block): emitted where the font has a glyph, or a decomposition to one.
EXTRA_BLOCKS = [
    (0x0100, 0x017F, "Latin Extended-A"),
    (0x0180, 0x024F, "Latin Extended-B"),
    # Only the apostrophe-like letters: the okina, and the apostrophe of Ukrainian and
    # transliterated names. The rest of the block is phonetics.
    (0x02B9, 0x02BC, "Spacing Modifier Letters (primes, apostrophes)"),
    (0x0370, 0x03FF, "Greek and Coptic"),
    (0x0400, 0x04FF, "Cyrillic"),
    (0x0500, 0x052F, "Cyrillic Supplement"),
    (0x1E00, 0x1EFF, "Latin Extended Additional"),
    # Hyphens, dashes, curly quotes and the ellipsis.
    (0x2010, 0x2027, "General Punctuation (dashes, quotes)"),
    # The euro sign (GSM-7's extension table) and the other currency signs.
    (0x20A0, 0x20C0, "Currency Symbols"),
]

HERE = os.path.dirname(os.path.abspath(__file__))


def fail(msg):
    sys.exit(f"generate-fonts.py: error: {msg}")


def read_bdf_text(font_dir, stem):
    bdf = os.path.join(font_dir, stem + ".bdf")
    if os.path.exists(bdf):
        with open(bdf, encoding="latin-1") as f:
            return f.read()
    pcf_gz = os.path.join(font_dir, stem + ".pcf.gz")
    with gzip.open(pcf_gz, "rb") as f:
        pcf = f.read()
    try:
        out = subprocess.run(["pcf2bdf"], input=pcf, capture_output=True, check=True)
    except FileNotFoundError:
        fail("pcf2bdf not found (apt-get install pcf2bdf)")
    except subprocess.CalledProcessError as e:
        fail(f"pcf2bdf failed on {pcf_gz}: {e.stderr.decode(errors='replace')}")
    return out.stdout.decode("latin-1")


def unquote(value):
    value = value.strip()
    if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
        return value[1:-1].replace('""', '"')
    return value


def parse_bdf(text):
    """Return (header dict, properties dict, comments list, {encoding: glyph dict})."""
    header, props, comments, glyphs = {}, {}, [], {}
    lines = iter(text.splitlines())
    for line in lines:
        key, _, rest = line.partition(" ")
        if key == "COMMENT":
            comments.append(rest.strip())
        elif key == "STARTPROPERTIES":
            for pline in lines:
                if pline.startswith("ENDPROPERTIES"):
                    break
                pkey, _, pval = pline.partition(" ")
                props[pkey] = unquote(pval)
        elif key == "STARTCHAR":
            glyph = {"name": rest.strip()}
            for gline in lines:
                gkey, _, gval = gline.partition(" ")
                if gkey == "ENCODING":
                    glyph["encoding"] = int(gval.split()[0])
                elif gkey == "DWIDTH":
                    glyph["dwidth"] = tuple(int(v) for v in gval.split())
                elif gkey == "BBX":
                    glyph["bbx"] = tuple(int(v) for v in gval.split())
                elif gkey == "BITMAP":
                    bitmap = []
                    for bline in lines:
                        if bline.startswith("ENDCHAR"):
                            break
                        bitmap.append(bline.strip())
                    glyph["bitmap"] = bitmap
                    break
            enc = glyph.get("encoding", -1)
            if enc >= 0:
                glyphs[enc] = glyph
        elif key in ("FONT", "SIZE", "FONTBOUNDINGBOX", "DWIDTH", "BBX"):
            header[key] = rest.strip()
    return header, props, comments, glyphs


def place(glyph, width, height, ascent, dwidth_default):
    """Render one glyph into `height` UInt16 rows, bit 15 = leftmost pixel."""
    enc = glyph["encoding"]
    dwidth = glyph.get("dwidth", dwidth_default)
    if dwidth is None or dwidth[0] != width:
        fail(f"U+{enc:04X}: advance {dwidth} is not the cell width {width}")
    bw, bh, xoff, yoff = glyph["bbx"]
    bitmap = glyph["bitmap"]
    if len(bitmap) != bh:
        fail(f"U+{enc:04X}: {len(bitmap)} bitmap rows, BBX says {bh}")
    rows = [0] * height
    top = ascent - (yoff + bh)  # cell row of the bitmap's first row
    for r, hexrow in enumerate(bitmap):
        nbits = len(hexrow) * 4
        if nbits < bw:
            fail(f"U+{enc:04X}: bitmap row {hexrow!r} narrower than BBX width {bw}")
        bits = int(hexrow, 16) if hexrow else 0
        for c in range(bw):
            if not (bits >> (nbits - 1 - c)) & 1:
                continue
            x, y = xoff + c, top + r
            if not (0 <= x < width and 0 <= y < height):
                fail(f"U+{enc:04X}: ink at ({x}, {y}) lies outside the {width}x{height} cell")
            rows[y] |= 1 << (15 - x)
    return rows


def describe(cp):
    ch = chr(cp)
    if unicodedata.category(ch)[0] in "ZC" and ch != " ":
        return f"U+{cp:04X} {unicodedata.name(ch, '')}".rstrip()
    return f"U+{cp:04X} '{ch}'"


def is_mark(cp):
    return unicodedata.category(chr(cp))[0] == "M"


def canonical_decomposition(cp):
    """The code points of cp's canonical decomposition (one step), or [] if it has none."""
    d = unicodedata.decomposition(chr(cp))
    if not d or d.startswith("<"):
        return []
    return [int(h, 16) for h in d.split()]


def fallback_for(cp, has):
    """The code point whose glyph stands in for cp: the decomposition's base, followed down
    (a singleton decomposition is the same character), or None."""
    while True:
        parts = canonical_decomposition(cp)
        if not parts:
            return None
        cp = parts[0]  # canonical decompositions have no cycles: this ends
        if has(cp):
            return cp


def wanted_code_points():
    cps = []
    for first, last in REQUIRED:
        cps.extend(range(first, last + 1))
    for first, last, _ in EXTRA_BLOCKS:
        cps.extend(range(first, last + 1))
    return cps


def runs_of(pairs):
    """[(code point, glyph number)] in code point order -> [(first, count, glyph)], merging
    neighbours whose code points and glyph numbers both go up by one."""
    runs = []
    for cp, g in pairs:
        if runs and runs[-1][0] + runs[-1][1] == cp and runs[-1][2] + runs[-1][1] == g:
            runs[-1][1] += 1
        else:
            runs.append([cp, 1, g])
    return runs


def spans(cps):
    """'U+0020...U+007E, U+00A0...U+017F, U+0186' for a sorted list of code points."""
    out = []
    for cp in cps:
        if out and out[-1][1] + 1 == cp:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return ", ".join(f"U+{a:04X}" if a == b else f"U+{a:04X}...U+{b:04X}" for a, b in out)


def generate(font_dir, stem, prop, width, height):
    """Writes Font<stem>.swift; returns the set of code points the font can draw."""
    header, props, comments, glyphs = parse_bdf(read_bdf_text(font_dir, stem))

    ascent = int(props.get("FONT_ASCENT", -1))
    descent = int(props.get("FONT_DESCENT", -1))
    if ascent < 0 or descent < 0:
        fail(f"{stem}: FONT_ASCENT/FONT_DESCENT missing")
    if ascent + descent != height:
        fail(f"{stem}: ascent {ascent} + descent {descent} != nominal height {height}")
    spacing = props.get("SPACING", "")
    if spacing not in ("C", "M"):
        fail(f"{stem}: SPACING {spacing!r} is not monospaced")
    if int(props.get("PIXEL_SIZE", height)) != height:
        fail(f"{stem}: PIXEL_SIZE {props['PIXEL_SIZE']} != {height}")
    registry = (props.get("CHARSET_REGISTRY", ""), props.get("CHARSET_ENCODING", ""))
    if registry != ("ISO10646", "1"):
        # The extra blocks are looked up by Unicode code point.
        fail(f"{stem}: charset {registry} is not Unicode (ISO10646-1)")
    dwidth_default = None
    if "DWIDTH" in header:
        dwidth_default = tuple(int(v) for v in header["DWIDTH"].split())

    copyright_ = props.get("COPYRIGHT", "").strip()
    notices = [c for c in comments if c] + ([copyright_] if copyright_ else [])
    if not any("public domain" in n.lower() for n in notices):
        fail(f"{stem}: no public-domain statement found in COPYRIGHT/COMMENT")

    for first, last in REQUIRED:
        for cp in range(first, last + 1):
            if cp not in glyphs:
                fail(f"{stem}: no glyph for U+{cp:04X}")
    for ch in GSM7:
        if ord(ch) not in glyphs:
            fail(f"{stem}: no glyph for the GSM-7 character U+{ord(ch):04X}")

    wanted = wanted_code_points()
    placed = {cp: place(glyphs[cp], width, height, ascent, dwidth_default)
              for cp in wanted if cp in glyphs and not is_mark(cp)}
    # A letter whose glyph has no ink (6x10's U+1E04) would leave a hole in a name: it is
    # treated as missing, and so falls back like any other.
    blank = [cp for cp, rows in placed.items()
             if not any(rows) and unicodedata.category(chr(cp)) != "Zs"]
    for cp in blank:
        print(f"{stem}: U+{cp:04X} has an empty glyph; treated as missing")
        del placed[cp]
    own = [cp for cp in wanted if cp in placed]
    number = {cp: i for i, cp in enumerate(own)}
    aliases = {}
    for cp in wanted:
        if cp in number or is_mark(cp):
            continue
        base = fallback_for(cp, lambda c: c in number)
        if base is not None:
            aliases[cp] = base
    pairs = sorted([(cp, number[cp]) for cp in own] + [(cp, number[b]) for cp, b in aliases.items()])
    runs = runs_of(pairs)
    if runs[0][0] != 0x20 or runs[0][1] != 0x7F - 0x20:
        fail(f"{stem}: the first run must be printable ASCII (the renderer looks it up without a search)")

    hexdigits = 4
    glyph_lines = []
    for cp in own:
        rows = placed[cp]
        values = ", ".join(f"0x{v:0{hexdigits}X}" for v in rows)
        glyph_lines.append(f"        {values}, // {describe(cp)}")
    run_lines = []
    for first, count, g in runs:
        note = ""
        if count == 1 and first in aliases:
            note = f" // {describe(first)} -> {describe(aliases[first])}"
        run_lines.append(f"        GlyphRun(0x{first:04X}, {count}, {g}),{note}")

    name = f"misc-fixed {stem}"
    table = f"rows{stem}"
    out = []
    out.append(f"// Generated by generate-fonts.py from X11 misc-fixed {stem} "
               f"({stem}.pcf.gz, Debian xfonts-base). Do not edit.")
    out.append(f"// Font: {header.get('FONT', '?')}")
    for c in comments:
        out.append(f"// BDF COMMENT: {c}")
    if copyright_:
        out.append(f'// BDF COPYRIGHT property: "{copyright_}"')
    out.append("// The glyph data is in the public domain; see NOTICE.")
    out.append(f"// Cell {width}x{height}, ascent {ascent}, descent {descent}; "
               f"{len(own)} glyphs, {height} rows each, bit 15 = leftmost pixel.")
    out.append(f"// Glyphs for: {spans(own)}.")
    out.append(f"// {len(aliases)} more code points are drawn with the glyph of their decomposition's base letter"
               f" (Unicode {unicodedata.unidata_version}).")
    out.append("")
    out.append("extension BitmapFont {")
    out.append(f"    public static let {prop} = BitmapFont(")
    out.append(f'        name: "{name}", width: {width}, height: {height}, ascent: {ascent}, '
               f"runs: Self.runs{stem}, rows: Self.{table})")
    out.append("")
    out.append(f"    static let runs{stem}: [GlyphRun] = [")
    out.extend(run_lines)
    out.append("    ]")
    out.append("")
    out.append(f"    static let {table}: [UInt16] = [")
    out.extend(glyph_lines)
    out.append("    ]")
    out.append("}")
    out.append("")

    path = os.path.join(HERE, f"Font{stem}.swift")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(out))
    print(f"wrote {path}: {len(own)} glyphs ({len(own) * height} rows), "
          f"{len(aliases)} decomposition fallbacks, {len(runs)} runs")
    return set(own) | set(aliases)


def write_compositions(drawable):
    """FontComposition.swift: (base, combining mark) -> precomposed letter, for every letter
    some font can draw that NFC composes from exactly such a pair."""
    entries = []
    for cp in sorted(drawable):
        parts = canonical_decomposition(cp)
        if len(parts) != 2 or not is_mark(parts[1]):
            continue
        # Composition exclusions decompose but never compose again: NFC says which.
        if unicodedata.normalize("NFC", chr(parts[0]) + chr(parts[1])) != chr(cp):
            continue
        entries.append((parts[0], parts[1], cp))
    entries.sort()
    marks = [m for _, m, _ in entries]
    out = []
    out.append("// Generated by generate-fonts.py from the Unicode "
               f"{unicodedata.unidata_version} character database. Do not edit.")
    out.append(f"// {len(entries)} letters a font here can draw, as NFC composes them from a base and one")
    out.append("// combining mark; sorted by (base, mark) for a binary search.")
    out.append("")
    out.append("extension BitmapFont {")
    out.append(f"    /// No mark outside 0x{min(marks):04X}...0x{max(marks):04X} composes with anything here.")
    out.append(f"    static let combiningMarks: ClosedRange<UInt32> = 0x{min(marks):04X}...0x{max(marks):04X}")
    out.append("")
    out.append("    static let compositions: [Composition] = [")
    for base, mark, cp in entries:
        out.append(f"        Composition(0x{base:04X}, 0x{mark:04X}, 0x{cp:04X}), // {describe(cp)}")
    out.append("    ]")
    out.append("}")
    out.append("")
    path = os.path.join(HERE, "FontComposition.swift")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(out))
    print(f"wrote {path}: {len(entries)} compositions")


def main():
    font_dir = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/fonts/X11/misc"
    drawable = set()
    for stem, prop, width, height in FONTS:
        drawable |= generate(font_dir, stem, prop, width, height)
    write_compositions(drawable)


if __name__ == "__main__":
    main()
