/// One partition of one topic.
public struct KafkaPartition: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var topic: String
    public var id: Int32

    public init(topic: String, id: Int32) {
        self.topic = topic
        self.id = id
    }

    /// "plays/3", the form used in logs and error contexts.
    public var description: String { "\(topic)/\(id)" }

    public static func < (lhs: KafkaPartition, rhs: KafkaPartition) -> Bool {
        (lhs.topic, lhs.id) < (rhs.topic, rhs.id)
    }
}
