import CounterpointCore

/// What one covered hour was computed from: a fingerprint of its input files (see
/// `BatchJob`'s `SourceFingerprint` for what goes into it), and how many files and bytes
/// those were. The incremental batch rebuilds an hour when the fingerprint of its files on
/// disk differs from the recorded one, or when none is recorded.
public struct HourSource: Sendable, Hashable {
    public var hour: Hour
    /// Opaque to the store: equal fingerprints mean unchanged input.
    public var fingerprint: String
    public var files: Int
    public var bytes: Int64

    public init(hour: Hour, fingerprint: String, files: Int, bytes: Int64) {
        self.hour = hour
        self.fingerprint = fingerprint
        self.files = files
        self.bytes = bytes
    }
}
