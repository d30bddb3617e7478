import CRdKafka
import Runtime

/// Where a Kafka client reports that it cannot reach or talk to its cluster.
///
/// librdkafka retries a refused, failed or unauthenticated connection forever and says so only
/// in error events; with this set, the first such event marks the entry `component` degraded on
/// `health` with librdkafka's reason (so `/readyz`, `/v1/status`, `/metrics` and the log show
/// it), and the entry runs again once the client has heard from the cluster: a consumed message
/// or an answered metadata request (a consumer asks every 5 s while degraded), or a delivery.
///
/// librdkafka says "all brokers down" only when, at the moment one broker goes down, its count of
/// brokers gone down equals its count of brokers; with coordinator brokers and brokers it never
/// connected to, that moment can pass unseen (a fault drill waited 30 s in vain), and under a
/// loaded test run even the failed connections went unreported for minutes. So a consumer that
/// waits with nothing to read asks the cluster for metadata every `idleProbeInterval`, and 1 s
/// after it sees a connection fail; when no broker answers twice in a row, it reports the
/// cluster unreachable itself.
public struct KafkaHealthReport: Sendable {
    /// The entry, named such as "consumer Kafka connection". Apart from the component's own
    /// entry, so that a connection problem and, say, a failing store never clear each other.
    public var handle: ComponentHealth.Handle

    public init(health: ComponentHealth, component: String) {
        handle = health.handle(for: component)
    }

    public init(_ handle: ComponentHealth.Handle) {
        self.handle = handle
    }
}

/// A client's connection problem, as reported to a `KafkaHealthReport`.
final class KafkaConnectionWatch: Sendable {
    private struct State {
        var problem: String?
        /// Whether `problem` says more than that every broker is down.
        var specific = false
        /// A connection or a probe failed and nothing was heard from the cluster since.
        var suspect = false
        var lastProbe = ContinuousClock.now
    }

    private let report: KafkaHealthReport
    private let state = Locked(State())
    /// How often to ask whether the cluster answers again while a problem is reported.
    static let probeInterval: Duration = .seconds(5)
    /// How soon to ask whether the cluster answers after a connection or a probe failed.
    static let suspicionProbeInterval: Duration = .seconds(1)
    /// How often an idle consumer asks whether the cluster answers when nothing seems wrong.
    static let idleProbeInterval: Duration = .seconds(5)
    /// How long a probe waits for a broker to answer.
    static let probeTimeout: Duration = .seconds(2)

    init(_ report: KafkaHealthReport) {
        self.report = report
    }

    /// Error events that mean the cluster cannot be used as configured or at all, as opposed
    /// to a request that failed (retried, or counted as a failed delivery). One broker closing
    /// a connection (`_TRANSPORT`, as brokers do with idle ones) is not one, unless the TLS
    /// handshake failed; losing every broker is `_ALL_BROKERS_DOWN`.
    static func isConnectionProblem(_ code: rd_kafka_resp_err_t, reason: String) -> Bool {
        if code == RD_KAFKA_RESP_ERR__TRANSPORT { return isRefusal(code, reason: reason) }
        return [RD_KAFKA_RESP_ERR__SSL, RD_KAFKA_RESP_ERR__AUTHENTICATION,
                RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN, RD_KAFKA_RESP_ERR__RESOLVE,
                RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
                RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED, RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED].contains(code)
    }

    /// The cluster refuses this client's TLS or credentials: trying again will not help.
    /// librdkafka 2.0 reports a failed TLS handshake as a transport error, saying so in its text.
    static func isRefusal(_ code: rd_kafka_resp_err_t, reason: String) -> Bool {
        [RD_KAFKA_RESP_ERR__SSL, RD_KAFKA_RESP_ERR__AUTHENTICATION, RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED].contains(code)
            || (code == RD_KAFKA_RESP_ERR__TRANSPORT && reason.contains("SSL handshake failed"))
    }

    /// Reports the first problem until the cluster answers again (librdkafka repeats it with
    /// every retry, in slightly different words), or a more specific one after "all brokers down".
    func failed(_ code: rd_kafka_resp_err_t, reason: String) {
        guard Self.isConnectionProblem(code, reason: reason) else {
            if code == RD_KAFKA_RESP_ERR__TRANSPORT { state.withLock { $0.suspect = true } }
            return
        }
        let reason = "Kafka: \(reason)"
        let specific = code != RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN
        let changed = state.withLock { state -> Bool in
            guard state.problem == nil || (specific && !state.specific) else { return false }
            state.problem = reason
            state.specific = specific
            return true
        }
        if changed { report.handle.update(.degraded(reason: reason)) }
    }

    /// The cluster answered.
    func reachable() {
        let hadProblem = state.withLock { state -> Bool in
            defer { state.problem = nil; state.specific = false; state.suspect = false }
            return state.problem != nil
        }
        if hadProblem { report.handle.update(.running) }
    }

    /// True, at most once per `probeInterval` while a problem is reported, per
    /// `suspicionProbeInterval` after a connection or a probe failed, and per `idleProbeInterval`
    /// otherwise: time to ask the cluster whether it answers.
    func probeDue() -> Bool {
        state.withLock { state in
            let interval = state.problem != nil ? Self.probeInterval
                : state.suspect ? Self.suspicionProbeInterval : Self.idleProbeInterval
            guard ContinuousClock.now - state.lastProbe >= interval else { return false }
            state.lastProbe = .now
            return true
        }
    }

    /// How the cluster answered a metadata request made because `probeDue()` said so: an answer
    /// clears any problem; no answer after a failed connection or probe means no broker can be
    /// reached, and a first unanswered probe makes the next one come sooner.
    func probed(_ code: rd_kafka_resp_err_t) {
        guard code != RD_KAFKA_RESP_ERR_NO_ERROR else { return reachable() }
        let suspected = state.withLock { state -> Bool in
            defer { state.suspect = !state.suspect && state.problem == nil }
            return state.suspect && state.problem == nil
        }
        guard suspected else { return }
        failed(RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN,
               reason: "all brokers are down or unreachable: none answered a metadata request within \(Self.probeTimeout) "
                   + "(\(String(cString: rd_kafka_err2str(code))))")
    }
}
