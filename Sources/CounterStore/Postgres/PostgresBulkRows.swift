import CounterpointCore
import PostgresDB

/// (hour, track, plays) rows as three `bigint[]` parameters for
/// `INSERT … SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) … ON CONFLICT`:
/// one statement and one round trip for any number of rows, parsed by the server in one go —
/// the measured fastest of the portable bulk paths (see docs/postgresql.md).
///
/// `ON CONFLICT DO UPDATE` may not touch one row twice in a statement, so rows of the same
/// key are summed first; and rows are in key order, so that two writers upserting the same
/// keys lock them in the same order and cannot deadlock each other.
struct PostgresBulkRows {
    var hours: [Int64] = []
    var tracks: [Int64] = []
    var plays: [Int64] = []

    var count: Int { hours.count }

    /// `rows` summed per (track, hour), without rows of 0 plays, ordered by `order`.
    init(_ rows: [CountRow], order: (CountRow, CountRow) -> Bool) {
        let sorted = rows.sorted(by: order)
        hours.reserveCapacity(sorted.count)
        tracks.reserveCapacity(sorted.count)
        plays.reserveCapacity(sorted.count)
        for row in sorted where row.plays > 0 {
            if let last = hours.indices.last, hours[last] == row.hour.index, tracks[last] == row.trackID {
                plays[last] += row.plays
            } else {
                hours.append(row.hour.index)
                tracks.append(row.trackID)
                plays.append(row.plays)
            }
        }
    }

    /// Runs `sql` — whose $1, $2, $3 are the hour, track and plays arrays — over chunks of at
    /// most `chunkRows` rows (a bound on the statement's size, not a transaction boundary).
    func upsert(_ sql: String, on connection: PostgresConnection, chunkRows: Int = 200_000) throws {
        var start = 0
        while start < count {
            let end = min(count, start + chunkRows)
            try connection.query(sql, [PostgresInt64Array(Array(hours[start..<end])),
                                       PostgresInt64Array(Array(tracks[start..<end])),
                                       PostgresInt64Array(Array(plays[start..<end]))])
            start = end
        }
    }
}
