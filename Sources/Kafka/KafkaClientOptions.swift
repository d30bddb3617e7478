import Foundation

/// librdkafka properties the operator gives (`--kafka-option key=value`, `--kafka-config FILE`),
/// as `kcat -X` and `kcat -F` take them: what reaches a secured cluster (`security.protocol`,
/// `sasl.*`, `ssl.*`). They are set after the program's own settings and in the order given,
/// so each overrides a default of the same name and the last of two wins. librdkafka checks
/// them when a client is created: an unknown property or a bad value fails there with its message.
///
/// Values of secret properties (`isSecret`) never appear in a description or an error.
public struct KafkaClientOptions: Sendable, Equatable, CustomStringConvertible {
    public struct Property: Sendable, Equatable {
        public var name: String
        public var value: String
    }

    public private(set) var properties: [Property] = []

    public init() {}

    public init(_ properties: [(String, String)]) {
        self.properties = properties.map { Property(name: $0.0, value: $0.1) }
    }

    public var isEmpty: Bool { properties.isEmpty }

    public mutating func set(_ name: String, _ value: String) {
        properties.append(Property(name: name, value: value))
    }

    /// Adds one `key=value` argument. The error names the argument by position, never its
    /// text, which may hold a secret.
    public mutating func add(argument: String, describedAs place: String) throws(KafkaError) {
        guard let (name, value) = Self.split(argument) else {
            throw .invalidArgument("\(place) is not key=value", context: "reading Kafka options")
        }
        set(name, value)
    }

    /// Adds the properties of a `kcat -F` file: `key=value` lines; blank lines and lines
    /// starting with `#` are skipped; whitespace around keys and values is dropped.
    public mutating func add(fileAt path: String) throws(KafkaError) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            let reason = (error as NSError).localizedFailureReason ?? "\(error.localizedDescription)"
            throw .invalidArgument("cannot read \(path): \(reason)", context: "reading Kafka options")
        }
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            try add(argument: trimmed, describedAs: "\(path):\(index + 1)")
        }
    }

    private static func split(_ argument: String) -> (String, String)? {
        guard let equals = argument.firstIndex(of: "=") else { return nil }
        let name = argument[..<equals].trimmingCharacters(in: .whitespaces)
        let value = argument[argument.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { return nil }
        return (name, value)
    }

    /// Whether a property's value is a credential: any name with `password` or `secret` in it
    /// (`sasl.password`, `ssl.key.password`, `ssl.keystore.password`,
    /// `sasl.oauthbearer.client.secret`), a private key given inline (`ssl.key.pem`, `ssl_key`),
    /// and the OAUTHBEARER configuration, which may embed a token.
    public static func isSecret(_ name: String) -> Bool {
        let name = name.lowercased()
        if name.contains("password") || name.contains("secret") || name == "sasl.oauthbearer.config" { return true }
        let parts = name.split(whereSeparator: { $0 == "." || $0 == "_" })
        // A key, but not where one is: `ssl.key.location` names a file.
        return parts.contains("key") && parts.last != "location"
    }

    /// The value as messages may show it.
    public static func displayValue(name: String, value: String) -> String {
        isSecret(name) ? "***" : value
    }

    /// `name=value, …` with every secret value replaced by `***`.
    public var description: String {
        properties.map { "\($0.name)=\(Self.displayValue(name: $0.name, value: $0.value))" }.joined(separator: ", ")
    }
}

extension [(String, String)] {
    /// The program's settings (sorted, so a bad one is reported the same way every run) and
    /// then the operator's options, in the order librdkafka receives them.
    static func librdkafka(_ defaults: [String: String], then options: KafkaClientOptions) -> [(String, String)] {
        defaults.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } + options.properties.map { ($0.name, $0.value) }
    }
}
