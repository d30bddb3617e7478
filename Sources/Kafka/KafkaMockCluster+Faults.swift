import CRdKafka

/// Faults a `KafkaMockCluster` can inject, in the domain's words (see docs/faults.md): brokers
/// going down, partition leaders and group coordinators moving, requests answered with errors
/// or late. They change how the cluster answers, never what it stores, so a correct client
/// loses and doubles nothing through any of them.
extension KafkaMockCluster {
    /// A Kafka protocol request type a fault can target.
    public enum Request: String, Sendable, CaseIterable {
        case produce, fetch, listOffsets, metadata, offsetCommit, offsetFetch, findCoordinator
        case joinGroup, heartbeat, leaveGroup, syncGroup

        /// The request's ApiKey in the Kafka protocol.
        var apiKey: Int16 {
            switch self {
            case .produce: 0
            case .fetch: 1
            case .listOffsets: 2
            case .metadata: 3
            case .offsetCommit: 8
            case .offsetFetch: 9
            case .findCoordinator: 10
            case .joinGroup: 11
            case .heartbeat: 12
            case .leaveGroup: 13
            case .syncGroup: 14
            }
        }
    }

    /// How a broker answers a request it is told to fail.
    public enum RequestError: String, Sendable, CaseIterable {
        /// Closes the connection instead of answering.
        case disconnect
        case notLeader
        case leaderNotAvailable
        case requestTimedOut
        case notCoordinator
        case coordinatorNotAvailable
        case coordinatorLoadInProgress
        case rebalanceInProgress

        var code: rd_kafka_resp_err_t {
            switch self {
            case .disconnect: RD_KAFKA_RESP_ERR__TRANSPORT
            case .notLeader: RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION
            case .leaderNotAvailable: RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE
            case .requestTimedOut: RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT
            case .notCoordinator: RD_KAFKA_RESP_ERR_NOT_COORDINATOR
            case .coordinatorNotAvailable: RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE
            case .coordinatorLoadInProgress: RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS
            case .rebalanceInProgress: RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS
            }
        }

        /// An error a client retries for `request`: what a broker says while leaders or
        /// coordinators move.
        public static func typical(for request: Request) -> RequestError {
            switch request {
            case .produce, .fetch, .listOffsets: .notLeader
            case .metadata: .requestTimedOut
            case .offsetCommit, .offsetFetch: .notCoordinator
            case .findCoordinator, .joinGroup: .coordinatorNotAvailable
            case .heartbeat, .syncGroup, .leaveGroup: .rebalanceInProgress
            }
        }
    }

    /// Broker ids, 1 through `brokers`.
    public var brokerIDs: ClosedRange<Int> { 1...brokers }

    /// Closes the broker's connections and refuses new ones until `bringUp`. Leaders stay
    /// where they are: its partitions wait for it, as with a real broker that is down only
    /// briefly.
    public func takeDown(broker: Int) throws(KafkaError) {
        try RDKafkaStatus.check(rd_kafka_mock_broker_set_down(cluster, Int32(clamping: broker)),
                                "taking down mock broker \(broker)")
    }

    /// Lets the broker accept connections again.
    public func bringUp(broker: Int) throws(KafkaError) {
        try RDKafkaStatus.check(rd_kafka_mock_broker_set_up(cluster, Int32(clamping: broker)),
                                "bringing up mock broker \(broker)")
    }

    /// Makes `broker` the leader of a partition; clients learn it from NOT_LEADER answers and
    /// fresh metadata.
    public func moveLeader(topic: String, partition: Int32, to broker: Int) throws(KafkaError) {
        try RDKafkaStatus.check(rd_kafka_mock_partition_set_leader(cluster, topic, partition, Int32(clamping: broker)),
                                "moving the leader of \(topic)/\(partition) to mock broker \(broker)")
    }

    /// Makes `broker` the coordinator of a consumer group: its members must find it again.
    public func moveCoordinator(group: String, to broker: Int) throws(KafkaError) {
        try RDKafkaStatus.check(rd_kafka_mock_coordinator_set(cluster, "group", group, Int32(clamping: broker)),
                                "moving the coordinator of group \(group) to mock broker \(broker)")
    }

    /// The next `errors.count` requests of this type, to any broker, fail with these errors in
    /// order (one request each).
    public func inject(errors: [RequestError], on request: Request) {
        var codes = errors.map(\.code)
        rd_kafka_mock_push_request_errors_array(cluster, request.apiKey, codes.count, &codes)
    }

    /// The next `count` requests of this type to `broker` are answered `delay` late (with
    /// `error`, or normally when it is nil).
    public func delay(_ request: Request, on broker: Int, by delay: Duration, count: Int,
                      error: RequestError? = nil) throws(KafkaError) {
        for _ in 0..<count {
            try RDKafkaStatus.check(
                counterpoint_rd_kafka_mock_push_error_rtt(cluster, Int32(clamping: broker), request.apiKey,
                                                          error?.code ?? RD_KAFKA_RESP_ERR_NO_ERROR, delay.clampedMilliseconds),
                "delaying \(request) requests on mock broker \(broker)")
        }
    }
}
