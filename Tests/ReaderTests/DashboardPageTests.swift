import Foundation
import HTTPTestClient
import Patience
import Programs
import StoreTestSupport
import Testing

/// How `GET /` is served: a validator that lets browsers revalidate for free, and a
/// Content-Security-Policy that lets the page run its own script and style and reach nothing
/// but the reader. Whether the page then works is the browser tests' job (EndToEndTests).
@Suite("the stats page's HTTP answer", .onTestThreads)
struct DashboardPageTests {
    /// SHA-256 by coreutils' `sha256sum`, independent of the reader's own implementation.
    static func sha256Base64(_ bytes: [UInt8]) throws -> String {
        let hex = try Program.checkBlocking("/usr/bin/sha256sum", [], input: bytes).prefix(64)
        var digest = Data()
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            digest.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return digest.base64EncodedString()
    }

    /// The text between the first `<tag>` and `</tag>`.
    static func inline(_ tag: String, in page: String) -> String? {
        guard let open = page.range(of: "<\(tag)>"), let close = page.range(of: "</\(tag)>", range: open.upperBound..<page.endIndex) else {
            return nil
        }
        return String(page[open.upperBound..<close.lowerBound])
    }

    @Test("GET / is one small HTML page whose CSP allows exactly its own inline script and style, and only this origin", arguments: StoreKind.allCases)
    func pageAndPolicy(_ store: StoreKind) throws {
        try ReaderFixture.with(store) { reader in
            let page = try reader.get("/")
            #expect(page.status == 200)
            #expect(page.header("Content-Type") == "text/html; charset=utf-8")
            #expect(page.body.count < 200_000)
            #expect(page.header("Cache-Control") == "no-cache")
            #expect(page.header("X-Content-Type-Options") == "nosniff")
            let text = page.text
            #expect(text.components(separatedBy: "<script").count == 2, "one script")
            #expect(text.components(separatedBy: "<style").count == 2, "one stylesheet")
            // The SVG namespace is a name, not a place the page fetches from.
            let addresses = text.replacingOccurrences(of: "'http://www.w3.org/2000/svg'", with: "")
            #expect(!addresses.contains("http://") && !addresses.contains("https://") && !addresses.contains("//cdn"), "no other origin named")
            #expect(!text.contains(" style=\"") && !text.contains(" onclick="), "no inline attributes the policy would block")

            let policy = try #require(page.header("Content-Security-Policy"))
            let directives = Dictionary(uniqueKeysWithValues: policy.split(separator: ";").map { directive in
                let words = directive.split(separator: " ").map(String.init)
                return (words[0], Array(words.dropFirst()))
            })
            let script = try #require(Self.inline("script", in: text))
            let style = try #require(Self.inline("style", in: text))
            #expect(directives["default-src"] == ["'none'"])
            #expect(directives["script-src"] == ["'sha256-\(try Self.sha256Base64(Array(script.utf8)))'"])
            #expect(directives["style-src"] == ["'sha256-\(try Self.sha256Base64(Array(style.utf8)))'"])
            #expect(directives["connect-src"] == ["'self'"])
            #expect(directives["frame-ancestors"] == ["'none'"])
            #expect(!policy.contains("*") && !policy.contains("http") && !policy.contains("unsafe"))
        }
    }

    @Test("a strong ETag from the page's bytes: If-None-Match with it (or W/ it, or *) is 304 without a body; HEAD has the same headers", arguments: StoreKind.allCases)
    func etagAndRevalidation(_ store: StoreKind) throws {
        try ReaderFixture.with(store) { reader in
            let page = try reader.get("/")
            let etag = try #require(page.header("ETag"))
            #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && etag.count == 34, "strong and quoted: \(etag)")
            let hash = try Self.sha256Base64(page.body)
            let hex = Data(base64Encoded: hash)!.prefix(16).map { String(format: "%02x", $0) }.joined()
            #expect(etag == "\"\(hex)\"")
            #expect(try reader.get("/").header("ETag") == etag, "the same bytes, the same tag")

            for condition in [etag, "W/\(etag)", "\"other\", \(etag)", "*"] {
                let revalidated = try reader.get("/", headers: ["If-None-Match: \(condition)"])
                #expect(revalidated.status == 304, "\(condition)")
                #expect(revalidated.body.isEmpty)
                #expect(revalidated.header("ETag") == etag)
                #expect(revalidated.header("Cache-Control") == "no-cache")
            }
            let changed = try reader.get("/", headers: ["If-None-Match: \"0123\""])
            #expect(changed.status == 200 && changed.body == page.body)

            let head = try reader.get("/", method: "HEAD")
            #expect(head.status == 200)
            #expect(head.header("ETag") == etag)
            #expect(head.header("Content-Length") == String(page.body.count))
            #expect(head.header("Content-Security-Policy") == page.header("Content-Security-Policy"))
            #expect(try reader.get("/", method: "POST").status == 405)
        }
    }
}
