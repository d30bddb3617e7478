import Scratch

/// A fresh directory for `body`, given as a path, removed when `body` ends.
func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    try Scratch.withTemporaryDirectory("sqlitedb-tests") { try body($0.path) }
}
