import Foundation
import Programs
import Testing

/// The documents name files of the tree; a file moved or renamed must take its mentions along.
@Suite("the documents match the tree")
struct DocsMatchTreeTests {
    static let root = Executable.packageRoot

    /// README.md, loadtest/README.md and every Markdown file under docs/.
    static func documents() throws -> [URL] {
        let docs = root.appendingPathComponent("docs")
        let markdown = try FileManager.default.contentsOfDirectory(at: docs, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "md" }
        return [root.appendingPathComponent("README.md"), root.appendingPathComponent("loadtest/README.md")] + markdown
    }

    /// Every file of the trees the documents point into, as paths from the package root.
    static func files() -> [String] {
        ["Sources", "Tests", "loadtest", "fuzz", "scripts", "deploy"].flatMap { folder -> [String] in
            let enumerator = FileManager.default.enumerator(atPath: root.appendingPathComponent(folder).path)
            return (enumerator?.allObjects as? [String] ?? []).map { "\(folder)/\($0)" }
        }
    }

    @Test("every Sources/… or Tests/… path and every …/File.swift named in docs/ and the READMEs exists")
    func namedPathsExist() throws {
        let files = Self.files()
        let known = Set(files)
        var missing: [String] = []
        for document in try Self.documents() {
            let text = try String(contentsOf: document, encoding: .utf8)
            let name = document.path.replacingOccurrences(of: Self.root.path + "/", with: "")
            // A full path from the root: exactly that file or folder.
            for match in text.matches(of: /(?:^|[^\w.\/-])((?:Sources|Tests)\/[\w.\/+-]*[\w+-])/) {
                let path = String(match.output.1)
                if !known.contains(path) && !known.contains(path + "/") && !files.contains(where: { $0.hasPrefix(path + "/") }) {
                    missing.append("\(name): \(path)")
                }
            }
            // A Swift file named by module folder and name (`Reader/Route.swift`) or by name alone.
            for match in text.matches(of: /(?:^|[^\w.\/-])((?:[\w+-]+\/)*[\w+-]+\.swift)/) {
                let path = String(match.output.1)
                if path == "Package.swift" || path.hasPrefix("Sources/") || path.hasPrefix("Tests/") { continue }
                if !files.contains(where: { $0 == path || $0.hasSuffix("/" + path) }) {
                    missing.append("\(name): \(path)")
                }
            }
        }
        #expect(missing.isEmpty, "\(missing)")
    }
}
