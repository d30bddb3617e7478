import Foundation

/// Runs `body(index)` for each index in 0..<count, each on a thread of its own (writers racing
/// on their own connections), and returns once every one has returned.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let finished = DispatchGroup()
    for index in 0..<count {
        finished.enter()
        Thread {
            body(index)
            finished.leave()
        }.start()
    }
    finished.wait()
}
