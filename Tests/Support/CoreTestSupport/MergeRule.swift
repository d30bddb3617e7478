import CounterpointCore

/// The merge rule of docs/architecture.md, stated once for every test's oracle (the reader applies
/// it through `MergePlan`):
/// a covered hour counts its batch plays (0 without a batch row, whatever the realtime layer
/// says); any other hour counts its realtime plays.
public enum MergeRule {
    @inlinable
    public static func plays(covered: Bool, batch: Int64?, realtime: Int64?) -> Int64 {
        covered ? (batch ?? 0) : (realtime ?? 0)
    }
}
