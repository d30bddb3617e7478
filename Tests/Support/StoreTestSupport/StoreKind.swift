import CounterStore
import Foundation
import PostgresTestServer
import Scratch

/// The backends a store-using suite runs on: every test that takes a `StoreKind` argument runs
/// once on SQLite files and once on a real PostgreSQL server (`PostgresTestServer`), through
/// the seam (`StoreBackend`) alone.
public enum StoreKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite
    case postgres

    public var description: String { rawValue }

    /// A fresh, empty store of this kind: SQLite files under `directory` (created as needed), or
    /// a new database on the shared test server. `remove(_:)` it when done.
    public func makeStore(directory: String) throws -> StoreBackend {
        switch self {
        case .sqlite: .sqlite(StoreLocation(directory: directory))
        case .postgres: .postgres(url: try PostgresTestServer.shared().makeDatabase())
        }
    }

    /// Drops a store made by `makeStore` (the caller removes its own directory).
    public static func remove(_ store: StoreBackend) {
        if case let .postgres(url) = store, let server = try? PostgresTestServer.shared() {
            server.dropDatabase(url: url)
        }
    }

    /// `makeStore` in a temporary directory for `body`, both removed afterwards. `body` gets the
    /// store and the directory (for scratch files and logs).
    public func withStore<T>(_ body: (StoreBackend, String) throws -> T) throws -> T {
        try withTemporaryDirectory("store-\(rawValue)") { directory in
            let store = try makeStore(directory: directory.path + "/data")
            defer { Self.remove(store) }
            return try body(store, directory.path)
        }
    }
}
