import CounterpointCore
import Runtime

/// The parsing workers of a batch run: threads that take the hour units in turn (the largest
/// first), read, validate, de-duplicate and count each, and send its rows — and, when they run
/// out of units, their tallies — to the one thread that writes the batch store. The first error
/// stops every worker.
enum WorkerPool {
    /// What a worker sends: a finished unit's rows, or (with empty rows) its tallies at the end.
    typealias Results = WorkerChannel<(unit: UnitRows, tally: GroupTally?)>

    /// Starts `min(workers, units.count)` workers (at least one) over `units`, counting only
    /// the hours of `target`; `bytesRead` and `eventsRead` grow as they go (for progress).
    static func start(units: [HourUnit], target: Coverage, workers: Int, bytesRead: SharedCounter,
                      eventsRead: SharedCounter) -> Results {
        // ~200 bytes per event; the largest unit sizes the tables once.
        let expectedPerUnit = Int(min(1 << 23, max(1024, (units.first?.size ?? 0) / 150)))
        let workerCount = min(workers, max(1, units.count))
        let results = Results(workers: workerCount)
        let nextUnit = SharedCounter()
        for _ in 0..<workerCount {
            _ = BlockingThread(name: "batch-worker", stackSize: 1 << 22) {
                var processor = GroupProcessor(target: target, expectedEventsPerUnit: expectedPerUnit)
                do {
                    while !results.hasFailed {
                        let index = Int(nextUnit.add(1))
                        guard index < units.count else { break }
                        let before = processor.tally.eventsRead
                        for (fileIndex, file) in units[index].files.enumerated() {
                            try processor.process(file, unit: index, index: fileIndex) { bytesRead.add($0) }
                        }
                        for source in units[index].records {
                            try processor.absorb(source, hour: units[index].hour)
                        }
                        eventsRead.add(Int64(processor.tally.eventsRead - before))
                        results.send((processor.finishUnit(), nil))
                    }
                    results.send((UnitRows(), processor.tally))
                    results.workerFinished()
                } catch {
                    results.workerFinished(with: error)
                }
            }
        }
        return results
    }
}

/// A counter shared by threads: the next work unit to take, or bytes read for progress.
final class SharedCounter: Sendable {
    private let value = Locked<Int64>(0)

    /// Adds `amount` and returns the value before the addition.
    @discardableResult
    func add(_ amount: Int64) -> Int64 {
        value.withLock { value in
            defer { value += amount }
            return value
        }
    }

    var current: Int64 {
        value.withLock { $0 }
    }
}
