import CounterpointCore
import PostgresDB
import SQLiteDB

/// The one-shot move of an existing SQLite store into an empty PostgreSQL database
/// (docs/postgresql.md): the batch layer's hours — plays, dimension counts and listener sketches — over its
/// coverage (the day and month rollups are rebuilt by the replacement, and the run is recorded
/// as one run summarizing the copy), then the realtime layer's uncovered rows, dimension
/// counts and listener sketches with their partitions' next offsets, in one flush. Stop the consumers and the batch job first; readers may keep running.
public enum StoreCopy {
    public struct Summary: Sendable, Hashable {
        public var batchRows: Int
        public var realtimeRows: Int
        public var partitions: Int
    }

    /// How far a copy has got: the batch rows copied so far, of `batchRowsInAll`.
    public struct Progress: Sendable, Hashable {
        public var batchRows: Int
        public var batchRowsInAll: Int
    }

    /// Copies `source` into `url`. Refuses (changing nothing) a target whose stores are not empty.
    /// `progress` hears now and then (every 65,536 batch rows, and at the end of them) how far
    /// the batch layer's copy has got, the long part of a copy with history.
    @discardableResult
    public static func copy(from source: StoreLocation, toPostgres url: String,
                            progress: (Progress) -> Void = { _ in }) throws -> Summary {
        let batchSource = try StoreFile.openReader(path: source.batchPath, schema: .batch, configuration: .default)
        let realtimeSource = try StoreFile.openReader(path: source.realtimePath, schema: .realtime, configuration: .default)
        let batchTarget = try PostgresBatchStore(url: url)
        let realtimeTarget = try PostgresRealtimeStore(url: url)
        let target = try CounterReader(layers: PostgresLayers(url: url))
        guard try target.coverage().ranges.isEmpty, try target.partitions().isEmpty else {
            throw CounterStoreError.targetNotEmpty(PostgresConnection.redactedURL(url))
        }

        var summary = Summary(batchRows: 0, realtimeRows: 0, partitions: 0)
        let coverage = try batchSource.read { try BatchRecords.coverage(SQLiteDialect($0)) }
        if !coverage.ranges.isEmpty {
            let latest = try batchSource.read { try BatchRecords.recentRuns(limit: 1, SQLiteDialect($0)) }.first
            let inAll = try batchSource.read { db in
                Int(try db.cachedStatement("SELECT count(*) FROM \(Catalogue.batch(.hour).name)").singleInt64() ?? 0)
            }
            _ = try batchSource.read { db in
                try batchTarget.replace(ranges: coverage.ranges, startedAt: latest?.startedAt ?? 0) { writer in
                    // Every kind's hours; the target's replacement rolls them up as a batch run does.
                    for kind in SubjectKind.allCases {
                        let hours = Catalogue.batch(.hour, kind)
                        try db.cachedStatement("""
                            SELECT \(hours.idColumn), hour, dimensions, listener_plays, listeners, \(Catalogue.signalColumns.joined(separator: ", "))
                            FROM \(hours.name)
                            """).forEachRow { row in
                            try writer.write(Subject(kind, row.int64(at: 0)), hour: Hour(index: row.int64(at: 1)),
                                             counts: row.signalCounts(from: 5), dimensions: row.bytes(at: 2), listenerPlays: row.int64(at: 3),
                                             listeners: row.bytes(at: 4))
                            guard kind == .track else { return }
                            summary.batchRows += 1
                            if summary.batchRows & 0xFFFF == 0 { progress(Progress(batchRows: summary.batchRows, batchRowsInAll: inAll)) }
                        }
                    }
                    progress(Progress(batchRows: summary.batchRows, batchRowsInAll: inAll))
                    var run = latest ?? BatchRun(range: coverage.ranges[0], startedAt: 0, finishedAt: 0, eventsRead: 0, valid: 0,
                                                 duplicates: 0, rejected: 0, rejectedByReason: [:], tracks: 0, rows: 0)
                    run.rows = summary.batchRows
                    return run
                }
            }
        }

        try realtimeSource.read { db in
            var families: [CounterRows] = []
            var trackRows = 0
            for kind in SubjectKind.allCases {
                var rows = CountRowList()
                var (dimensions, listeners) = (EncodedRows(), EncodedRows())
                let table = Catalogue.realtime(kind)
                try db.cachedStatement("""
                    SELECT \(table.idColumn), hour, dimensions, listener_plays, listeners, \(Catalogue.signalColumns.joined(separator: ", "))
                    FROM \(table.name) ORDER BY hour, \(table.idColumn)
                    """).forEachRow { row in
                    let (id, hour) = (row.int64(at: 0), row.int64(at: 1))
                    rows.append(CountRow(id: id, hour: Hour(index: hour), counts: row.signalCounts(from: 5)))
                    dimensions.append(id: id, hour: hour, value: 0, blob: row.bytes(at: 2))
                    listeners.append(id: id, hour: hour, value: row.int64(at: 3), blob: row.bytes(at: 4))
                }
                if kind == .track { trackRows = rows.count }
                families.append(try CounterRows.realtime(sorted: rows, dimensions: dimensions, listeners: listeners, of: kind))
            }
            var progress: [PartitionProgress] = []
            try db.cachedStatement("SELECT topic, partition, next_offset, high_watermark FROM partition_offsets").forEachRow { row in
                progress.append(PartitionProgress(topic: row.string(at: 0), partition: Int32(truncatingIfNeeded: row.int64(at: 1)),
                                                  startOffset: nil, nextOffset: row.int64(at: 2), highWatermark: row.optionalInt64(at: 3)))
            }
            let flushedAt = try db.cachedStatement("SELECT flushed_at FROM last_flush WHERE id = 1").singleInt64()
            guard families.contains(where: { !$0.isEmpty }) || !progress.isEmpty else { return }
            // startOffset nil: the flush commits only if no consumer has claimed the partitions meanwhile.
            let outcome = try realtimeTarget.apply(families, progress: progress, flushedAt: flushedAt ?? 0)
            guard outcome == .committed else { throw CounterStoreError.targetNotEmpty(PostgresConnection.redactedURL(url)) }
            summary.realtimeRows = trackRows
            summary.partitions = progress.count
        }
        return summary
    }
}
