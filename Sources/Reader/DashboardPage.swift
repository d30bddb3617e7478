import Credentials
import HTTPServer

/// `GET /`: the stats page for people (SPEC §5), one self-contained HTML document. Its bytes
/// are fixed for the life of the process, so its ETag and the hashes its Content-Security-Policy
/// allows are computed once, from the very bytes served.
enum DashboardPage {
    static let html: [UInt8] = Array("""
    <!doctype html>
    <html lang="en"><head><meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Counterpoint — play counts</title>
    <link rel="icon" href="data:,">
    <style>\(PageStyle.css)</style>
    </head><body>
    \(PageMarkup.body)
    <script>\(PageScript.js)</script>
    </body></html>
    """.utf8)

    /// Only this page's own stylesheet and script, requests to this origin, no framing and no
    /// other origin at all — not even for images or fonts.
    static let contentSecurityPolicy = [
        "default-src 'none'",
        "script-src '\(hashSource(PageScript.js))'",
        "style-src '\(hashSource(PageStyle.css))'",
        "connect-src 'self'",
        "img-src 'self' data:",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ].joined(separator: "; ")

    /// A strong validator: the first 128 bits of the page's SHA-256, in hex.
    static let etag: String = {
        let hex = SHA256.digest(html).prefix(16).map { byte in
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 15)]], as: UTF8.self)
        }
        return "\"" + hex.joined() + "\""
    }()

    /// `no-cache`: a browser keeps the page but asks each time, so a new release shows at once
    /// and an unchanged page costs a 304.
    static let cacheControl = "no-cache"

    private static func hashSource(_ text: String) -> String {
        "sha256-" + Base64.encode(SHA256.digest(Array(text.utf8)))
    }

    /// 200 with the page, or 304 when `If-None-Match` names its ETag (or `*`).
    static func response(ifNoneMatch: String?) -> HTTPResponse {
        var headers = [
            ("ETag", etag),
            ("Cache-Control", cacheControl),
            ("Content-Security-Policy", contentSecurityPolicy),
            ("Referrer-Policy", "no-referrer"),
            // For browsers older than CSP's frame-ancestors; X-Content-Type-Options is on every answer.
            ("X-Frame-Options", "DENY"),
        ]
        if let ifNoneMatch, matches(ifNoneMatch) {
            return HTTPResponse(status: 304, headers: headers, body: [])
        }
        headers.insert(("Content-Type", "text/html; charset=utf-8"), at: 0)
        return HTTPResponse(status: 200, headers: headers, body: html)
    }

    /// RFC 9110 §13.1.2: a comma-separated list of entity tags compared weakly, or `*`.
    static func matches(_ ifNoneMatch: String) -> Bool {
        for candidate in ifNoneMatch.split(separator: ",") {
            var tag = Substring(candidate.drop { $0 == " " || $0 == "\t" })
            while tag.last == " " || tag.last == "\t" { tag.removeLast() }
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            if tag == etag { return true }
        }
        return false
    }
}
