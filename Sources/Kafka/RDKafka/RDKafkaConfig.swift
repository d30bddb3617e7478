import CRdKafka

/// Owns an `rd_kafka_conf_t` until `rd_kafka_new` takes it over.
final class RDKafkaConfig {
    private var handle: OpaquePointer?

    /// Sets `properties` in order, so a later one overrides an earlier one of the same name.
    init(properties: [(String, String)], purpose: String) throws(KafkaError) {
        handle = rd_kafka_conf_new()
        for (name, value) in properties {
            try set(name, value, purpose: purpose)
        }
    }

    deinit {
        if let handle { rd_kafka_conf_destroy(handle) }
    }

    func set(_ name: String, _ value: String, purpose: String) throws(KafkaError) {
        // librdkafka's message names the property, never its value; ours hides secret values too.
        let shown = KafkaClientOptions.displayValue(name: name, value: value)
        try RDKafkaStatus.withErrorBuffer("\(purpose): setting \(name)=\(shown)") { buffer, size in
            rd_kafka_conf_set(handle, name, value, buffer, size) == RD_KAFKA_CONF_OK ? () : nil
        }
    }

    /// The value a property has now, by any of its names (librdkafka resolves aliases), or nil
    /// for a property librdkafka does not know.
    func value(of name: String) -> String? {
        var size = 0
        guard rd_kafka_conf_get(handle, name, nil, &size) == RD_KAFKA_CONF_OK, size > 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: size)
        guard rd_kafka_conf_get(handle, name, &buffer, &size) == RD_KAFKA_CONF_OK else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Lends the handle for callback registration before it is handed over.
    func withHandle<Result>(_ body: (OpaquePointer) -> Result) -> Result {
        body(handle!)
    }

    /// Gives up ownership: `rd_kafka_new` frees the configuration when it succeeds.
    func handOver() -> OpaquePointer {
        defer { handle = nil }
        return handle!
    }

    /// Takes ownership back after `rd_kafka_new` failed, which leaves the configuration to the caller.
    func takeBack(_ returned: OpaquePointer) {
        handle = returned
    }
}
