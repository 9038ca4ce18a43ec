import UnwindCore

/// Changes to the configuration file's text that keep everything else in it — comments, order,
/// the person's own values — as it was: the setup file's device name and counselling line go
/// into `unwind.conf` this way, and the result is checked by the same parser as `unwind run`
/// before it is written.
public enum ConfigurationText {
    /// `text` with `dotted` (`section.key`) set to `value`, written as a double-quoted scalar:
    /// the key's line replaced where the section has one, else added as the section's first
    /// key, else the section added at the end.
    public static func setting(_ dotted: String, to value: String, in text: String) -> String {
        let parts = dotted.split(separator: ".", maxSplits: 1).map(String.init)
        precondition(parts.count == 2, "a setting is section.key")
        let (section, key) = (parts[0], parts[1])
        let newline = text.contains("\r\n") ? "\r\n" : "\n"
        var lines = text.linesWithoutEnds
        if lines.last == "" { lines.removeLast() }
        let entry = "  \(key): \(quoted(value))"
        if let start = lines.firstIndex(where: { isSectionLine($0, section) }) {
            var i = start + 1
            while i < lines.count, isInside(lines[i]) {
                if keyOf(lines[i]) == key {
                    let indent = String(lines[i].prefix { $0 == " " })
                    lines[i] = indent + "\(key): \(quoted(value))"
                    return lines.joined(separator: newline) + newline
                }
                i += 1
            }
            lines.insert(entry, at: start + 1)
        } else {
            if let last = lines.last, !last.isEmpty { lines.append("") }
            lines.append("\(section):")
            lines.append(entry)
        }
        return lines.joined(separator: newline) + newline
    }

    /// A YAML double-quoted scalar.
    static func quoted(_ value: String) -> String {
        var out = "\""
        for c in value.unicodeScalars {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            default: out.unicodeScalars.append(c)
            }
        }
        return out + "\""
    }

    static func isSectionLine(_ line: String, _ section: String) -> Bool {
        guard line.hasPrefix(section + ":") else { return false }
        let rest = line.dropFirst(section.count + 1).drop { $0 == " " || $0 == "\t" }
        return rest.isEmpty || rest.hasPrefix("#")
    }

    /// Indented lines, blank lines and comments belong to the section above them.
    static func isInside(_ line: String) -> Bool {
        guard let first = line.first else { return true }
        return first == " " || first == "\t" || first == "#"
    }

    static func keyOf(_ line: String) -> String? {
        let body = line.drop { $0 == " " || $0 == "\t" }
        guard !body.hasPrefix("#"), let colon = body.firstIndex(of: ":") else { return nil }
        return String(body[..<colon])
    }
}
