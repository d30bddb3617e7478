import Foundation

/// An OS thread of its own for blocking work — librdkafka polls, SQLite writes, file I/O,
/// parsing workers, sleeping loops — so that none of it ever occupies a thread of Swift's
/// cooperative pool. The one way the code base starts a thread.
/// `join()` (or `await joined()`) waits for the body to return; the owner makes the body
/// return by its own means first (a stop flag, a wake-up).
public final class BlockingThread: Sendable {
    private let finished = Completion<Void>()

    /// Starts `body` at once on a new thread named `name` (Linux keeps 15 bytes; `ps -L`,
    /// `top -H`, perf and the load test show it). `stackSize` in bytes, nil for the default.
    public init(name: String, stackSize: Int? = nil, body: @escaping @Sendable () -> Void) {
        let finished = self.finished
        let thread = Thread {
            // Named from inside: on Linux a name set before start() is not applied.
            Self.nameCurrentThread(name)
            body()
            finished.succeed()
        }
        if let stackSize { thread.stackSize = stackSize }
        thread.start()
    }

    /// Blocks until the body has returned.
    public func join() {
        _ = finished.wait()
    }

    /// Suspends the task, not a thread, until the body has returned.
    public func joined() async {
        _ = await finished.result
    }

    /// Whether the body has returned.
    public var hasFinished: Bool { finished.finished != nil }

    /// Runs `body` on a thread of its own and awaits its result: how async code calls
    /// something that blocks.
    public static func run<Value: Sendable>(
        name: String, _ body: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        let outcome = Completion<Value>()
        _ = BlockingThread(name: name) { outcome.complete(Result { try body() }) }
        return try await outcome.result.get()
    }

    /// Blocks the calling thread for `duration` (work that can be stopped sleeps on its
    /// `StopSignal` instead).
    public static func sleep(for duration: Duration) {
        guard duration > .zero else { return }
        Thread.sleep(forTimeInterval: duration.seconds)
    }

    /// The calling thread's name as the kernel shows it (`ps -L`, `top -H`, perf).
    public static var currentName: String {
        guard let comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8) else { return "" }
        return comm.hasSuffix("\n") ? String(comm.dropLast()) : comm
    }

    /// Linux refuses names over 15 bytes (the name then stays unset): keep the longest prefix
    /// of whole characters that fits. Foundation passes it to `pthread_setname_np` only once the
    /// parent has recorded the new thread's id, so a thread that runs before its parent has
    /// done so keeps the parent's name: set it again until the kernel shows it (a few tries at most).
    private static func nameCurrentThread(_ name: String) {
        var kept = ""
        for character in name {
            guard kept.utf8.count + character.utf8.count <= 15 else { break }
            kept.append(character)
        }
        for _ in 0..<1_000 {
            Thread.current.name = kept
            if currentName == kept { return }
            Thread.sleep(forTimeInterval: 0.000_1)
        }
    }
}
