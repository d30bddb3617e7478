/// A value bound to a statement parameter, in PostgreSQL's text format (libpq sends text
/// parameters and the server parses them with the type it inferred or the SQL casts to, e.g.
/// `$1::bigint[]`). `nil` text is SQL NULL.
public protocol PostgresParameter {
    var postgresText: String? { get }
}

extension Int64: PostgresParameter {
    public var postgresText: String? { String(self) }
}

extension Int: PostgresParameter {
    public var postgresText: String? { String(self) }
}

extension Int32: PostgresParameter {
    public var postgresText: String? { String(self) }
}

extension String: PostgresParameter {
    public var postgresText: String? { self }
}

extension Bool: PostgresParameter {
    public var postgresText: String? { self ? "t" : "f" }
}

extension Optional: PostgresParameter where Wrapped: PostgresParameter {
    public var postgresText: String? { self?.postgresText }
}

/// A one-dimensional `bigint[]` literal, `{1,2,NULL}`: the shape `unnest($1::bigint[], …)`
/// takes, which turns one parameter per column into one statement for any number of rows.
public struct PostgresInt64Array: PostgresParameter {
    public let postgresText: String?

    public init(_ values: some Collection<Int64>) {
        postgresText = Self.literal(values) { String($0) }
    }

    /// nil elements are SQL NULL.
    public init(_ values: some Collection<Int64?>) {
        postgresText = Self.literal(values) { $0.map { String($0) } ?? "NULL" }
    }

    private static func literal<C: Collection>(_ values: C, _ element: (C.Element) -> String) -> String {
        var text = "{"
        text.reserveCapacity(values.count * 8 + 2)
        for (index, value) in values.enumerated() {
            if index > 0 { text.append(",") }
            text.append(element(value))
        }
        text.append("}")
        return text
    }
}
