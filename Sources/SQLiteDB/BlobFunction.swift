import CSQLite

/// What a blob function computes from its two arguments: writes the result into `out` (which
/// holds the previous call's result; replace it) and returns true, or returns false when the
/// arguments are malformed — the statement then fails with the function's message.
public typealias BlobFunctionBody = (_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer,
                                     _ out: inout [UInt8]) -> Bool

extension Database {
    /// Registers the SQL function `name(a, b)` on this connection: two blobs in (NULL reads as
    /// the empty blob), one blob out, computed by `body` in Swift. Deterministic, so SQLite may
    /// use it in upserts and indexes. For storage formats SQL cannot combine itself, such as
    /// merging two encoded histograms in `ON CONFLICT … DO UPDATE`.
    ///
    /// `body` runs on the connection's thread, inside the statement that calls it.
    public func defineBlobFunction(_ name: String, failureMessage: String, _ body: @escaping BlobFunctionBody) throws {
        let box = Unmanaged.passRetained(BlobFunction(body: body, failureMessage: failureMessage)).toOpaque()
        let code = sqlite3_create_function_v2(
            handle, name, 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, box,
            { context, _, arguments in
                let function = Unmanaged<BlobFunction>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue()
                function.call(context, arguments!)
            },
            nil, nil,
            { pointer in
                if let pointer { Unmanaged<BlobFunction>.fromOpaque(pointer).release() }
            })
        // On failure SQLite has already called the destructor, which released the box.
        try check(code, handle, "define SQL function \(name)")
    }
}

/// The Swift side of one registered function, owned by SQLite (released by its destructor).
private final class BlobFunction {
    let body: BlobFunctionBody
    let failureMessage: String
    /// Reused across calls: SQLite copies the result (SQLITE_TRANSIENT) before the next call.
    var result: [UInt8] = []

    init(body: @escaping BlobFunctionBody, failureMessage: String) {
        self.body = body
        self.failureMessage = failureMessage
    }

    func call(_ context: OpaquePointer?, _ arguments: UnsafeMutablePointer<OpaquePointer?>) {
        let ok = body(Self.blob(arguments[0]), Self.blob(arguments[1]), &result)
        guard ok else {
            sqlite3_result_error(context, failureMessage, -1)
            return
        }
        if result.isEmpty {
            sqlite3_result_zeroblob(context, 0)
        } else {
            result.withUnsafeBytes { bytes in
                sqlite3_result_blob(context, bytes.baseAddress, Int32(bytes.count), counterpoint_sqlite_transient())
            }
        }
    }

    private static func blob(_ value: OpaquePointer?) -> UnsafeRawBufferPointer {
        // sqlite3_value_blob before sqlite3_value_bytes, as SQLite's documentation advises.
        guard let pointer = sqlite3_value_blob(value) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: pointer, count: Int(sqlite3_value_bytes(value)))
    }
}
