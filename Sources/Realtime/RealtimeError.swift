/// The one error type of the Realtime module, for its own failures; errors of Kafka
/// (`KafkaError`) and of the store (`CounterStoreError`, and the engine's `StoreFailure`) pass through unchanged.
public struct RealtimeError: Error, CustomStringConvertible, Sendable {
    public var message: String

    public var description: String { message }

    /// A call at the wrong time, such as starting a consumer twice or using a stopped one.
    static func stopped(_ message: String) -> RealtimeError {
        RealtimeError(message: message)
    }
}
