import UnwindCore
import UnwindSeams

/// Which windows a frame's changes go out in: runs of changed bytes per page, merged into
/// rectangles when one window costs fewer bits on the wire than several.
extension SSD1306 {
    /// A window: columns c0...c1 of pages p0...p1.
    struct Rect: Equatable {
        var c0, c1, p0, p1: Int
        var area: Int { (c1 - c0 + 1) * (p1 - p0 + 1) }
        func union(_ o: Rect) -> Rect { Rect(c0: min(c0, o.c0), c1: max(c1, o.c1), p0: min(p0, o.p0), p1: max(p1, o.p1)) }
        func intersects(_ o: Rect) -> Bool { c0 <= o.c1 && o.c0 <= c1 && p0 <= o.p1 && o.p0 <= p1 }
        func contains(_ o: Rect) -> Bool { c0 <= o.c0 && o.c1 <= c1 && p0 <= o.p0 && o.p1 <= p1 }
    }

    /// Bits on the wire for a window of `bytes` data bytes (`SSD1306Link`'s framing).
    func bits(_ bytes: Int) -> Int { link.windowBits(data: bytes) }

    /// Fills `rects` with the windows to send for `next` against `last`; returns true when
    /// that is the whole frame.
    ///
    /// 1. Per page, changed columns form runs; a gap of unchanged bytes is sent along when
    ///    that costs fewer bits than opening a new window (plain I²C: gaps up to 10 bytes,
    ///    since a window costs 7 command bytes + a control byte + a second start/address/stop).
    /// 2. Greedily, the pair of rectangles whose bounding box saves the most bits is merged
    ///    (rectangles the box covers completely are absorbed; a box that would cut through
    ///    another rectangle is not considered, so rectangles never overlap), until no merge saves.
    /// 3. If the windows together cost at least a full frame, the full frame goes instead.
    func plan() -> Bool {
        rectCount = 0
        let whole = Rect(c0: 0, c1: width - 1, p0: 0, p1: pages - 1)
        if !lastValid || !configuration.partialUpdates {
            rects[0] = whole
            rectCount = 1
            return true
        }
        // 1. Runs per page.
        var p = 0
        while p < pages {
            let base = p * width
            var open = false
            var s = 0, e = 0
            var x = 0
            while x < width {
                if next[base + x] != last[base + x] {
                    if !open {
                        open = true; s = x; e = x
                    } else if bits(x - s + 1) <= bits(e - s + 1) + bits(1) {
                        e = x
                    } else {
                        rects[rectCount] = Rect(c0: s, c1: e, p0: p, p1: p); rectCount += 1
                        s = x; e = x
                    }
                }
                x += 1
            }
            if open { rects[rectCount] = Rect(c0: s, c1: e, p0: p, p1: p); rectCount += 1 }
            p += 1
        }
        if rectCount == 0 { return false }

        // 2. Greedy merging.
        if rectCount <= Self.maximumRectanglesToMerge { mergeRectangles() }

        // 3. Whole frame when cheaper.
        var total = 0
        var i = 0
        while i < rectCount { total += bits(rects[i].area); i += 1 }
        if total >= bits(size) {
            rects[0] = whole
            rectCount = 1
            return true
        }
        return false
    }

    func mergeRectangles() {
        while rectCount > 1 {
            var bestSaving = 0
            var bestI = -1, bestJ = -1
            var bestUnion = Rect(c0: 0, c1: 0, p0: 0, p1: 0)
            var i = 0
            while i < rectCount {
                let a = rects[i]
                var j = i + 1
                while j < rectCount {
                    let b = rects[j]
                    let u = a.union(b)
                    var saving = bits(a.area) + bits(b.area) - bits(u.area)
                    var usable = true
                    var k = 0
                    while k < rectCount {
                        if k != i && k != j && u.intersects(rects[k]) {
                            if u.contains(rects[k]) { saving += bits(rects[k].area) } else { usable = false; break }
                        }
                        k += 1
                    }
                    if usable && saving > bestSaving {
                        bestSaving = saving; bestI = i; bestJ = j; bestUnion = u
                    }
                    j += 1
                }
                i += 1
            }
            if bestI < 0 { return }
            // Keep the union at bestI; drop bestJ and everything it absorbed.
            rects[bestI] = bestUnion
            var w = 0
            var r = 0
            while r < rectCount {
                let keep = r == bestI || (r != bestJ && !bestUnion.contains(rects[r]))
                if keep { rects[w] = rects[r]; w += 1 }
                r += 1
            }
            rectCount = w
        }
    }
}
