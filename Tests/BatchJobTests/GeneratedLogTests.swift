import BatchJob
import CounterpointCore
import CounterStore
import Foundation
import Patience
import StoreTestSupport
import Testing

@Suite("BatchJob over generated logs", .onTestThreads)
struct GeneratedLogTests {
    @Test("one worker and two workers give identical summaries and rows, equal to the generator's truth",
          arguments: StoreKind.allCases, [false, true])
    func workerCountDoesNotChangeTheResult(_ store: StoreKind, gzip: Bool) throws {
        try Workspace.with(store) { workspace in
            let generated = try generateLogs(into: workspace.logs, events: 20_000, hours: 6, duplicateRate: 0.05,
                                             malformedRate: 0.01, gzip: gzip)
            let range = HourRange(generated.start, generated.start.advanced(by: 6))
            // Each run into a store of its own.
            try Workspace.with(store) { single in
                try Workspace.with(store) { double in
                    let summaryOne = try single.run(paths: [workspace.logs], workers: 1)
                    let summaryTwo = try double.run(paths: [workspace.logs], workers: 2)

                    #expect(summaryOne.counts == summaryTwo.counts)
                    #expect(summaryOne.rejections.counts == summaryTwo.rejections.counts)
                    #expect(summaryOne.ranges == [range] && summaryTwo.ranges == [range])

                    // Internal consistency, then agreement with what the generator wrote.
                    for summary in [summaryOne, summaryTwo] {
                        #expect(summary.eventsRead == summary.valid + summary.rejections.total)
                        #expect(summary.counted == summary.valid - summary.duplicates - summary.outsideRange)
                        #expect(summary.eventsRead == generated.events + generated.duplicates + generated.malformed)
                        #expect(summary.rejections.total == generated.malformed)
                        #expect(summary.duplicates == generated.duplicates)
                        #expect(summary.outsideRange == 0)
                        #expect(summary.counted == generated.events)
                        #expect(summary.rows == generated.truthCells.count)
                        #expect(summary.tracks == Set(generated.truthCells.keys.map(\.track)).count)
                        #expect(summary.hours == 6)
                    }
                    let rowsOne = try single.counts(in: range)
                    #expect(rowsOne == generated.truthCells)
                    #expect(try double.counts(in: range) == rowsOne)
                }
            }
        }
    }
}
