import CounterpointCore
import EventLogs
import Foundation

/// Reads files whose events may belong to any hour ONCE: the calling thread reads (and
/// inflates) chunks of whole lines, `workers` threads parse them, tally rejected lines (with
/// their file and line) and events of other hours, and keep each valid event of the target
/// hours as a compact record of its hour (`HourRecords`). The hour units then de-duplicate
/// those records together with the hour's own files, so de-duplication stays exact across
/// files while the run holds one hour's ids at a time per worker.
struct UnpartitionedPass {
    let target: Coverage
    let workers: Int
    let spillDirectory: String
    /// Bytes of records kept in memory, over all workers, before they are spilled to disk.
    let memoryBudget: Int

    struct Output {
        var records: [HourRecords]
        var tally: GroupTally
    }

    func run(_ files: [LogFile], progress: (Int64) -> Void) throws -> Output {
        let workerCount = max(1, workers)
        let chunkSize = 4 << 20, maxLineBytes = 1 << 20
        // The most `forEachChunk` delivers at once: a chunk, a carried partial line and a `\n`.
        let chunkCapacity = chunkSize + maxLineBytes + 1
        let pipeline = ChunkPipeline(buffers: workerCount + 2, capacity: chunkCapacity, workers: workerCount)
        let paths = files.map(\.path)
        let records = (0..<workerCount).map {
            HourRecords(directory: spillDirectory, name: "w\($0)", budget: memoryBudget / workerCount)
        }
        let tallies = TallyBox()
        let target = self.target
        for worker in 0..<workerCount {
            let thread = Thread {
                var parser = RecordParser(target: target, records: records[worker])
                do {
                    while let chunk = pipeline.next() {
                        try parser.parse(chunk, path: paths[chunk.file])
                        pipeline.recycle(chunk.buffer)
                    }
                    tallies.add(parser.filter.tally)
                    pipeline.workerFinished(with: nil)
                } catch {
                    pipeline.workerFinished(with: error)
                }
            }
            thread.name = "batch-reader"
            thread.stackSize = 1 << 22
            thread.start()
        }

        do {
            for (index, file) in files.enumerated() {
                let reader = try LogReader(file: file, chunkSize: chunkSize, maxLineBytes: maxLineBytes)
                var lastReported: Int64 = 0
                try reader.forEachChunk { chunk, firstLineNumber in
                    guard let buffer = pipeline.freeBuffer() else { throw pipeline.failure ?? CancellationError() }
                    precondition(chunk.count <= buffer.count, "a LogReader chunk larger than its documented bound")
                    buffer.baseAddress!.copyMemory(from: chunk.baseAddress!, byteCount: chunk.count)
                    pipeline.submit(Chunk(buffer: buffer, count: chunk.count, firstLineNumber: firstLineNumber, file: index))
                    let read = reader.compressedBytesRead
                    progress(read - lastReported)
                    lastReported = read
                }
            }
        } catch {
            pipeline.close()
            _ = try? pipeline.waitForWorkers()
            throw error
        }
        pipeline.close()
        try pipeline.waitForWorkers()
        return Output(records: records, tally: tallies.total)
    }
}

/// One worker's parsing of chunks into records.
private struct RecordParser {
    private(set) var filter: EventFilter
    let records: HourRecords

    init(target: Coverage, records: HourRecords) {
        filter = EventFilter(target: target)
        self.records = records
    }

    mutating func parse(_ chunk: Chunk, path: String) throws {
        var lineNumber = chunk.firstLineNumber
        try LineSplitter.forEachLine(in: UnsafeRawBufferPointer(rebasing: chunk.buffer[..<chunk.count])) { line in
            defer { lineNumber += 1 }
            var dimensions = PlayDimensions()
            guard let event = filter.admit(line, dimensions: &dimensions, path: path, lineNumber: lineNumber) else { return }
            try records.append(trackID: event.trackID, eventID: event.eventID, hour: event.hour, dimensions: dimensions)
        }
    }
}

/// A chunk of whole lines copied out of a `LogReader`, and where it came from.
private struct Chunk: @unchecked Sendable {
    // @unchecked: the buffer is owned by one thread at a time — the reader fills it, hands it
    // over through the pipeline's lock, the worker parses it and hands it back the same way.
    var buffer: UnsafeMutableRawBufferPointer
    var count: Int
    var firstLineNumber: Int
    var file: Int
}

/// Hands chunks from the reading thread to the parsing workers and the emptied buffers back,
/// so the read holds a fixed number of chunk buffers however large the file.
private final class ChunkPipeline: @unchecked Sendable {
    // @unchecked: every stored property is read and written only while `condition` is locked.
    private let condition = NSCondition()
    private var free: [UnsafeMutableRawBufferPointer]
    private let all: [UnsafeMutableRawBufferPointer]
    private var full: [Chunk] = []
    private var head = 0
    private var closed = false
    private var workersLeft: Int
    private var error: (any Error)?

    init(buffers: Int, capacity: Int, workers: Int) {
        all = (0..<buffers).map { _ in .allocate(byteCount: capacity, alignment: 64) }
        free = all
        workersLeft = workers
    }

    deinit {
        for buffer in all { buffer.deallocate() }
    }

    var failure: (any Error)? {
        condition.lock()
        defer { condition.unlock() }
        return error
    }

    /// A buffer to fill, waiting for one; `nil` when a worker failed.
    func freeBuffer() -> UnsafeMutableRawBufferPointer? {
        condition.lock()
        defer { condition.unlock() }
        while free.isEmpty && error == nil { condition.wait() }
        return error == nil ? free.removeLast() : nil
    }

    func submit(_ chunk: Chunk) {
        condition.lock()
        full.append(chunk)
        condition.broadcast()
        condition.unlock()
    }

    /// The next chunk to parse; `nil` once the reader closed the pipeline and all were taken,
    /// or when another worker failed.
    func next() -> Chunk? {
        condition.lock()
        defer { condition.unlock() }
        while head == full.count && !closed && error == nil { condition.wait() }
        guard error == nil, head < full.count else { return nil }
        let chunk = full[head]
        head += 1
        if head == full.count {
            full.removeAll(keepingCapacity: true)
            head = 0
        }
        return chunk
    }

    func recycle(_ buffer: UnsafeMutableRawBufferPointer) {
        condition.lock()
        free.append(buffer)
        condition.broadcast()
        condition.unlock()
    }

    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    func workerFinished(with failure: (any Error)?) {
        condition.lock()
        workersLeft -= 1
        if let failure, error == nil { error = failure }
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until every worker has stopped; rethrows the first worker error.
    func waitForWorkers() throws {
        condition.lock()
        defer { condition.unlock() }
        while workersLeft > 0 { condition.wait() }
        if let error { throw error }
    }
}

/// The workers' tallies, summed as they finish.
private final class TallyBox: @unchecked Sendable {
    // @unchecked: `sum` is only touched while `lock` is held.
    private let lock = NSLock()
    private var sum = GroupTally()

    func add(_ tally: GroupTally) {
        lock.lock()
        defer { lock.unlock() }
        sum.merge(tally)
    }

    var total: GroupTally {
        lock.lock()
        defer { lock.unlock() }
        return sum
    }
}
