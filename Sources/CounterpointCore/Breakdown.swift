/// docs/openapi.yaml's breakdown order: every value with plays > 0 by plays descending, then value
/// ascending by UTF-8 bytes; `nil` (plays without the field: `totalPlays` minus the values'
/// plays) last, when it has any.
public enum Breakdown {
    public static func ordered(_ values: [(value: DimensionValue, plays: Int64)], totalPlays: Int64)
        -> [(value: DimensionValue?, plays: Int64)] {
        let positive = values.filter { $0.plays > 0 }
            .sorted { $0.plays != $1.plays ? $0.plays > $1.plays : $0.value < $1.value }
        var entries: [(value: DimensionValue?, plays: Int64)] = positive.map { ($0.value, $0.plays) }
        let withValue = positive.reduce(Int64(0)) { $0 &+ $1.plays }
        if totalPlays > withValue { entries.append((nil, totalPlays - withValue)) }
        return entries
    }
}
