import CounterpointCore
import CounterStore
import EventLogs

/// Which hours a run rebuilds and which files it must read for them.
struct BatchPlan {
    /// Contiguous hour ranges to replace, ascending, all in one transaction. Empty when a
    /// default run finds nothing changed.
    var ranges: [HourRange]
    /// The files of each hour being rebuilt (incl. late and segment files).
    var hourFiles: [Hour: [LogFile]]
    /// Files whose events may be of any hour: read whenever anything is rebuilt.
    var unpartitioned: [LogFile]
    /// What each rebuilt hour is computed from, recorded with its rows.
    var sources: [HourSource]
    /// Closed hours a default run leaves alone because their files did not change.
    var skippedHours: Int64
    /// Covered hours a default run leaves alone because some of the files they were covered
    /// from are gone (log retention, a disk cleaned up): rebuilt from the files that remain,
    /// they would lose the plays of the others. `--from`/`--to` still rebuilds them.
    var hoursWithFilesGone: [Hour]
    /// Bytes the run will read, for progress.
    var totalBytes: Int64
    var fileCount: Int

    /// - Parameters:
    ///   - recorded: what past runs recorded per hour; used by the default selection only.
    /// - Throws: `BatchError` when no hours can be chosen.
    init(inventory: LogInventory, from: Hour?, to: Hour?, all: Bool, recorded: () throws -> [Hour: HourSource]) throws {
        var filesByHour: [Hour: [LogFile]] = [:]
        var unpartitioned: [LogFile] = []
        var shared = SourceFingerprint()
        for file in inventory.files {
            if let hour = file.hour {
                filesByHour[hour, default: []].append(file)
            } else {
                unpartitioned.append(file)
                shared.add(file, name: file.path[...])
            }
        }
        func fingerprint(_ hour: Hour) -> SourceFingerprint {
            var print = SourceFingerprint()
            // Inventory files are in path order, so the hour's list is too.
            for file in filesByHour[hour] ?? [] { print.add(file, name: SourceFingerprint.layoutName(file.path)) }
            print.add(shared)
            return print
        }

        let closed = inventory.closedHours
        var chosen: [Hour] = []
        var skipped: Int64 = 0
        var filesGone: [Hour] = []
        var sources: [HourSource] = []
        if from != nil || to != nil {
            guard let lower = from ?? closed.first, let upper = to ?? closed.last?.advanced(by: 1) else {
                throw BatchError.noClosedHours
            }
            guard lower < upper else { throw BatchError.emptyRange(HourRange(lower, lower)) }
            ranges = [HourRange(lower, upper)]
            var hour = lower
            while hour < upper {
                sources.append(fingerprint(hour).source(of: hour))
                hour = hour.advanced(by: 1)
            }
        } else {
            guard !closed.isEmpty else { throw BatchError.noClosedHours }
            let past = all ? [:] : try recorded()
            for hour in closed {
                let source = fingerprint(hour).source(of: hour)
                if let before = past[hour] {
                    if before.fingerprint == source.fingerprint {
                        skipped += 1
                        continue
                    }
                    // Files come (late events) and grow, or are replaced by their gzip; fewer
                    // than before means some were deleted. (Only the number of files is
                    // recorded: a late file that arrives after a deletion makes up the number,
                    // and the hour is rebuilt from what is there.)
                    if source.files < before.files {
                        filesGone.append(hour)
                        continue
                    }
                }
                chosen.append(hour)
                sources.append(source)
            }
            ranges = Coverage(chosen.map { HourRange($0, $0.advanced(by: 1)) }).ranges
        }
        skippedHours = skipped
        hoursWithFilesGone = filesGone
        self.sources = sources

        let target = Coverage(ranges)
        // Hour files of hours not being rebuilt need not be read at all.
        hourFiles = filesByHour.filter { target.contains($0.key) }
        self.unpartitioned = target.ranges.isEmpty ? [] : unpartitioned
        let readFiles = hourFiles.values.joined() + self.unpartitioned
        totalBytes = readFiles.reduce(0) { $0 + $1.size }
        fileCount = readFiles.count
    }

    /// Opens the files the run reads (`LogFile.opened()`): the inventory only `stat`ed them.
    /// Their sizes, times and inodes are taken again; the fingerprints recorded stay those of the
    /// inventory, so a file that changes in between makes its hour look changed on the next run.
    mutating func openFiles() throws {
        hourFiles = try hourFiles.mapValues { try $0.map { try $0.opened() } }
        unpartitioned = try unpartitioned.map { try $0.opened() }
        let readFiles = hourFiles.values.joined() + unpartitioned
        totalBytes = readFiles.reduce(0) { $0 + $1.size }
    }

    var coverage: Coverage { Coverage(ranges) }

    var hourCount: Int64 { ranges.reduce(0) { $0 + $1.count } }

    static func size(of unit: [LogFile]) -> Int64 { unit.reduce(0) { $0 + $1.size } }
}
