import CounterpointCore
import CounterStore
import EventLogs

/// A fingerprint of the files an hour is computed from: for each file its name, size,
/// modification time (ns) and inode, hashed in path order. A file that appears (a late file),
/// grows, or is replaced changes it; reading the files is not needed to tell.
///
/// The hour's own files are named by their last two path components (`<day>/<HH>…`), so
/// spelling the log directory differently (`./logs`, `/abs/logs`) does not make every hour
/// look changed. Unpartitioned files may hold events of any hour, and which hours is only
/// known by reading them, so every unpartitioned file is part of every hour's fingerprint:
/// changing one makes every hour dirty (conservative, never wrong).
///
/// Deterministic across runs and processes (no random seed): it is compared with the one a
/// past run recorded. Two 64-bit lanes, so an accidental collision is out of the question;
/// it guards against change, not against an adversary who can write the log directory.
struct SourceFingerprint {
    private var lanes: (UInt64, UInt64) = (0xCBF2_9CE4_8422_2325, 0x6C62_272E_07BB_0142)
    private(set) var files = 0
    private(set) var bytes: Int64 = 0

    mutating func add(_ file: LogFile, name: Substring) {
        files += 1
        bytes += file.size
        for byte in name.utf8 { mix(UInt64(byte)) }
        mix(0xFF_FFFF)  // ends the name, so "a"+"bc" and "ab"+"c" differ
        mix(UInt64(bitPattern: file.size))
        mix(UInt64(bitPattern: file.modifiedNanoseconds))
        mix(file.inode)
    }

    mutating func add(_ other: SourceFingerprint) {
        mix(other.lanes.0)
        mix(other.lanes.1)
        files += other.files
        bytes += other.bytes
    }

    @inline(__always)
    private mutating func mix(_ value: UInt64) {
        lanes.0 = (lanes.0 ^ value) &* 0x0000_0100_0000_01B3
        lanes.1 = (lanes.1 ^ value) &* 0x9E37_79B9_7F4A_7C15
        lanes.1 ^= lanes.1 >> 31
    }

    /// 32 hex digits.
    var text: String {
        func hex(_ value: UInt64) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
        // Murmur3's finalizer, so that every input bit reaches every output digit.
        return hex(MurmurHash3.finalMix(lanes.0)) + hex(MurmurHash3.finalMix(lanes.1))
    }

    func source(of hour: Hour) -> HourSource {
        HourSource(hour: hour, fingerprint: text, files: files, bytes: bytes)
    }

    /// `<day>/<name>`: the part of an hour file's path that the layout gives meaning to (the last
    /// two components, empty ones left out). The path's own tail when it has no empty component
    /// there — every path discovery builds — so a year's 8,760 names cost no copy.
    static func layoutName(_ path: String) -> Substring {
        let slash = UInt8(ascii: "/")
        if let last = path.utf8.lastIndex(of: slash), path.utf8.index(after: last) != path.utf8.endIndex {
            let head = path[..<last]
            let start = head.utf8.lastIndex(of: slash).map { head.utf8.index(after: $0) } ?? head.startIndex
            if start < last { return path[start...] }
        }
        let components = path.split(separator: "/", omittingEmptySubsequences: true)
        return Substring(components.suffix(2).joined(separator: "/"))
    }
}
