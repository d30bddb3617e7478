import Foundation
import Patience
import Runtime
import Scratch
import Testing

@Suite("directory locks")
struct DirectoryLockTests {
    @Test("a claimed directory is refused to a second claim until the first is given up, and is made if missing")
    func oneClaimAtATime() async throws {
        try await withTemporaryDirectory { directory in
            let nested = directory.appendingPathComponent("a/b").path
            var first: DirectoryLock? = try DirectoryLock(directory: nested, name: "run.lock")
            #expect(FileManager.default.fileExists(atPath: nested + "/run.lock"))
            #expect(throws: DirectoryLockError.held(path: nested + "/run.lock")) {
                try DirectoryLock(directory: nested, name: "run.lock")
            }
            _ = first
            first = nil
            #expect(try await Self.claimed(nested) != nil)
        }
    }

    /// A claim taken within a few seconds: a process another test starts at the moment a claim
    /// is given up holds a copy of its descriptor (and so the lock) until it runs its program.
    static func claimed(_ directory: String) async throws -> DirectoryLock? {
        try await eventualValue(within: .seconds(5)) { try? DirectoryLock(directory: directory, name: "run.lock") }
    }

    @Test("a lock held by another process is refused, and given back when that process is killed")
    func killedHolderGivesItBack() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("run.lock").path
            let holder = Process()
            // One process that takes the lock and holds it (flock(1) would pass it on to its command).
            holder.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            holder.arguments = ["-c", "import fcntl, sys, time; f = open(sys.argv[1], 'w'); fcntl.flock(f, fcntl.LOCK_EX); time.sleep(60)", path]
            try holder.run()
            defer { if holder.isRunning { kill(holder.processIdentifier, SIGKILL) } }
            #expect(try await eventually(within: .seconds(10)) {
                (try? DirectoryLock(directory: directory.path, name: "run.lock")) == nil
            }, "flock never took the lock")

            kill(holder.processIdentifier, SIGKILL)
            holder.waitUntilExit()
            #expect(try await Self.claimed(directory.path) != nil)
        }
    }

    @Test("a directory that cannot be made is a clear error")
    func unusableDirectory() throws {
        try withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("plain-file").path
            #expect(FileManager.default.createFile(atPath: file, contents: Data()))
            do {
                _ = try DirectoryLock(directory: file + "/below", name: "run.lock")
                Issue.record("a lock was taken below a plain file")
            } catch let error as DirectoryLockError {
                #expect("\(error)" == "cannot make the directory \(file)/below: Not a directory")
            }
        }
    }
}
