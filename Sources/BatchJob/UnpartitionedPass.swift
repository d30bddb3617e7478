import CounterpointCore
import EventLogs
import Runtime

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
        let chunkSize = 4 << 20, maxLineBytes = LogReader.defaultMaxLineBytes
        // The most `forEachChunk` delivers at once: a chunk, a carried partial line and a `\n`.
        let chunkCapacity = chunkSize + maxLineBytes + 1
        let pipeline = ChunkPipeline(buffers: workerCount + 2, capacity: chunkCapacity, workers: workerCount)
        let paths = files.map(\.path)
        // Each worker's records in its slot, so that the hours absorb them in worker order.
        let output = Locked((records: [HourRecords?](repeating: nil, count: workerCount),
                             tallies: [GroupTally](repeating: GroupTally(), count: workerCount)))
        let target = self.target
        let spillDirectory = self.spillDirectory, budget = memoryBudget / workerCount
        for worker in 0..<workerCount {
            _ = BlockingThread(name: "batch-reader", stackSize: 1 << 22) {
                var parser = RecordParser(target: target, records: HourRecords(directory: spillDirectory, name: "w\(worker)", budget: budget))
                do {
                    while let chunk = pipeline.next() {
                        try parser.parse(chunk, path: paths[chunk.file])
                        pipeline.recycle(chunk.buffer)
                    }
                    output.withLock { output in
                        output.records[worker] = parser.records
                        output.tallies[worker] = parser.filter.tally
                    }
                    pipeline.workerFinished(with: nil)
                } catch {
                    pipeline.workerFinished(with: error)
                }
            }
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
        let (records, tallies) = output.value
        return Output(records: records.compactMap { $0 }, tally: .combined(tallies))
    }
}

/// One worker's parsing of chunks into records.
private struct RecordParser {
    private(set) var filter: EventFilter
    private(set) var records: HourRecords

    init(target: Coverage, records: HourRecords) {
        filter = EventFilter(target: target)
        self.records = records
    }

    mutating func parse(_ chunk: Chunk, path: String) throws {
        filter.file = (-1, chunk.file)
        var lineNumber = chunk.firstLineNumber
        try LineSplitter.forEachLine(in: UnsafeRawBufferPointer(rebasing: chunk.buffer[..<chunk.count])) { line in
            defer { lineNumber += 1 }
            var dimensions = PlayDimensions()
            guard let event = filter.admit(line, dimensions: &dimensions, path: path, lineNumber: lineNumber) else { return }
            try records.append(trackID: event.trackID, creatorID: event.creatorID, type: event.type, eventID: event.eventID, hour: event.hour, dimensions: dimensions)
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
private final class ChunkPipeline: Sendable {
    private struct State {
        var free: [UnsafeMutableRawBufferPointer]
        var full: [Chunk] = []
        var head = 0
        var closed = false
        var workersLeft: Int
        var error: (any Error)?
    }

    // Each buffer is owned by one thread at a time and changes hands only through `state`.
    private let state: Locked<State>
    private let all: [BufferAddress]

    init(buffers: Int, capacity: Int, workers: Int) {
        let all = (0..<buffers).map { _ in UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 64) }
        self.all = all.map(BufferAddress.init)
        state = Locked(State(free: all, workersLeft: workers))
    }

    deinit {
        for buffer in all { buffer.pointer.deallocate() }
    }

    var failure: (any Error)? {
        state.withLock { $0.error }
    }

    /// A buffer to fill, waiting for one; `nil` when a worker failed.
    func freeBuffer() -> UnsafeMutableRawBufferPointer? {
        state.wait(until: { !$0.free.isEmpty || $0.error != nil }) { state in
            state.error == nil ? state.free.removeLast() : nil
        }
    }

    func submit(_ chunk: Chunk) {
        state.withLock { $0.full.append(chunk) }
    }

    /// The next chunk to parse; `nil` once the reader closed the pipeline and all were taken,
    /// or when another worker failed.
    func next() -> Chunk? {
        state.wait(until: { $0.head < $0.full.count || $0.closed || $0.error != nil }) { state -> Chunk? in
            guard state.error == nil, state.head < state.full.count else { return nil }
            let chunk = state.full[state.head]
            state.head += 1
            if state.head == state.full.count {
                state.full.removeAll(keepingCapacity: true)
                state.head = 0
            }
            return chunk
        }
    }

    func recycle(_ buffer: UnsafeMutableRawBufferPointer) {
        state.withLock { $0.free.append(buffer) }
    }

    func close() {
        state.withLock { $0.closed = true }
    }

    func workerFinished(with failure: (any Error)?) {
        state.withLock { state in
            state.workersLeft -= 1
            if let failure, state.error == nil { state.error = failure }
        }
    }

    /// Waits until every worker has stopped; rethrows the first worker error.
    func waitForWorkers() throws {
        try state.wait(until: { $0.workersLeft == 0 }) { state throws in
            if let error = state.error { throw error }
        }
    }
}

/// A chunk buffer's address, for freeing it at the end.
private struct BufferAddress: @unchecked Sendable {
    // @unchecked: only `ChunkPipeline.deinit` uses it, once every thread is done with the buffer.
    var pointer: UnsafeMutableRawBufferPointer
}
