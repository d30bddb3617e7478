import CSQLite

/// The one error this module throws: SQLite's extended result code, SQLite's own message, and
/// what was being done (the SQL text or the operation, such as "open /data/batch.sqlite").
/// Only this module makes one (the memberwise initializer is internal).
public struct SQLiteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The extended result code (`sqlite3_extended_errcode`), e.g. `SQLITE_IOERR_WRITE`.
    public var extendedCode: Int32
    /// `sqlite3_errmsg` at the time of the failure (or `sqlite3_errstr` without a connection).
    public var message: String
    /// What was being done: the SQL, or a short description of the operation.
    public var operation: String

    /// The primary result code: the low byte of the extended code.
    public var primaryCode: Int32 { extendedCode & 0xff }

    /// The failures callers act on differently. The reader answers 503 for every kind that
    /// `isUnavailable`; the batch job reports `.diskFull` as such.
    public enum Kind: Sendable, Hashable {
        /// `SQLITE_BUSY` / `SQLITE_LOCKED`: another connection holds a lock past the busy timeout.
        case busy
        /// `SQLITE_FULL`: the disk (or the file-size limit) is full.
        case diskFull
        /// `SQLITE_IOERR_*`: the operating system failed a read, write, sync or lock.
        case ioError
        /// `SQLITE_CANTOPEN`: the file or its directory cannot be opened or created.
        case cannotOpen
        /// `SQLITE_READONLY`: a write on a read-only connection or file.
        case readOnly
        /// `SQLITE_CORRUPT` / `SQLITE_NOTADB`: the file is damaged or is not an SQLite database.
        case corrupt
        /// `SQLITE_CONSTRAINT_*`: a constraint of the schema rejected a write.
        case constraint
        /// `SQLITE_MISUSE` / `SQLITE_RANGE` / `SQLITE_ERROR` and the rest: usually a programming error.
        case other
    }

    public var kind: Kind {
        switch primaryCode {
        case SQLITE_BUSY, SQLITE_LOCKED: return .busy
        case SQLITE_FULL: return .diskFull
        case SQLITE_IOERR: return .ioError
        case SQLITE_CANTOPEN: return .cannotOpen
        case SQLITE_READONLY: return .readOnly
        case SQLITE_CORRUPT, SQLITE_NOTADB: return .corrupt
        case SQLITE_CONSTRAINT: return .constraint
        default: return .other
        }
    }

    /// True when the failure is about the store's environment (locks, disk, files), not about
    /// the request: a server should answer "service unavailable" rather than "bad request".
    public var isUnavailable: Bool { kind != .constraint && kind != .other }

    /// True for the failures a lack of free space causes: a full disk, or the operating system
    /// refusing to create or grow a file.
    public var mayNeedSpace: Bool { kind == .diskFull || kind == .ioError || kind == .cannotOpen }

    /// One line, as errors are printed and logged: the operation's whitespace runs (SQL spans
    /// lines) become single spaces, and a long statement (a multi-row insert of hundreds of
    /// placeholders) is cut after `operationLimit` characters.
    public var description: String {
        let name = String(cString: sqlite3_errstr(extendedCode))
        let words = operation.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        let shown = words.count > Self.operationLimit ? words.prefix(Self.operationLimit) + "…" : words
        return "SQLite error \(extendedCode) (\(name)): \(message) — while: \(shown)"
    }

    static let operationLimit = 200
}

/// Turns an SQLite return code into `SQLiteError`. `SQLITE_OK`, `SQLITE_ROW` and `SQLITE_DONE`
/// pass; every other code throws with the connection's message (which SQLite keeps per
/// connection, so this must run right after the failing call, on the same thread).
@inline(__always)
func check(_ code: Int32, _ connection: OpaquePointer?, _ operation: @autoclosure () -> String) throws(SQLiteError) {
    guard code != SQLITE_OK, code != SQLITE_ROW, code != SQLITE_DONE else { return }
    throw makeError(code, connection, operation())
}

func makeError(_ code: Int32, _ connection: OpaquePointer?, _ operation: String) -> SQLiteError {
    guard let connection else {
        return SQLiteError(extendedCode: code, message: String(cString: sqlite3_errstr(code)), operation: operation)
    }
    // The connection remembers its latest failure; trust it only when it is the failure at
    // hand (same primary code), otherwise describe the code we were given.
    let extended = sqlite3_extended_errcode(connection)
    if extended & 0xff == code & 0xff {
        return SQLiteError(extendedCode: extended, message: String(cString: sqlite3_errmsg(connection)), operation: operation)
    }
    return SQLiteError(extendedCode: code, message: String(cString: sqlite3_errstr(code)), operation: operation)
}
