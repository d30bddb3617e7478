/// Which layer a merged count came from.
public enum CountSource: String, Sendable {
    case batch, realtime, mixed
}

/// Bucket width of a timeline.
public enum TimelineStep: String, Sendable, CaseIterable {
    case hour, day

    public var hours: Int64 { self == .hour ? 1 : 24 }

    /// The start of the bucket containing `hour`.
    public func bucketStart(of hour: Hour) -> Hour { self == .hour ? hour : hour.startOfDay }
}

/// The merge rule of docs/architecture.md, stated once so that every query and every test agrees on it:
/// a covered hour counts its batch plays (0 without a batch row, whatever the realtime layer
/// says); any other hour counts its realtime plays.
public enum MergeRule {
    @inlinable
    public static func plays(covered: Bool, batch: Int64?, realtime: Int64?) -> Int64 {
        covered ? (batch ?? 0) : (realtime ?? 0)
    }
}
