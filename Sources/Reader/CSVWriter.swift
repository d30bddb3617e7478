import CounterpointCore

/// RFC 4180 text: a header row of the column names, then a record a row, CRLF after each.
/// A field is quoted when it holds a comma, a quote, CR or LF (its quotes doubled); a null is
/// an empty field. Values are written as sent — nothing is prefixed or changed.
struct CSVWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    mutating func table<Rows: Collection>(_ rows: Rows, _ columns: [Column<Rows.Element>]) {
        for (index, column) in columns.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: column.name)
        }
        endRecord()
        for row in rows {
            for (index, column) in columns.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                field(column.cell(row))
            }
            endRecord()
        }
    }

    private mutating func endRecord() { bytes.append(contentsOf: [UInt8(ascii: "\r"), UInt8(ascii: "\n")]) }

    private mutating func field(_ cell: Cell) {
        switch cell {
        case .integer(let number): bytes.append(contentsOf: String(number).utf8)
        case .flag(let flag): bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        case .hour(let hour): UTCTime.append(epochSeconds: hour.epochSeconds, to: &bytes)
        case .null: break
        case .text(let text):
            let special: (UInt8) -> Bool = { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0D || $0 == 0x0A }
            guard text.utf8.contains(where: special) else {
                bytes.append(contentsOf: text.utf8)
                return
            }
            bytes.append(UInt8(ascii: "\""))
            for byte in text.utf8 {
                if byte == UInt8(ascii: "\"") { bytes.append(byte) }
                bytes.append(byte)
            }
            bytes.append(UInt8(ascii: "\""))
        }
    }
}
