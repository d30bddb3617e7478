import CRdKafka

/// The one error type of the Kafka module: librdkafka's code and message plus what was being done.
public struct KafkaError: Error, CustomStringConvertible, Sendable {
    /// librdkafka's `rd_kafka_resp_err_t`: negative for client-side errors, positive for broker errors.
    public var code: Int32
    /// librdkafka's symbolic name for `code`, such as `_TRANSPORT` or `OFFSET_OUT_OF_RANGE`.
    public var name: String
    /// The most specific text available: librdkafka's own message when it gave one, else the code's description.
    public var message: String
    /// What the module was doing, such as "creating consumer" or "producing to plays".
    public var context: String
    /// The client instance cannot be used any more (librdkafka's fatal errors).
    public var isFatal: Bool
    /// Doing the same thing again may succeed.
    public var isRetriable: Bool

    public var description: String { "\(context): \(message) (\(name))" }

    init(code: rd_kafka_resp_err_t, message: String? = nil, context: String, isFatal: Bool = false, isRetriable: Bool? = nil) {
        self.code = code.rawValue
        self.name = String(cString: rd_kafka_err2name(code))
        self.message = message ?? String(cString: rd_kafka_err2str(code))
        self.context = context
        self.isFatal = isFatal || code == RD_KAFKA_RESP_ERR__FATAL
        self.isRetriable = isRetriable ?? KafkaError.retriableCodes.contains(code)
    }

    /// A caller's mistake that librdkafka never saw.
    static func invalidArgument(_ message: String, context: String) -> KafkaError {
        KafkaError(code: RD_KAFKA_RESP_ERR__INVALID_ARG, message: message, context: context)
    }

    /// A call at the wrong time, such as running a consumer twice.
    static func wrongState(_ message: String, context: String) -> KafkaError {
        KafkaError(code: RD_KAFKA_RESP_ERR__STATE, message: message, context: context)
    }

    /// Takes ownership of an `rd_kafka_error_t` and destroys it.
    init(consuming error: OpaquePointer, context: String) {
        defer { rd_kafka_error_destroy(error) }
        self.init(
            code: rd_kafka_error_code(error),
            message: String(cString: rd_kafka_error_string(error)),
            context: context,
            isFatal: rd_kafka_error_is_fatal(error) != 0,
            isRetriable: rd_kafka_error_is_retriable(error) != 0
        )
    }

    /// Errors that `rd_kafka_resp_err_t` alone marks as transient; `rd_kafka_error_t` says so itself.
    private static let retriableCodes: Set<rd_kafka_resp_err_t> = [
        RD_KAFKA_RESP_ERR__TRANSPORT, RD_KAFKA_RESP_ERR__TIMED_OUT, RD_KAFKA_RESP_ERR__QUEUE_FULL,
        RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN, RD_KAFKA_RESP_ERR__MSG_TIMED_OUT,
        RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
        RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE, RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS,
        RD_KAFKA_RESP_ERR_NOT_COORDINATOR, RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE,
        RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS, RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION,
    ]
}

/// The one place where librdkafka status codes become `KafkaError`s.
enum RDKafkaStatus {
    static func check(_ code: rd_kafka_resp_err_t, _ context: @autoclosure () -> String) throws(KafkaError) {
        guard code != RD_KAFKA_RESP_ERR_NO_ERROR else { return }
        throw KafkaError(code: code, context: context())
    }

    /// For calls returning `rd_kafka_error_t *` (NULL on success), which this takes ownership of.
    static func check(_ error: OpaquePointer?, _ context: @autoclosure () -> String) throws(KafkaError) {
        guard let error else { return }
        throw KafkaError(consuming: error, context: context())
    }

    /// For calls that report failure by writing into a caller-supplied `errstr` buffer.
    static func withErrorBuffer<Result>(
        code: rd_kafka_resp_err_t = RD_KAFKA_RESP_ERR__INVALID_ARG,
        _ context: @autoclosure () -> String,
        _ body: (UnsafeMutablePointer<CChar>, Int) -> Result?
    ) throws(KafkaError) -> Result {
        var buffer = [CChar](repeating: 0, count: 512)
        let result = buffer.withUnsafeMutableBufferPointer { body($0.baseAddress!, $0.count) }
        guard let result else {
            throw KafkaError(code: code, message: String(nulTerminated: buffer), context: context())
        }
        return result
    }
}

extension String {
    /// Reads the text librdkafka wrote into a caller-supplied `errstr` buffer.
    init(nulTerminated buffer: [CChar]) {
        self = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
