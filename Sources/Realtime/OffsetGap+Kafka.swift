import CounterpointCore
import Kafka

extension OffsetGap {
    init(_ reset: KafkaOffsetReset, detectedAt: Int64) {
        self.init(topic: reset.partition.topic, partition: reset.partition.id, expectedOffset: reset.expectedOffset,
                  resumedOffset: reset.resumedOffset, detectedAt: detectedAt)
    }
}
