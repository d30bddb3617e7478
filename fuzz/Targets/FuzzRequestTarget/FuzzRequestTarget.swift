import CounterpointCore
import FuzzSupport
@testable import HTTPServer
@testable import Reader

/// libFuzzer entry for the request target as the HTTP server receives it and the reader's
/// reading of its path and query (docs/fuzzing.md). Besides "no crash" it checks that what the
/// server accepts is what the handlers are promised (a path from '/', no NUL), that the same
/// path and query percent-encoded again parse to themselves, and that the reader's routes,
/// ranges and limits stay inside their bounds.
@main
enum FuzzDriver {
    static func main() { runLibFuzzer(fuzzRequestTarget) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestTarget(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let target = try? RequestTarget.parse(UnsafeBufferPointer(start: data, count: size)) else { return 0 }
    check(target.path.utf8.first == UInt8(ascii: "/"), "an accepted path that does not start with '/'")
    check(!target.path.utf8.contains(0), "an accepted path with a NUL")
    check(target.query.allSatisfy { !$0.name.utf8.contains(0) && !$0.value.utf8.contains(0) }, "an accepted query with a NUL")

    let encoded = Array(percentEncoded(target.path, keeping: UInt8(ascii: "/")).utf8)
        + (target.query.isEmpty ? [] : Array(("?" + target.query.map { percentEncoded($0.name) + "=" + percentEncoded($0.value) }
            .joined(separator: "&")).utf8))
    guard let again = try? encoded.withUnsafeBufferPointer({ try RequestTarget.parse($0) }) else {
        fatalError("an accepted target, percent-encoded again, is refused: \(String(decoding: encoded, as: UTF8.self))")
    }
    check(again.path == target.path, "the path changes when percent-encoded again")
    check(again.query.elementsEqual(target.query, by: { $0 == $1 }), "the query changes when percent-encoded again")

    checkReader(path: target.path, query: target.query)
    return 0
}

func checkReader(path: String, query: [(name: String, value: String)]) {
    if let match = Route.match(path) {
        check(Route.table.contains { $0.template == match.route.template }, "a match outside the route table")
        if case .success(let subject) = match.subject, match.route.template.contains("{id}") {
            check((1...EventLimits.maxTrackID).contains(subject.id), "a routed \(subject.kind) id out of range: \(subject.id)")
            check(match.route.template.hasPrefix("/v1/\(subject.kind.plural)/"), "a \(subject.kind) id routed to \(match.route.template)")
        }
    }
    do throws(APIError) {
        let values = try QueryValues(query, allowed: ["from", "to", "step", "limit", "track_id", "by"])
        let range = try values.hourRange()
        check(range.isEmpty || (HourRange.allTime.lower <= range.lower && range.upper <= HourRange.allTime.upper),
              "a query range outside all time: \(range)")
        let limit = try values.integer(named: "limit", default: 10, range: 1...CountAnswers.maxTopLimit)
        check((1...CountAnswers.maxTopLimit).contains(limit), "a limit out of range: \(limit)")
    } catch {
        check(error.status == 400 && !error.body.isEmpty, "a query error that is not a 400 with a body")
    }
}

/// Percent-encodes every byte but the unreserved ones of RFC 3986 (and `keeping`).
func percentEncoded(_ text: String, keeping kept: UInt8? = nil) -> String {
    let hex = Array("0123456789ABCDEF".utf8)
    var out: [UInt8] = []
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            out.append(byte)
        default:
            if byte == kept { out.append(byte) } else { out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]] }
        }
    }
    return String(decoding: out, as: UTF8.self)
}
