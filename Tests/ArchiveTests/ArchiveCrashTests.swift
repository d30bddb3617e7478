import CounterpointCore
import EventLogs
import Foundation
import Patience
import Programs
import Testing

@Suite("A crashing archive process", .onTestThreads)
struct ArchiveCrashTests {
    /// Starts `counterpoint archive` on the workspace's broker and log root.
    private func startArchive(_ workspace: ArchiveWorkspace) throws -> RunningProgram {
        try Executable.start(["archive", "--brokers", workspace.cluster.bootstrapServers, "--topic", workspace.topic,
                              "--logs", workspace.logs, "--log-level", "warning"],
                             scratch: URL(fileURLWithPath: workspace.root))
    }

    /// Event ids of the valid events in the archive's files, and how many lines they hold.
    private func archived(_ workspace: ArchiveWorkspace) -> (ids: Set<String>, lines: Int) {
        var ids = Set<String>()
        var lines = 0
        let files = workspace.archiveFiles()
        let present = Set(files)
        // A plain file beside its .gz is the same data (compression in progress).
        for path in files where path.hasSuffix(".ndjson.gz") || (path.hasSuffix(".ndjson") && !present.contains(path + ".gz")) {
            guard let text = try? workspace.lines(of: path) else { continue }
            for line in text where !line.isEmpty {
                lines += 1
                if case .success(let event) = EventParser.parse(line.utf8) { ids.insert(event.eventID.description) }
            }
        }
        return (ids, lines)
    }

    @Test("an archive process killed with SIGKILL mid-stream and restarted loses no event: batch counts equal the produced ones")
    func killedArchiverLosesNothing() async throws {
        let workspace = try ArchiveWorkspace(partitions: 2)
        let produced = plays(count: 30_000, from: time(10, minute: 0), to: time(13, minute: 0), tracks: 500)
            + [Play(eventID: "closer", track: 1, occurredAt: time(13, minute: 30))]
        let distinct = Set(produced.map(\.eventID)).count
        let chunks = stride(from: 0, to: produced.count, by: 500).map { Array(produced[$0..<min($0 + 500, produced.count)]) }

        // Events keep arriving while the archiver is killed and restarted; with the default commit
        // interval (1 s) a kill always leaves written but uncommitted events behind.
        let producing = Task.detached {
            for chunk in chunks {
                try workspace.produce(chunk)
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        var kills = 0
        for fraction in [0.2, 0.5] {
            let process = try startArchive(workspace)
            try await eventually(within: .seconds(60)) {
                archived(workspace).ids.count >= Int(Double(distinct) * fraction) || !process.isRunning
            }
            #expect(process.isRunning, "the archiver ran until it was killed")
            process.signal(SIGKILL)
            if try await process.exit(within: .seconds(10)) == Termination(status: SIGKILL, exited: false) { kills += 1 }
        }
        try await producing.value

        let final = try startArchive(workspace)
        try await eventually(within: .seconds(90)) {
            archived(workspace).ids.count == distinct && (10...12).allSatisfy { workspace.isClosed(hour(Int64($0))) }
        }
        final.signal(SIGTERM)
        let ended = try await final.exit(within: .seconds(60))
        #expect(kills == 2)
        #expect(ended == Termination(status: 0, exited: true), "the archiver ended with \(ended.map(String.init(describing:)) ?? "no exit in 60 s"): \(final.stderr.suffix(2_000))")

        let files = archived(workspace)
        #expect(files.ids.count == distinct)
        #expect(files.lines >= produced.count, "events after the last commit are archived again")
        var truth = Truth()
        for play in produced where play.hour < hour(13) { truth.add(play) }
        let summary = try workspace.batch(from: hour(10), to: hour(13))
        #expect(Int64(summary.valid - summary.duplicates) == truth.counted)
        // Only lines torn by a kill can be rejected, as unterminated JSON.
        #expect(Set(summary.rejections.counts.keys).isSubset(of: [.malformedJSON]))
        for (cell, count) in truth.cells {
            #expect(try workspace.plays(cell.track, at: cell.hour) == count, "\(cell)")
        }
    }
}
