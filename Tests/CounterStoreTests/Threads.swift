import Runtime

/// Runs `body(index)` for each index in 0..<count, each on a thread of its own (writers racing
/// on their own connections), and returns once every one has returned.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let threads = (0..<count).map { index in BlockingThread(name: "test-\(index)") { body(index) } }
    for thread in threads { thread.join() }
}
