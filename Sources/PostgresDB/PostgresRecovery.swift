/// What a connection can tell about the server's place in streaming replication: whether it
/// is a hot standby (read-only, replaying a primary's WAL) and how far behind the primary its
/// answers are. See docs/postgresql.md, "Standbys and failover".
extension PostgresConnection {
    /// True when the server is a hot standby. From the `in_hot_standby` status the server
    /// reports (no round trip; it follows a promotion), else `pg_is_in_recovery()`, asked once
    /// per connection (servers before PostgreSQL 14, compatible engines).
    public func isHotStandby() throws -> Bool {
        if let reported = reportedHotStandby { return reported }
        if let queriedHotStandby { return queriedHotStandby }
        let inRecovery = try query("SELECT pg_is_in_recovery()").string(row: 0, column: 0) == "t"
        queriedHotStandby = inRecovery
        return inRecovery
    }

    /// A SQL expression for how far behind the primary a standby's answers are, in
    /// milliseconds; NULL on a primary. 0 while the standby streams and has replayed all the
    /// WAL it received; otherwise the age of the last transaction it replayed (an idle primary
    /// commits nothing, so that age alone would grow while the standby is current). Only for
    /// connections to a hot standby: the functions it names are PostgreSQL's own, which
    /// compatible engines may lack.
    public static let standbyLagMillisecondsSQL = """
        CASE WHEN pg_is_in_recovery() THEN
            CASE WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn()
                      AND EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming') THEN 0
                 ELSE greatest(0, (extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000)::bigint)
            END
        END
        """
}
