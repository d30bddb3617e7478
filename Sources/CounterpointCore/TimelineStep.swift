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
