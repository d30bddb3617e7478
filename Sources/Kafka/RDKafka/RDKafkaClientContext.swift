import CRdKafka
import Logging
import Runtime

/// What librdkafka's callbacks reach through the configuration's opaque pointer.
///
/// The owning `RDKafkaClient` keeps this alive until after `rd_kafka_destroy` returns, so the
/// unretained pointer handed to librdkafka never dangles.
final class RDKafkaClientContext: @unchecked Sendable {
    // Safe to share: `logger` and `connection` are immutable (the latter locks its own state);
    // `deliveries`, `recentErrors` and `refusal` are locked;
    // `rebalance` is set and called only on the consumer's polling thread, because librdkafka
    // calls the rebalance callback from inside the poll and close calls made on that thread.
    let logger: Logger
    /// Producer only: where delivery reports are counted.
    let deliveries: Locked<DeliveryStatistics>?
    /// The last few distinct error events, to explain a failure that librdkafka reports only by code.
    let recentErrors = Locked<[String]>([])
    /// The first error event saying that the cluster refuses this client's TLS or credentials:
    /// retrying will not help, so starting fails at once.
    let refusal = Locked<(code: rd_kafka_resp_err_t, reason: String)?>(nil)
    /// Where connection problems are reported, if anywhere.
    let connection: KafkaConnectionWatch?
    var rebalance: ((RDKafkaRebalance) -> Void)?
    /// The embedded cluster the client talks to, if it is one: held here, it stops only after
    /// `rd_kafka_destroy` has returned, so the client never sees it go (see `RDKafkaClient.deinit`).
    let cluster: KafkaMockCluster?

    init(logger: Logger, deliveries: Locked<DeliveryStatistics>? = nil, healthReport: KafkaHealthReport? = nil,
         cluster: KafkaMockCluster? = nil) {
        self.logger = logger
        self.deliveries = deliveries
        self.connection = healthReport.map(KafkaConnectionWatch.init)
        self.cluster = cluster
    }

    var unretainedPointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    static func from(_ opaque: UnsafeMutableRawPointer?) -> RDKafkaClientContext? {
        opaque.map { Unmanaged<RDKafkaClientContext>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Installs the callbacks every client wants: logs and asynchronous errors.
    func register(on config: RDKafkaConfig) {
        config.withHandle { conf in
            rd_kafka_conf_set_opaque(conf, unretainedPointer)
            rd_kafka_conf_set_log_cb(conf, logTrampoline)
            rd_kafka_conf_set_error_cb(conf, errorTrampoline)
            if deliveries != nil {
                rd_kafka_conf_set_dr_msg_cb(conf, deliveryTrampoline)
            }
        }
    }
}

/// A rebalance as librdkafka announces it, before the consumer reacts with assign/unassign.
enum RDKafkaRebalance {
    case assign([KafkaPartition])
    case revoke([KafkaPartition], lost: Bool)
    case failed(KafkaError)
}

// Trampolines: C function pointers that find the context and do nothing else of substance.

private func logTrampoline(_ client: OpaquePointer?, _ level: Int32, _ facility: UnsafePointer<CChar>?, _ text: UnsafePointer<CChar>?) {
    guard let client, let context = RDKafkaClientContext.from(rd_kafka_opaque(client)) else { return }
    context.logger.log(
        level: Logger.Level(syslogLevel: level),
        "\(text.map { String(cString: $0) } ?? "")",
        metadata: [
            "kafka.facility": "\(facility.map { String(cString: $0) } ?? "")",
            "kafka.client": "\(String(cString: rd_kafka_name(client)))",
        ]
    )
}

private func errorTrampoline(_ client: OpaquePointer?, _ code: Int32, _ reason: UnsafePointer<CChar>?, _ opaque: UnsafeMutableRawPointer?) {
    guard let context = RDKafkaClientContext.from(opaque) else { return }
    let reason = reason.map { String(cString: $0) } ?? ""
    let error = rd_kafka_resp_err_t(rawValue: code)
    context.recentErrors.withLock { recent in
        recent.removeAll { $0 == reason }
        recent.append(reason)
        if recent.count > 3 { recent.removeFirst() }
    }
    let level: Logger.Level = error == RD_KAFKA_RESP_ERR__FATAL ? .error : .warning
    context.logger.log(level: level, "\(reason)", metadata: ["kafka.error": "\(String(cString: rd_kafka_err2name(error)))"])
    if KafkaConnectionWatch.isRefusal(error, reason: reason) {
        context.refusal.withLock { $0 = $0 ?? (error, reason) }
    }
    context.connection?.failed(error, reason: reason)
}

private func deliveryTrampoline(_ client: OpaquePointer?, _ message: UnsafePointer<rd_kafka_message_t>?, _ opaque: UnsafeMutableRawPointer?) {
    guard let message, let context = RDKafkaClientContext.from(opaque), let deliveries = context.deliveries else { return }
    // librdkafka stamps every message when it is produced, so its latency costs no clock read of ours.
    let latencyMicroseconds = rd_kafka_message_latency(message)
    let error = message.pointee.err
    deliveries.withLock { statistics in
        if error == RD_KAFKA_RESP_ERR_NO_ERROR {
            statistics.delivered += 1
            if latencyMicroseconds >= 0 { statistics.latency.record(microseconds: UInt64(latencyMicroseconds)) }
        } else {
            statistics.failuresByError[String(cString: rd_kafka_err2name(error)), default: 0] += 1
        }
    }
    // A delivery is the cluster answering.
    if error == RD_KAFKA_RESP_ERR_NO_ERROR { context.connection?.reachable() }
}

func rebalanceTrampoline(_ client: OpaquePointer?, _ code: rd_kafka_resp_err_t, _ partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?, _ opaque: UnsafeMutableRawPointer?) {
    guard let client, let context = RDKafkaClientContext.from(opaque) else { return }
    let listed = partitions.map(RDKafkaTopicPartitionList.partitions(in:)) ?? []
    let event: RDKafkaRebalance
    switch code {
    case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
        event = .assign(listed)
    case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS:
        event = .revoke(listed, lost: rd_kafka_assignment_lost(client) != 0)
    default:
        event = .failed(KafkaError(code: code, context: "rebalancing"))
    }
    if let rebalance = context.rebalance {
        rebalance(event)
    } else {
        // No run is listening: a consumer destroyed without running leaves the group here.
        _ = rd_kafka_assign(client, nil)
    }
}

extension Logger.Level {
    /// librdkafka logs with syslog severities.
    init(syslogLevel: Int32) {
        switch syslogLevel {
        case ...2: self = .critical
        case 3: self = .error
        case 4: self = .warning
        case 5: self = .notice
        case 6: self = .info
        default: self = .debug
        }
    }
}
