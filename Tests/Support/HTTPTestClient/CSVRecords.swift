/// RFC 4180 text as records of fields, written from the RFC rather than from the reader's writer:
/// records end with CRLF; a quoted field may hold commas, CR, LF and doubled quotes.
public enum CSVRecords {
    public static func parse(_ text: String) throws -> [[String]] {
        var records: [[String]] = []
        var record: [String] = []
        var field = ""
        var quoted = false
        var characters = Array(text.unicodeScalars)[...]
        while let character = characters.popFirst() {
            if quoted {
                if character != "\"" {
                    field.unicodeScalars.append(character)
                } else if characters.first == "\"" {
                    field.unicodeScalars.append("\"")
                    characters.removeFirst()
                } else {
                    quoted = false
                }
                continue
            }
            switch character {
            case "\"" where field.isEmpty: quoted = true
            case ",": record.append(field); field = ""
            case "\r":
                guard characters.popFirst() == "\n" else { throw TestClientError(description: "CR without LF in CSV: \(text.prefix(200))") }
                record.append(field); field = ""
                records.append(record); record = []
            default: field.unicodeScalars.append(character)
            }
        }
        guard record.isEmpty, field.isEmpty, !quoted else { throw TestClientError(description: "unterminated last CSV record: \(text.suffix(200))") }
        return records
    }
}
