// Prints the package's module graph from `swift package dump-package` (read on standard input):
// each library and executable target with the targets it depends on, bottom-up. The README's
// layout section carries this output between its `module-graph` markers, and
// Tests/module-graph.sh fails when the two differ, so the picture cannot drift from Package.swift.
import Foundation

let data = FileHandle.standardInput.readDataToEndOfFile()
guard let package = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
      let targets = package["targets"] as? [[String: Any]] else {
    FileHandle.standardError.write(Data("module-graph: not the JSON of swift package dump-package\n".utf8))
    exit(1)
}
var deps: [String: [String]] = [:]
var kinds: [String: String] = [:]
for t in targets {
    guard let name = t["name"] as? String, let type = t["type"] as? String else { continue }
    kinds[name] = type
    var names: [String] = []
    for d in t["dependencies"] as? [[String: Any]] ?? [] {
        if let byName = d["byName"] as? [Any], let n = byName.first as? String { names.append(n) }
        if let target = d["target"] as? [Any], let n = target.first as? String { names.append(n) }
        if let product = d["product"] as? [Any], let n = product.first as? String { names.append(n) }
    }
    deps[name] = names
}
// Only Swift modules of this package: tests, system libraries and C shims are left out, and so
// are the products of other packages (they are listed under "Dependencies").
let shown = Set(kinds.filter { $0.value == "regular" || $0.value == "executable" }.keys.filter { !$0.hasPrefix("C") })
var level: [String: Int] = [:]
func depth(_ n: String, _ seen: Set<String> = []) -> Int {
    if let l = level[n] { return l }
    let below = (deps[n] ?? []).filter { shown.contains($0) && !seen.contains($0) }
    let l = below.map { depth($0, seen.union([n])) + 1 }.max() ?? 0
    level[n] = l
    return l
}
let order = shown.sorted { (depth($0), $0) < (depth($1), $1) }
let width = (order.map(\.count).max() ?? 0) + 1
for n in order {
    let below = (deps[n] ?? []).filter { shown.contains($0) }.sorted { (depth($0), $0) < (depth($1), $1) }
    let pad = String(repeating: " ", count: width - n.count)
    print(below.isEmpty ? n : "\(n)\(pad)← \(below.joined(separator: ", "))")
}
