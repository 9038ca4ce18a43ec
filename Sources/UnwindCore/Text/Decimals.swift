extension Double {
    /// The value rounded to `places` decimals, written out as `String(format: "%.*f")` would
    /// (without Foundation): 2.5 → "2.50" with 2 places, -0.04 → "-0.0" with 1.
    public func fixed(_ places: Int) -> String {
        guard isFinite else { return description }
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaled = (magnitude * scale).rounded()
        guard scaled < 9e18 else { return description }
        let n = Int64(scaled), s = Int64(scale)
        var text = (sign == .minus ? "-" : "") + String(n / s)
        if places > 0 {
            let fraction = String(n % s)
            text += "." + String(repeating: "0", count: places - fraction.count) + fraction
        }
        return text
    }
}
