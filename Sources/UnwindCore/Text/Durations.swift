/// A length of time in people's words: "just now" under a second, then s, min, h, days.
public func durationText(_ d: Int64) -> String {
    switch d {
    case ..<1: return "just now"
    case ..<60: return "\(d) s"
    case ..<3600: return "\(d / 60) min"
    case ..<86_400: return d % 3600 / 60 == 0 ? "\(d / 3600) h" : "\(d / 3600) h \(d % 3600 / 60) min"
    default:
        let days = d / 86_400, h = d % 86_400 / 3600
        return "\(days) day\(days == 1 ? "" : "s")" + (h == 0 ? "" : " \(h) h")
    }
}
