import CRdKafka
import Logging

/// Owns an `rd_kafka_t`, producer or consumer, and the context its callbacks reach.
/// A librdkafka property an operator's options may not change, and why.
struct FixedProperty {
    var name: String
    var value: String
    var reason: String
}

final class RDKafkaClient: @unchecked Sendable {
    // Safe to share: librdkafka's API is thread-safe for one `rd_kafka_t` apart from the calls
    // documented otherwise, and the consumer wrappers only make those from the polling thread.
    enum Kind {
        case producer, consumer
    }

    let handle: OpaquePointer
    let context: RDKafkaClientContext
    let name: String

    /// `purpose` names the client in errors ("creating consumer"). `fixed` are properties the
    /// program's guarantees rest on, with why: set among `properties`, an operator's option
    /// that changes one (by any of its names) fails here, saying so.
    init(kind: Kind, properties: [(String, String)], fixed: [FixedProperty] = [], context: RDKafkaClientContext,
         purpose: String) throws(KafkaError) {
        let config = try RDKafkaConfig(properties: properties, purpose: purpose)
        // Compared as librdkafka spells them back ("earliest" reads back as "smallest").
        let reference = try RDKafkaConfig(properties: fixed.map { ($0.name, $0.value) }, purpose: purpose)
        for property in fixed where config.value(of: property.name) != reference.value(of: property.name) {
            throw .invalidArgument("\(property.name) must stay \(property.value): \(property.reason); remove it from "
                                   + "--kafka-option and --kafka-config", context: purpose)
        }
        context.register(on: config)
        if kind == .consumer {
            config.withHandle { rd_kafka_conf_set_rebalance_cb($0, rebalanceTrampoline) }
        }
        let conf = config.handOver()
        let created = try RDKafkaStatus.withErrorBuffer(purpose) { buffer, size -> OpaquePointer? in
            let created = rd_kafka_new(kind == .producer ? RD_KAFKA_PRODUCER : RD_KAFKA_CONSUMER, conf, buffer, size)
            if created == nil { config.takeBack(conf) }
            return created
        }
        self.handle = created
        self.context = context
        self.name = String(cString: rd_kafka_name(created))
    }

    deinit {
        // Blocks until librdkafka's threads have stopped, so no callback can run afterwards
        // and `context` (released after this body) outlives every use of its pointer.
        rd_kafka_destroy(handle)
    }

    /// librdkafka connects lazily and retries forever; this asks for cluster metadata with a
    /// deadline so that a wrong or unreachable `bootstrap.servers` fails within `timeout`, and a
    /// cluster that refuses the client's TLS or credentials fails as soon as it says so.
    func verifyBrokerReachable(within timeout: Duration, servers: String, purpose: String) throws(KafkaError) {
        let deadline = ContinuousClock.now + timeout
        var code = RD_KAFKA_RESP_ERR_NO_ERROR
        repeat {
            code = askForMetadata(timeout: min(.milliseconds(500), max(.zero, deadline - .now)))
            guard code != RD_KAFKA_RESP_ERR_NO_ERROR else { return }
            // librdkafka reports why (refused, unresolvable, ...) as error events: serve them to learn it.
            rd_kafka_poll(handle, 0)
        } while ContinuousClock.now < deadline && context.refusal.withLock({ $0 }) == nil
        if let refusal = context.refusal.withLock({ $0 }) {
            throw KafkaError(code: refusal.code, message: "the Kafka cluster at \(servers) refused the connection: \(refusal.reason)",
                             context: purpose)
        }
        let reasons = context.recentErrors.withLock { $0 }
        let message = "no Kafka broker reachable at \(servers) within \(timeout)"
            + (reasons.isEmpty ? " (\(String(cString: rd_kafka_err2str(code))))" : ": " + reasons.joined(separator: "; "))
        throw KafkaError(code: code, message: message, context: purpose, isRetriable: true)
    }

    /// Asks any broker for the list of brokers: whether the cluster answers this client, TLS
    /// and authentication included.
    func askForMetadata(timeout: Duration) -> rd_kafka_resp_err_t {
        var metadata: UnsafePointer<rd_kafka_metadata>? = nil
        let code = rd_kafka_metadata(handle, 0, nil, &metadata, timeout.clampedMilliseconds)
        if let metadata { rd_kafka_metadata_destroy(metadata) }
        return code
    }

    /// The error that made this client unusable, if one did.
    func fatalClientError(purpose: String) -> KafkaError? {
        var buffer = [CChar](repeating: 0, count: 512)
        let code = rd_kafka_fatal_error(handle, &buffer, buffer.count)
        guard code != RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
        return KafkaError(code: code, message: String(nulTerminated: buffer), context: purpose, isFatal: true)
    }
}

extension Duration {
    /// librdkafka takes timeouts as `int` milliseconds.
    var clampedMilliseconds: Int32 {
        let (seconds, attoseconds) = components
        let milliseconds = seconds.multipliedReportingOverflow(by: 1000)
        guard !milliseconds.overflow else { return seconds < 0 ? 0 : Int32.max }
        return Int32(clamping: max(0, milliseconds.partialValue + attoseconds / 1_000_000_000_000_000))
    }
}
