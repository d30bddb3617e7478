import Foundation

/// A fresh directory under the system's temporary directory, named `<purpose>-<UUID>`, removed
/// with everything in it when the object goes away. The one way tests make scratch space.
public final class TemporaryDirectory {
    public let url: URL
    public var path: String { url.path }

    public init(_ purpose: String = "counterpoint-tests") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(purpose)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// A `TemporaryDirectory` for `body`, removed when `body` returns or throws.
public func withTemporaryDirectory<T>(_ purpose: String = "counterpoint-tests", _ body: (URL) throws -> T) throws -> T {
    let directory = try TemporaryDirectory(purpose)
    return try withExtendedLifetime(directory) { try body(directory.url) }
}

/// A `TemporaryDirectory` for `body`, removed when `body` returns or throws.
public func withTemporaryDirectory<T>(_ purpose: String = "counterpoint-tests", _ body: (URL) async throws -> T) async throws -> T {
    let directory = try TemporaryDirectory(purpose)
    defer { withExtendedLifetime(directory) {} }
    return try await body(directory.url)
}
