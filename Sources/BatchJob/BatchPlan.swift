import CounterpointCore
import EventLogs

/// Which hours a run rebuilds and which files it must read for them.
struct BatchPlan {
    /// Contiguous hour ranges to replace, ascending; each is one atomic replacement.
    var ranges: [HourRange]
    /// Work units: the files of one hour (incl. late and segment files), or one
    /// unpartitioned file. Largest first, so that two workers finish close together.
    var units: [[LogFile]]
    /// Bytes the run will read, for progress. Unpartitioned files count twice — they are read
    /// once to split them by hour and then (the part in range) again — so this is an upper bound.
    var totalBytes: Int64
    var fileCount: Int

    /// - Throws: `BatchError` when no hours can be chosen.
    init(inventory: LogInventory, from: Hour?, to: Hour?) throws {
        let closed = inventory.closedHours.sorted()
        if from != nil || to != nil {
            guard let lower = from ?? closed.first, let upper = to ?? closed.last?.advanced(by: 1) else {
                throw BatchError.noClosedHours
            }
            let range = HourRange(lower, upper)
            guard lower < upper else { throw BatchError.emptyRange(HourRange(lower, lower)) }
            ranges = [range]
        } else {
            guard !closed.isEmpty else { throw BatchError.noClosedHours }
            ranges = Coverage(closed.map { HourRange($0, $0.advanced(by: 1)) }).ranges
        }
        let target = Coverage(ranges)

        var byHour: [Hour: [LogFile]] = [:]
        var unpartitioned: [[LogFile]] = []
        for file in inventory.files {
            if let hour = file.hour {
                // Hour files of hours not being rebuilt need not be read at all.
                if target.contains(hour) { byHour[hour, default: []].append(file) }
            } else {
                unpartitioned.append([file])
            }
        }
        units = (Array(byHour.values) + unpartitioned).sorted { Self.size(of: $0) > Self.size(of: $1) }
        totalBytes = units.reduce(0) { $0 + Self.size(of: $1) } + unpartitioned.reduce(0) { $0 + Self.size(of: $1) }
        fileCount = units.reduce(0) { $0 + $1.count }
    }

    var coverage: Coverage { Coverage(ranges) }

    var hourCount: Int64 { ranges.reduce(0) { $0 + $1.count } }

    /// Adds staged per-hour files to the hour units and drops the unpartitioned units they
    /// were split from.
    mutating func mergeStaged(_ staged: [LogFile]) {
        var byHour: [Hour: [LogFile]] = [:]
        for unit in units {
            if let hour = unit.first?.hour { byHour[hour] = unit }
        }
        for file in staged {
            if let hour = file.hour { byHour[hour, default: []].append(file) }
        }
        units = byHour.values.sorted { Self.size(of: $0) > Self.size(of: $1) }
    }

    static func size(of unit: [LogFile]) -> Int64 { unit.reduce(0) { $0 + $1.size } }
}
