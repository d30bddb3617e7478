import Foundation

/// A value shared between a replay thread and the threads that start, stop or watch it.
final class Protected<Value>: @unchecked Sendable {
    // Safe to share: `value` is only read and written under `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.withLock { body(&value) }
    }
}

/// A flag set once from any thread and read from another: the replay loop's stop request.
final class ProtectedFlag: Sendable {
    private let flag = Protected(false)

    func set() {
        flag.withLock { $0 = true }
    }

    var isSet: Bool {
        flag.withLock { $0 }
    }
}
