import Kafka

/// A consumed message copied out of librdkafka's buffers.
public struct ReceivedMessage: Hashable, Sendable {
    public var partition: Int32
    public var offset: Int64
    public var key: [UInt8]?
    public var value: [UInt8]?

    public init(partition: Int32, offset: Int64, key: [UInt8]?, value: [UInt8]?) {
        self.partition = partition
        self.offset = offset
        self.key = key
        self.value = value
    }

    /// A copy of `message`, key and value included.
    public init(_ message: KafkaMessage) {
        self.init(partition: message.partition, offset: message.offset, key: message.key.map { Array($0) },
                  value: message.value.map { Array($0) })
    }

    public var keyText: String? { key.map { String(decoding: $0, as: UTF8.self) } }
}
