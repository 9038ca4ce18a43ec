#!/usr/bin/env python3
"""Generate the BitmapFont glyph tables in this folder from the X11 misc-fixed fonts.

Usage: python3 generate-fonts.py [FONT_DIR]

FONT_DIR defaults to /usr/share/fonts/X11/misc (Debian's xfonts-base package).
Each <name>.pcf.gz there is decompressed and converted to BDF with `pcf2bdf`
(Debian package pcf2bdf); a plain <name>.bdf in FONT_DIR is used instead if present.
The Swift files are written next to this script. Python 3 standard library only.

Every glyph is placed in the cell from its BBX and the font's FONT_ASCENT /
FONT_DESCENT, so that all glyphs share one baseline. Code points 32...255 are
emitted contiguously; 127...159 (C1 controls, no glyphs) are blank.
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

FIRST = 32
LAST = 255
BLANK = range(127, 160)  # C1 controls: no glyphs, emitted blank

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
    if cp in BLANK:
        return f"U+{cp:04X} (control, blank)"
    ch = chr(cp)
    if unicodedata.category(ch)[0] in "ZC" and ch != " ":
        return f"U+{cp:04X} {unicodedata.name(ch, '')}".rstrip()
    return f"U+{cp:04X} '{ch}'"


def generate(font_dir, stem, prop, width, height):
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
    if registry not in (("ISO10646", "1"), ("ISO8859", "1")):
        fail(f"{stem}: charset {registry} is not Unicode or Latin-1")
    dwidth_default = None
    if "DWIDTH" in header:
        dwidth_default = tuple(int(v) for v in header["DWIDTH"].split())

    copyright_ = props.get("COPYRIGHT", "").strip()
    notices = [c for c in comments if c] + ([copyright_] if copyright_ else [])
    if not any("public domain" in n.lower() for n in notices):
        fail(f"{stem}: no public-domain statement found in COPYRIGHT/COMMENT")

    hexdigits = 4
    lines = []
    for cp in range(FIRST, LAST + 1):
        if cp in BLANK:
            rows = [0] * height
        elif cp in glyphs:
            rows = place(glyphs[cp], width, height, ascent, dwidth_default)
        else:
            fail(f"{stem}: no glyph for U+{cp:04X}")
        values = ", ".join(f"0x{v:0{hexdigits}X}" for v in rows)
        lines.append(f"        {values}, // {describe(cp)}")

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
               f"code points {FIRST}...{LAST}, {min(BLANK)}...{max(BLANK)} blank.")
    out.append(f"// {height} rows per glyph, bit 15 = leftmost pixel.")
    out.append("")
    out.append("extension BitmapFont {")
    out.append(f"    public static let {prop} = BitmapFont(")
    out.append(f'        name: "{name}", width: {width}, height: {height}, '
               f"first: {FIRST}, rows: Self.{table})")
    out.append("")
    out.append(f"    static let {table}: [UInt16] = [")
    out.extend(lines)
    out.append("    ]")
    out.append("}")
    out.append("")

    path = os.path.join(HERE, f"Font{stem}.swift")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(out))
    print(f"wrote {path}: {LAST - FIRST + 1} glyphs, {(LAST - FIRST + 1) * height} rows")


def main():
    font_dir = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/fonts/X11/misc"
    for stem, prop, width, height in FONTS:
        generate(font_dir, stem, prop, width, height)


if __name__ == "__main__":
    main()
