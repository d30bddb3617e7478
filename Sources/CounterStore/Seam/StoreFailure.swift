import PostgresDB
import SQLiteDB

/// A failure of the database engine behind the store — a full disk, an I/O error, a lock held
/// too long, a lost connection, a damaged file — whichever engine it is. The engines' own errors
/// (SQLite's extended code, PostgreSQL's SQLSTATE) conform, so callers inspect `failureKind`
/// without knowing which backend they run on; misuse of the store is `CounterStoreError`.
public protocol StoreFailure: Error, CustomStringConvertible, Sendable {
    var failureKind: StoreFailureKind { get }
}

/// The failures callers act on differently, across engines.
public enum StoreFailureKind: Sendable, Hashable {
    /// Another connection holds a lock past the wait allowed.
    case busy
    /// The disk, a file-size limit or the server's resources (memory, connections) ran out.
    case resourcesExhausted
    /// The operating system failed a read, write, sync or lock.
    case ioError
    /// The store cannot be opened or reached: a file or directory, or the server's connection.
    case unreachable
    /// A write on a read-only connection or file.
    case readOnly
    /// The file is damaged or is not a database.
    case corrupt
    /// The transaction lost a race with another and can be rerun as a whole.
    case conflict
    /// A constraint of the schema rejected a write.
    case constraint
    /// Anything else: usually a programming or schema error.
    case other

    /// True when the failure is about the store's environment, not about the request: a server
    /// answers "service unavailable" rather than "bad request".
    public var isUnavailable: Bool { self != .constraint && self != .other }
}

extension SQLiteError: StoreFailure {
    public var failureKind: StoreFailureKind {
        switch kind {
        case .busy: .busy
        case .diskFull: .resourcesExhausted
        case .ioError: .ioError
        case .cannotOpen: .unreachable
        case .readOnly: .readOnly
        case .corrupt: .corrupt
        case .constraint: .constraint
        case .other: .other
        }
    }
}

extension PostgresError: StoreFailure {
    public var failureKind: StoreFailureKind {
        switch kind {
        case .connection: .unreachable
        case .retryable: .conflict
        case .constraint: .constraint
        case .resources: .resourcesExhausted
        case .other: .other
        }
    }
}
