/// Where on the waveform a play started, in percent: docs/openapi.yaml's
/// `min(99, ⌊100 × position_ms / duration_ms⌋)`, exact for every position and duration up to
/// 2^63 − 1 (a product that does not fit 64 bits is taken in 128, so it never overflows).
public enum WaveformBucket {
    public static let count = 100

    /// `nil` when either value is missing or out of its rule (position < 0, duration ≤ 0).
    @inlinable
    public static func of(positionMilliseconds position: Int64?, durationMilliseconds duration: Int64?) -> Int? {
        guard let position, let duration, position >= 0, duration > 0 else { return nil }
        // At or past the end: bucket 99. Below it, 100 × position < 100 × duration, so the
        // quotient is < 100 and the full-width division cannot trap.
        guard position < duration else { return count - 1 }
        // Positions below 2^63 / 100 (about 2.9 million years) multiply within 64 bits.
        if position <= Int64.max / 100 { return Int(position &* 100 / duration) }
        let product = UInt64(position).multipliedFullWidth(by: 100)
        return Int(UInt64(duration).dividingFullWidth(product).quotient)
    }
}

/// What a play says beyond its track and time, as far as counting by dimension goes: its
/// waveform bucket (nil without position or duration), its client and country (nil when
/// absent or null), and its listener (nil without `listener_id`; docs/listeners.md).
public struct PlayDimensions: Sendable, Hashable {
    public var waveformBucket: Int8?
    public var client: DimensionValue?
    public var country: DimensionValue?
    public var listenerID: Int64?

    @inlinable
    public init(waveformBucket: Int8? = nil, client: DimensionValue? = nil, country: DimensionValue? = nil,
                listenerID: Int64? = nil) {
        self.waveformBucket = waveformBucket
        self.client = client
        self.country = country
        self.listenerID = listenerID
    }

    public static let none = PlayDimensions()
}
