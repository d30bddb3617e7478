import Credentials
import HTTPServer

/// `GET /`: the stats page for people, one self-contained HTML document put together from the
/// files beside this one, which SwiftPM embeds in the binary at build time (`.embedInCode` in
/// Package.swift), so the executable needs nothing at run time but itself:
///
/// - `Dashboard/page.html`: the document. Every element the script fills in has an id and a
///   fixed place, so a refresh changes text and attributes in place and nothing moves; no
///   inline `style` attributes and no inline event handlers, since the Content-Security-Policy
///   allows only the one stylesheet and the one script, by hash. Its empty `<style></style>`
///   and `<script></script>` receive the two below.
/// - `Dashboard/page.css`: the one stylesheet. Fixed heights for everything a refresh rewrites
///   (chart, heatmap, lists, table rows) and tabular figures, so new numbers never move the layout.
/// - The one script, three files in one function scope: `page.js` (state in the fragment,
///   `#creator=7&period=28d&step=day` or `#track=123&…`; requests every few seconds; the
///   subject's totals and their change against the previous period; the CSV links; a failed
///   request keeps the last good numbers and says so), `charts.js` (the timeline and a track's
///   waveform heatmaps, SVG drawn to the element's width) and `lists.js` (breakdowns, the top
///   list, a creator's tracks, the layers' status, and the start).
///
/// A text file ends with a line break; the page does not carry each file's last one. The bytes
/// are fixed for the life of the process, so the ETag and the hashes the
/// Content-Security-Policy allows are computed once, from the very bytes served.
enum DashboardPage {
    /// The script: the three files, in order, inside one strict-mode function scope.
    static let script: [UInt8] = {
        let files: [[UInt8]] = [PackageResources.page_js, PackageResources.charts_js, PackageResources.lists_js]
        let body: [UInt8] = Array(files.map(text).joined(separator: [UInt8(ascii: "\n")]))
        return Array("(() => {\n'use strict';\n".utf8) + body + Array("})();\n".utf8)
    }()

    static let style: [UInt8] = text(PackageResources.page_css)

    static let html: [UInt8] = {
        var page = text(PackageResources.page_html)
        fill(&page, tag: "style", with: style)
        fill(&page, tag: "script", with: script)
        return page
    }()

    /// Only this page's own stylesheet and script, requests to this origin, no framing and no
    /// other origin at all — not even for images or fonts.
    static let contentSecurityPolicy = [
        "default-src 'none'",
        "script-src '\(hashSource(script))'",
        "style-src '\(hashSource(style))'",
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

    private static func hashSource(_ bytes: [UInt8]) -> String {
        "sha256-" + Base64.encode(SHA256.digest(bytes))
    }

    /// A file's bytes without its last line break.
    private static func text(_ file: [UInt8]) -> [UInt8] {
        file.last == UInt8(ascii: "\n") ? Array(file.dropLast()) : file
    }

    /// Puts `content` into the document's one empty `<tag></tag>`.
    private static func fill(_ page: inout [UInt8], tag: String, with content: [UInt8]) {
        let (open, slot) = (Array("<\(tag)>".utf8), Array("<\(tag)></\(tag)>".utf8))
        guard let start = page.indices.dropLast(slot.count - 1).first(where: { page[$0..<$0 + slot.count].elementsEqual(slot) })
        else { preconditionFailure("Dashboard/page.html has no empty <\(tag)> element") }
        page.insert(contentsOf: content, at: start + open.count)
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
