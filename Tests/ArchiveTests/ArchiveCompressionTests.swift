@testable import Archive
import BatchJob
import CounterpointCore
import CounterStore
import EventLogs
import Foundation
import Patience
import Runtime
import Testing

@Suite("Archive compresses closed hours", .onTestThreads)
struct ArchiveCompressionTests {
    private func withRoot(_ body: (String) throws -> Void) throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("archive-gzip-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try body(root)
    }

    private func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    private func lines(_ path: String) throws -> [String] {
        var bytes: [UInt8] = []
        try LogReader(path: path).forEachChunk { chunk, _ in bytes.append(contentsOf: chunk) }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    private func write(_ plays: [Play], to files: ArchiveFiles, partition: Int32) throws {
        for play in plays {
            try Array(play.json.utf8).withUnsafeBytes { _ = try files.write($0, hour: play.hour, partition: partition) }
        }
    }

    @Test("closing an hour gzips its files on the compressor's thread: the plain files go, late files stay plain, and batch counts the same")
    func closingCompresses() throws {
        try withRoot { root in
            let compressor = ArchiveCompressor(logger: quietLogger)
            compressor.start()
            defer { compressor.stop() }
            let files = ArchiveFiles(root: root, bufferSize: 4096, compressor: compressor)
            let first = plays(count: 300, from: time(10, minute: 0), to: time(11, minute: 0), duplicateEvery: 7)
            try write(Array(first.prefix(150)), to: files, partition: 0)
            try write(Array(first.dropFirst(150)), to: files, partition: 1)
            try files.closeHour(hour(10))
            compressor.waitUntilIdle()

            var archived: [String] = []
            for partition in ["p0", "p1"] {
                let plain = LogLayout.hourFilePath(root: root, hour: hour(10), segment: partition)
                #expect(!exists(plain), "\(plain) deleted")
                #expect(!exists(plain + LogCompression.temporarySuffix))
                let gzip = try LogFile(path: plain + ".gz")
                #expect(gzip.isGzip)
                archived += try lines(gzip.path)
            }
            #expect(archived.sorted() == first.map(\.json).sorted())
            #expect(compressor.compressedFiles.count == 2)

            let late = Play(eventID: "late", track: 1, occurredAt: time(10, minute: 59))
            try write([late], to: files, partition: 0)
            try files.closeAll()
            compressor.waitUntilIdle()
            let lateFile = LogLayout.hourFilePath(root: root, hour: hour(10), segment: "p0", late: true)
            #expect(try lines(lateFile) == [late.json])

            var truth = Truth()
            for play in first + [late] { truth.add(play) }
            let data = StoreLocation(directory: root + "-data")
            defer { try? FileManager.default.removeItem(atPath: data.directory) }
            let summary = try BatchJob.run(BatchConfiguration(logPaths: [root], store: .sqlite(data), scratchDirectory: data.directory), logger: quietLogger)
            #expect(summary.files == 3)
            #expect(summary.duplicates == truth.duplicates)
            #expect(Int64(summary.counted) == truth.counted)
        }
    }

    @Test("at start, leftovers of a crash are handled: a .gz.tmp is deleted, a plain file beside its complete .gz is deleted, beside a broken .gz it is compressed again, and plain files of closed hours are compressed")
    func crashLeftovers() throws {
        try withRoot { root in
            let events = plays(count: 40, from: time(10, minute: 0), to: time(11, minute: 0), duplicateEvery: 0).map(\.json)
            let text = Data((events.joined(separator: "\n") + "\n").utf8)
            func path(_ segment: String) -> String { LogLayout.hourFilePath(root: root, hour: hour(10), segment: segment) }
            try FileManager.default.createDirectory(atPath: (path("p0") as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            // p0: killed while writing the gzip. p1: killed after the rename, before the unlink.
            // p2: a .gz that is not a complete copy. p3: killed before compressing at all.
            for segment in ["p0", "p1", "p2", "p3"] { try text.write(to: URL(fileURLWithPath: path(segment))) }
            try Data([0x1F, 0x8B, 0x08]).write(to: URL(fileURLWithPath: path("p0") + LogCompression.temporarySuffix))
            let complete = try LogWriter(path: path("p1") + ".gz", gzip: true, append: false)
            for line in events { try complete.write(line: Array(line.utf8)) }
            try complete.close()
            let partial = try LogWriter(path: path("p2") + ".gz", gzip: true, append: false)
            for line in events.prefix(10) { try partial.write(line: Array(line.utf8)) }
            try partial.close()
            try LogLayout.markClosed(root: root, hour: hour(10), durable: false)

            let compressor = ArchiveCompressor(logger: quietLogger)
            compressor.start()
            let files = ArchiveFiles(root: root, bufferSize: 4096, compressor: compressor, quietPeriod: .zero)
            try files.adoptUnclosedHours()
            compressor.waitUntilIdle()
            compressor.stop()

            for segment in ["p0", "p1", "p2", "p3"] {
                #expect(!exists(path(segment)), "\(segment) plain deleted")
                #expect(!exists(path(segment) + LogCompression.temporarySuffix))
                #expect(try lines(path(segment) + ".gz") == events, "\(segment).gz holds every event once")
            }
            #expect(files.openHours.isEmpty)
        }
    }

    @Test("a stop leaves the closed hours it has no time for plain and intact, and the next start compresses them")
    func stopLeavesTheRestPlain() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("archive-gzip-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        do {
            let hours = (10..<22).map { hour($0) }
            var expected: [String: [String]] = [:]
            let compressor = ArchiveCompressor(stopBudget: .zero, logger: quietLogger)
            compressor.start()
            let release = StopSignal()
            compressor.hold(until: release)
            let files = ArchiveFiles(root: root, bufferSize: 4096, compressor: compressor)
            for (index, hour) in hours.enumerated() {
                let offset = Int64(10 + index)
                let events = plays(count: 20, from: time(offset, minute: 0), to: time(offset + 1, minute: 0),
                                   duplicateEvery: 0, prefix: "h\(index)-")
                try write(events, to: files, partition: 0)
                try files.closeHour(hour)
                expected[LogLayout.hourFilePath(root: root, hour: hour, segment: "p0")] = events.map(\.json)
            }
            // Every closed hour is queued behind the held thread when the stop comes: none fits
            // in a budget of zero.
            let stopping = BlockingThread(name: "test-stop") { compressor.stop() }
            let stopRequested = try await eventually(within: .seconds(30)) { compressor.isStopping }
            #expect(stopRequested)
            release.request()
            await stopping.joined()
            #expect(compressor.filesLeftPlain == hours.count)
            #expect(compressor.compressedFiles.isEmpty)
            for (plain, events) in expected {
                #expect(!exists(plain + ".gz"), "\(plain) left plain")
                #expect(try lines(plain) == events, "\(plain) intact")
            }

            let next = ArchiveCompressor(logger: quietLogger)
            next.start()
            defer { next.stop() }
            try ArchiveFiles(root: root, bufferSize: 4096, compressor: next, quietPeriod: .zero).adoptUnclosedHours()
            next.waitUntilIdle()
            #expect(next.compressedFiles.count == hours.count)
            for (plain, events) in expected {
                #expect(!exists(plain), "\(plain) compressed at the next start")
                #expect(try lines(plain + ".gz") == events)
            }
        }
    }

    @Test("LogCompression.recover reports what it did, and a second pass finds nothing")
    func recoverReports() throws {
        try withRoot { root in
            let plain = LogLayout.hourFilePath(root: root, hour: hour(10), segment: "p0")
            try FileManager.default.createDirectory(atPath: (plain as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try Data("{\"a\":1}\n".utf8).write(to: URL(fileURLWithPath: plain))
            try Data("x".utf8).write(to: URL(fileURLWithPath: plain + ".gz"))
            try Data("y".utf8).write(to: URL(fileURLWithPath: plain + ".gz.tmp"))
            let first = try LogCompression.recover(root: root)
            #expect(first.removedTemporaries == [plain + ".gz.tmp"])
            #expect(first.recompressed == [plain])
            #expect(first.removedPlain.isEmpty)
            #expect(try lines(plain + ".gz") == ["{\"a\":1}"])
            #expect(try LogCompression.recover(root: root) == LogCompression.Recovery())
        }
    }
}
