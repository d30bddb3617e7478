import Foundation
import Programs

/// A small tmpfs mounted for one test, to fill up on purpose: the full-disk drills of docs/runbook.md.
/// Mounting needs root (CI and the sessions run as root); elsewhere the drills are disabled
/// with a message saying so.
final class SmallDisk {
    let root: URL
    private var filler: URL { root.appendingPathComponent("filler") }

    /// Mounts a tmpfs of `megabytes` at a fresh directory under `scratch`.
    init(megabytes: Int, under scratch: URL) throws {
        root = scratch.appendingPathComponent("small-disk")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let result = try Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", root.path])
        guard result.status == 0 else { throw CommandError(description: "mount failed: \(result.output)") }
    }

    /// Whether this machine lets the tests mount a tmpfs (checked once, with a tiny one).
    static let mountingAllowed: Bool = {
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("counterpoint-mount-probe-\(getpid())")
        defer { try? FileManager.default.removeItem(at: probe) }
        guard (try? FileManager.default.createDirectory(at: probe, withIntermediateDirectories: true)) != nil,
              let mounted = try? run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", probe.path]),
              mounted.status == 0 else { return false }
        _ = try? run("/bin/umount", [probe.path])
        return true
    }()

    /// Writes a file until the disk refuses more: from then on nothing else fits.
    func fill() throws {
        guard FileManager.default.createFile(atPath: filler.path, contents: nil),
              let handle = try? FileHandle(forWritingTo: filler) else {
            throw CommandError(description: "cannot create \(filler.path)")
        }
        defer { try? handle.close() }
        let block = Data(count: 64 * 1024)
        var size = block.count
        while size > 0 {
            do {
                try handle.write(contentsOf: block.prefix(size))
            } catch {
                size /= 2  // the disk is full at this size; try smaller pieces down to a byte
            }
        }
    }

    /// Deletes what `fill` wrote.
    func free() throws {
        try FileManager.default.removeItem(at: filler)
    }

    /// Unmounts the disk (every process using it must have ended).
    func unmount() {
        _ = try? Self.run("/bin/umount", ["-l", root.path])
    }

    private static func run(_ tool: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let outcome = try Program.runBlocking(tool, arguments, mergingErrors: true)
        return (outcome.status, outcome.text)
    }
}

/// Runs `body` with a small disk mounted under `scratch`, and unmounts it afterwards.
func withSmallDisk<T>(megabytes: Int, under scratch: URL, _ body: (SmallDisk) async throws -> T) async throws -> T {
    let disk = try SmallDisk(megabytes: megabytes, under: scratch)
    do {
        let value = try await body(disk)
        disk.unmount()
        return value
    } catch {
        disk.unmount()
        throw error
    }
}
