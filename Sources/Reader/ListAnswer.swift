import CounterpointCore
import HTTPServer

/// One value of a list answer's row: a JSON value in the JSON form, a field in the CSV form.
enum Cell {
    case integer(Int64)
    case text(String)
    case flag(Bool)
    case hour(Hour)
    case null
}

/// A column of a list answer: its name is the key of every item of the JSON list and the
/// CSV header (SPEC §11), `cell` reads a row's value. Each list answer names its columns once
/// and both forms are written from them, so the two cannot drift apart.
struct Column<Row>: Sendable {
    /// The name's bytes, a plain identifier (a JSON key and a CSV header without escaping).
    let name: [UInt8]
    let cell: @Sendable (Row) -> Cell

    init(_ name: String, _ cell: @escaping @Sendable (Row) -> Cell) {
        precondition(name.utf8.allSatisfy { $0 == UInt8(ascii: "_") || (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) },
                     "column names are lowercase identifiers")
        self.name = Array(name.utf8)
        self.cell = cell
    }
}

/// The form a list answer is sent in: JSON (the default) or CSV.
///
/// `format=csv|json` decides; without it, `Accept` does: CSV when it lists `text/csv` with a
/// higher quality than `application/json` (the one listed first on a tie). Anything else in
/// `Accept` — `*/*`, a browser's `text/html` — leaves the answer JSON, as it always was.
enum ListFormat: Equatable {
    case json
    case csv

    init(_ values: QueryValues, accept: String?) throws(APIError) {
        switch values["format"] {
        case "json": self = .json
        case "csv": self = .csv
        case let other?:
            throw .badRequest("invalid_format", "'format' must be 'json' or 'csv', not '\(QueryValues.printable(other))'")
        case nil:
            self = accept.map(Self.preferred(byAccept:)) ?? .json
        }
    }

    private static func preferred(byAccept accept: String) -> ListFormat {
        var best: (format: ListFormat, quality: Double)?
        for range in accept.split(separator: ",") {
            let parts = range.split(separator: ";")
            let format: ListFormat
            switch parts.first?.trimmingSpaces.lowercased() {
            case "text/csv": format = .csv
            case "application/json": format = .json
            default: continue
            }
            var quality = 1.0
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                if pair.count == 2, pair[0].trimmingSpaces.lowercased() == "q" {
                    quality = Double(pair[1].trimmingSpaces) ?? 0
                }
            }
            if quality > 0, quality > best?.quality ?? 0 { best = (format, quality) }
        }
        return best?.format ?? .json
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        let start = firstIndex { $0 != " " && $0 != "\t" } ?? endIndex
        let end = lastIndex { $0 != " " && $0 != "\t" }.map(index(after:)) ?? start
        return self[start..<end]
    }
}

/// A list answer in the form asked for: the JSON object `json` writes (the list inside it
/// through `JSONWriter.rows`), or the rows alone as CSV under `filename`.
func listResponse<Rows: Collection>(_ format: ListFormat, rows: Rows, columns: [Column<Rows.Element>], filename: @autoclosure () -> String,
                                    json: (inout JSONWriter) -> Void) -> HTTPResponse {
    switch format {
    case .json:
        var writer = JSONWriter(capacity: 128 + rows.count * 16 * columns.count)
        json(&writer)
        return .json(writer.bytes)
    case .csv:
        var csv = CSVWriter(capacity: 64 + rows.count * 12 * columns.count)
        csv.table(rows, columns)
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/csv; charset=utf-8"),
                                                   ("Content-Disposition", #"attachment; filename="\#(filename()).csv""#)],
                            body: csv.bytes)
    }
}

/// The part of a CSV file name that says which hours it holds: `2026-11-20-to-2026-11-27`
/// (`to` excluded, as in the query), a bound not at midnight with its hour (`2026-11-20T10`),
/// `since-…` or `until-…` for a range open on one side, `all-time` for all of it.
func fileNameRange(_ range: HourRange) -> String {
    func name(_ hour: Hour) -> String {
        let text = hour.description  // 2026-11-20T10:00:00Z
        return hour == hour.startOfDay ? String(text.prefix(10)) : String(text.prefix(13))
    }
    switch (range.lower == HourRange.allTime.lower, range.upper == HourRange.allTime.upper) {
    case (true, true): return "all-time"
    case (true, false): return "until-\(name(range.upper))"
    case (false, true): return "since-\(name(range.lower))"
    case (false, false): return "\(name(range.lower))-to-\(name(range.upper))"
    }
}

extension JSONWriter {
    mutating func value(_ cell: Cell) {
        switch cell {
        case .integer(let number): value(number)
        case .text(let text): value(text)
        case .flag(let flag): value(flag)
        case .hour(let hour): value(hour)
        case .null: null()
        }
    }

    /// `[{"column":cell,…},…]`: a list answer's items, one object a row.
    mutating func rows<Rows: Collection>(_ rows: Rows, _ columns: [Column<Rows.Element>]) {
        beginArray()
        for row in rows {
            beginObject()
            for column in columns {
                key(identifier: column.name)
                value(column.cell(row))
            }
            endObject()
        }
        endArray()
    }
}
