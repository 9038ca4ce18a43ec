import CLibYAML

/// One node of a YAML document, as the configuration reader needs it. A class: an alias is
/// the node its anchor named, never a copy (nine levels of nine aliases stay 81 nodes, not
/// 9^9 "lol"s).
final class YAMLNode {
    enum Content {
        /// The text, and whether it is YAML's null (`~`, `null`, nothing, or tagged `!!null`).
        case scalar(String, isNull: Bool)
        case sequence([YAMLNode])
        case mapping([(key: YAMLNode, value: YAMLNode)])
    }

    let content: Content
    /// 1-based, as libyaml's marks plus one.
    let line: Int, column: Int

    init(_ content: Content, line: Int, column: Int) {
        self.content = content
        self.line = line
        self.column = column
    }

    var string: String? {
        if case .scalar(let s, _) = content { return s }
        return nil
    }

    var mapping: [(key: YAMLNode, value: YAMLNode)]? {
        if case .mapping(let pairs) = content { return pairs }
        return nil
    }
}

/// Why text is not one YAML document: where, and libyaml's words for what.
enum YAMLProblem: Error {
    /// A scanner's, parser's or composer's error, at a 1-based line and column.
    case syntax(problem: String, line: Int, column: Int)
    /// The reader's (bytes that are not the text it expects), at a character offset.
    case reader(problem: String, offset: Int?)
    /// Keys given more than once in one mapping, in order, at the first one's place.
    case duplicateKeys([String], line: Int, column: Int)
    case memory
}

/// A YAML text composed into nodes with libyaml's event parser (the C library Yams is built
/// on, compiled in: Sources/CLibYAML), as Yams composed it: the single document's root, or nil
/// for an empty stream; an undefined alias, a second document or a key given twice in a
/// mapping is an error; libyaml refuses nesting deeper than 1000 levels.
enum YAMLDocument {
    static func compose(_ text: String) throws(YAMLProblem) -> YAMLNode? {
        var bytes = Array(text.utf8)
        return try bytes.withUnsafeMutableBufferPointer { (buffer) throws(YAMLProblem) -> YAMLNode? in
            var composer = Composer(text: text)
            defer { yaml_parser_delete(&composer.parser) }
            yaml_parser_initialize(&composer.parser)
            yaml_parser_set_encoding(&composer.parser, YAML_UTF8_ENCODING)
            yaml_parser_set_input_string(&composer.parser, buffer.baseAddress, buffer.count)
            return try composer.document()
        }
    }
}

private struct Composer {
    let text: String
    var parser = yaml_parser_t()
    var anchors: [String: YAMLNode] = [:]

    init(text: String) { self.text = text }

    /// One parsed event; its storage is libyaml's, freed by `release`.
    mutating func next() throws(YAMLProblem) -> yaml_event_t {
        var event = yaml_event_t()
        guard yaml_parser_parse(&parser, &event) == 1 else { throw problem() }
        return event
    }

    mutating func document() throws(YAMLProblem) -> YAMLNode? {
        var event = try next()  // the stream's start
        yaml_event_delete(&event)
        event = try next()
        defer { yaml_event_delete(&event) }
        guard event.type != YAML_STREAM_END_EVENT else { return nil }
        var first = try next()  // past the document's start
        let root = try node(from: &first)
        var end = try next()  // the document's end
        yaml_event_delete(&end)
        var after = try next()
        defer { yaml_event_delete(&after) }
        if after.type != YAML_STREAM_END_EVENT {
            throw .syntax(problem: "but found another document", line: Int(after.start_mark.line) + 1,
                          column: Int(after.start_mark.column) + 1)
        }
        return root
    }

    /// The node that starts with `event` (which this frees), up to its end.
    mutating func node(from event: inout yaml_event_t) throws(YAMLProblem) -> YAMLNode {
        defer { yaml_event_delete(&event) }
        let line = Int(event.start_mark.line) + 1, column = Int(event.start_mark.column) + 1
        let node: YAMLNode
        let anchor: UnsafeMutablePointer<yaml_char_t>?
        switch event.type {
        case YAML_ALIAS_EVENT:
            guard let named = anchors[Self.string(event.data.alias.anchor)] else {
                throw .syntax(problem: "found undefined alias", line: line, column: column)
            }
            return named
        case YAML_SCALAR_EVENT:
            let s = event.data.scalar
            let value = String(decoding: UnsafeBufferPointer(start: s.value, count: s.length), as: UTF8.self)
            let tag = s.tag.map { Self.string($0) }
            let isNull = tag == YAML_NULL_TAG
                || (tag == nil && s.plain_implicit == 1 && ["", "~", "null", "Null", "NULL"].contains(value))
            node = YAMLNode(.scalar(value, isNull: isNull), line: line, column: column)
            anchor = s.anchor
        case YAML_SEQUENCE_START_EVENT:
            anchor = event.data.sequence_start.anchor
            var items: [YAMLNode] = []
            while true {
                var e = try next()
                if e.type == YAML_SEQUENCE_END_EVENT {
                    yaml_event_delete(&e)
                    break
                }
                items.append(try self.node(from: &e))
            }
            node = YAMLNode(.sequence(items), line: line, column: column)
        case YAML_MAPPING_START_EVENT:
            anchor = event.data.mapping_start.anchor
            var pairs: [(key: YAMLNode, value: YAMLNode)] = []
            while true {
                var k = try next()
                if k.type == YAML_MAPPING_END_EVENT {
                    yaml_event_delete(&k)
                    break
                }
                let key = try self.node(from: &k)
                var v = try next()
                pairs.append((key, try self.node(from: &v)))
            }
            try Self.checkDuplicates(pairs)
            node = YAMLNode(.mapping(pairs), line: line, column: column)
        default:
            throw .syntax(problem: "unexpected event", line: line, column: column)
        }
        // An anchor named again replaces the earlier one from here on, as YAML says.
        if let anchor { anchors[Self.string(anchor)] = node }
        return node
    }

    /// Yams's rule: the keys given more than once, sorted, reported at the first one's first place.
    static func checkDuplicates(_ pairs: [(key: YAMLNode, value: YAMLNode)]) throws(YAMLProblem) {
        var first: [String: YAMLNode] = [:]
        var twice: Set<String> = []
        for (key, _) in pairs {
            guard let name = key.string else { continue }
            if first[name] == nil { first[name] = key } else { twice.insert(name) }
        }
        guard let smallest = twice.min(), let at = first[smallest] else { return }
        throw .duplicateKeys(twice.sorted(), line: at.line, column: at.column)
    }

    static func string(_ p: UnsafePointer<yaml_char_t>?) -> String {
        guard let p else { return "" }
        return String(cString: p)
    }

    /// libyaml's error, as YAMLProblem.
    func problem() -> YAMLProblem {
        let words = parser.problem.map { String(cString: $0) } ?? "unknown problem"
        switch parser.error {
        case YAML_MEMORY_ERROR:
            return .memory
        case YAML_READER_ERROR:
            // libyaml counts bytes; the message counts characters, as Yams did.
            let utf8 = text.utf8
            let index = utf8.index(utf8.startIndex, offsetBy: parser.problem_offset, limitedBy: utf8.endIndex)?
                .samePosition(in: text)
            return .reader(problem: words, offset: index.map { text.distance(from: text.startIndex, to: $0) })
        default:
            return .syntax(problem: words, line: Int(parser.problem_mark.line) + 1, column: Int(parser.problem_mark.column) + 1)
        }
    }
}
