import CounterpointCore

/// Misuse of a store, or a store file this program cannot use.
public enum CounterStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file was written by a newer Counterpoint (its schema version is higher than known).
    case schemaTooNew(path: String, found: Int, supported: Int)
    /// The data directory could not be created.
    case cannotCreateDirectory(path: String, reason: String)
    /// A batch run wrote a row for an hour outside the range it replaces.
    case rowOutsideRange(Subject, hour: Hour, range: HourRange)
    /// A row or increment with a track id below 1 or negative plays.
    case invalidRow(Subject, hour: Hour, plays: Int64)
    /// A batch run over an empty range.
    case emptyRange(HourRange)
    /// A `--store` value that names no store this program knows.
    case unsupportedStore(String)
    /// A store copy's target already holds counts (`StoreCopy`).
    case targetNotEmpty(String)
    /// A stored dimension blob that `DimensionEncoding` cannot read (a damaged file).
    case malformedDimensions(Subject)
    /// A stored listener sketch that does not decode (docs/listeners.md, "Bad bytes").
    case malformedListeners(Subject)
    /// A writer reached a PostgreSQL hot standby, which refuses writes.
    case standbyNotWritable(url: String)
    /// A reader on a PostgreSQL hot standby whose schema is not the version this program reads;
    /// a standby cannot be migrated (its primary must be).
    case standbySchemaMismatch(url: String, found: Int, needed: Int)

    /// Stored bytes that do not decode (a damaged store): the answer that needed them fails.
    public var isDamagedData: Bool {
        switch self {
        case .malformedDimensions, .malformedListeners: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case let .schemaTooNew(path, found, supported):
            return "\(path) has schema version \(found) but this program knows versions up to \(supported); use a newer counterpoint"
        case let .cannotCreateDirectory(path, reason):
            return "cannot create data directory \(path): \(reason)"
        case let .rowOutsideRange(subject, hour, range):
            return "batch row for \(subject) at \(hour) is outside the replaced range \(range)"
        case let .invalidRow(subject, hour, plays):
            return "invalid counter row: \(subject), hour \(hour), plays \(plays)"
        case let .emptyRange(range):
            return "batch range \(range) is empty"
        case let .targetNotEmpty(target):
            return "\(target) already holds counts; copy into an empty database"
        case let .unsupportedStore(value):
            return "unsupported store \"\(value)\": give a postgresql:// or postgres:// connection URI, or nothing for SQLite under the data directory"
        case let .malformedDimensions(subject):
            return "the stored dimension counts of \(subject) are malformed"
        case let .malformedListeners(subject):
            return "a stored listener sketch of \(subject) is malformed"
        case let .standbyNotWritable(url):
            return "\(url) reached a hot standby (read-only); consume, run and batch write: give the primary, or every host with target_session_attrs=read-write"
        case let .standbySchemaMismatch(url, found, needed) where found < needed:
            return "\(url) is a hot standby with schema version \(found) but this program needs \(needed); a standby is never migrated: start consume, run or batch on its primary first"
        case let .standbySchemaMismatch(url, found, needed):
            return "\(url) is a hot standby with schema version \(found) but this program knows versions up to \(needed); use a newer counterpoint"
        }
    }
}
