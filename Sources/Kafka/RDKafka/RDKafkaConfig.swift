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
