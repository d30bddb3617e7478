import CounterpointCore

/// Which type each synthetic event has (SPEC §11): plays, and beside them the other signals at
/// realistic rates, retractions included.
///
/// At the realistic share of 9 % of all events, in thousandths of all events (and in the
/// 65,536ths the synthesizer draws, for a share of 0.09):
///
/// | type | ‰ of events | of 65,536 |
/// | --- | --- | --- |
/// | `like` | 40 | 2,621 |
/// | `unlike` | 4 | 263 |
/// | `repost` | 10 | 655 |
/// | `unrepost` | 1 | 65 |
/// | `comment` | 15 | 984 |
/// | `comment_deleted` | 2 | 131 |
/// | `download` | 18 | 1,179 |
/// | (all but plays) | 90 | 5,898 |
///
/// (The 65,536ths are rounded cumulatively, in the table's order, so that they add up to
/// round(share × 65,536) exactly.)
///
/// Another `signalShare` scales every part alike. The type is read from 16 bits of a random
/// number each event draws anyway (see `EventSynthesizer`), so adding the mix draws nothing
/// more: with a share of 0 the stream is the plays-only stream, byte for byte, and with any
/// share every event keeps its id, track, listener, time, client, country and creator — only
/// its type and (for the non-plays) the presence of its position change.
public struct SignalMix: Sendable {
    /// The share of events that are not plays in real traffic, about: the `perMille` parts' sum.
    public static let realisticShare = 0.09

    /// Each other type's part of all events at `realisticShare`, in thousandths, in the order the
    /// 65,536ths are laid out.
    public static let perMille: [(type: EventType, parts: Int)] = [
        (.like, 40), (.unlike, 4), (.repost, 10), (.unrepost, 1), (.comment, 15), (.commentDeleted, 2), (.download, 18),
    ]

    /// Upper bounds, in 65,536ths, of each `perMille` type's interval (contiguous from 0, in that
    /// order); an interval of a signal turned off is drawn as a play.
    let bounds: [(upper: UInt64, type: EventType)]
    /// Draws at or above it are plays: the last bound.
    let otherTypesBound: UInt64

    public init(share: Double, signals: Set<Signal>) {
        let totalParts = Double(Self.perMille.reduce(0) { $0 + $1.parts })
        var cumulative = 0
        bounds = Self.perMille.map { type, parts in
            // Cumulative rounding: the intervals tile exactly round(share × 65,536).
            cumulative += parts
            let upper = UInt64((Double(cumulative) / totalParts * share * 65_536).rounded())
            return (min(upper, 65_536), signals.contains(type.signal) ? type : .play)
        }
        otherTypesBound = bounds.last?.upper ?? 0
    }

    /// The type of the event whose 16-bit draw is `draw` (0…65,535).
    @inline(__always)
    func type(draw: UInt64) -> EventType {
        guard draw < otherTypesBound else { return .play }
        for bound in bounds where draw < bound.upper { return bound.type }
        return .play
    }

    /// The exact fraction of events of `type` this mix makes (after rounding to 65,536ths).
    public func fraction(of type: EventType) -> Double {
        var lower: UInt64 = 0, count: UInt64 = 0
        for bound in bounds {
            if bound.type == type { count += bound.upper - lower }
            lower = bound.upper
        }
        if type == .play { count += 65_536 - otherTypesBound }
        return Double(count) / 65_536
    }
}

extension GeneratorConfiguration {
    /// The mix of event types of `signalShare` and `signals`.
    public var signalMix: SignalMix { SignalMix(share: signalShare, signals: signals) }
}
