import CPostgres

extension PostgresConnection {
    /// Runs `sql`, a `COPY … FROM STDIN (FORMAT binary)`, with the rows `body` writes into the
    /// `PostgresCopyRows` it is given (streamed to the server as they fill a buffer), and
    /// returns the number of rows the server took.
    ///
    /// Bulk loads go this way instead of array parameters: the rows travel in PostgreSQL's
    /// binary COPY format (every value as it is stored: no text, no array to build and decode),
    /// in one stream, and the server adds them without planning or executing a statement per
    /// batch. A row the server refuses (a type or constraint error) fails the whole COPY with
    /// its `PostgresError`; when `body` throws, the COPY is cancelled and `body`'s error
    /// rethrown. Either way nothing of it is kept, and an enclosing transaction is aborted (the
    /// caller's `write` rolls it back).
    @discardableResult
    public func copyIn(_ sql: String, _ body: (inout PostgresCopyRows) throws -> Void) throws -> Int {
        _ = try check(PQexec(handle, sql), operation: sql, accepting: [PGRES_COPY_IN])
        var rows = PostgresCopyRows { [handle] bytes in
            bytes.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { PQputCopyData(handle, $0.baseAddress, Int32($0.count)) == 1 }
            }
        }
        do {
            try body(&rows)
            try rows.finish()
        } catch is PostgresCopyRows.Refused {
            // libpq stops taking data when the server has ended the COPY with an error (or the
            // connection broke): the COPY's result says which.
            return try endCopy(sql, cancelling: nil)
        } catch {
            // The server discards a COPY ended with a message; its error result is not the news.
            _ = try? endCopy(sql, cancelling: "COPY cancelled by the client")
            throw error
        }
        return try endCopy(sql, cancelling: nil)
    }

    /// Ends the COPY (or cancels it with `message`) and returns its row count, or throws its
    /// error: the server's, or the connection's when there is no result at all.
    private func endCopy(_ sql: String, cancelling message: String?) throws -> Int {
        // Fails when the COPY has already ended, which its result then explains.
        _ = PQputCopyEnd(handle, message)
        let result = PQgetResult(handle)
        // The connection is ready for the next command only once the results are drained.
        while let extra = PQgetResult(handle) { PQclear(extra) }
        return try check(result, operation: sql).affectedRows
    }
}

/// The rows of one binary COPY (`copyIn`), encoded as they are written in PostgreSQL's binary
/// copy format: a signature and two zero words, then each row as its field count (16 bits) and
/// each field as a 32-bit length (−1 for NULL) and its bytes in the column type's binary form
/// (big-endian integers, a `bytea` as its bytes), and a −1 field count at the end. Full
/// buffers go to the server as they fill, so memory stays at one buffer whatever the row count.
public struct PostgresCopyRows: ~Copyable {
    private static let signature: [UInt8] = Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00]
    /// Bytes sent per `PQputCopyData`.
    private static let bufferBytes = 1 << 20

    private var buffer: [UInt8] = []
    private let send: ([UInt8]) -> Bool

    init(send: @escaping ([UInt8]) -> Bool) {
        self.send = send
        buffer.reserveCapacity(Self.bufferBytes + (1 << 16))
        buffer.append(contentsOf: Self.signature)
        append(Int32(0))  // flags
        append(Int32(0))  // header extension length
    }

    /// Starts a row of `fields` fields; write exactly that many values next.
    public mutating func startRow(fields: Int) throws {
        if buffer.count >= Self.bufferBytes { try flush() }
        append(Int16(fields))
    }

    /// A `bigint` field.
    public mutating func append(bigint value: Int64) {
        append(Int32(8))
        append(value)
    }

    /// A `bytea` field holding `bytes`; nil is NULL.
    public mutating func append(bytea bytes: UnsafeRawBufferPointer?) {
        guard let bytes else { return appendNull() }
        append(Int32(bytes.count))
        buffer.append(contentsOf: bytes)
    }

    /// A NULL field.
    public mutating func appendNull() {
        append(Int32(-1))
    }

    /// Writes the trailer and sends what is buffered.
    mutating func finish() throws {
        append(Int16(-1))
        try flush()
    }

    private mutating func flush() throws {
        guard !buffer.isEmpty else { return }
        guard send(buffer) else { throw Refused() }
        buffer.removeAll(keepingCapacity: true)
    }

    @inline(__always)
    private mutating func append<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) }
    }

    /// libpq refused the data; `copyIn` turns it into the COPY's error.
    struct Refused: Error {}
}
