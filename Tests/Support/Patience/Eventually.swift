/// Waiting in tests for what another thread or process does, without judging its speed.
///
/// Every suite runs in one test process, and its async tests share Swift's cooperative pool:
/// two threads on a two-core machine, which CPU-heavy tests (truth computed over a million
/// events, generated logs, benchmarks' fixtures) can hold for minutes. A waiting task may
/// therefore next run long after its limit has passed. So every wait here asks once more after
/// the limit: the limit only bounds a hang, and what came true while the waiter could not run
/// still counts.

/// Asks `condition` every `interval` until it holds or `limit` has passed, then once more;
/// returns whether it held.
@discardableResult
public func eventually(within limit: Duration, every interval: Duration = .milliseconds(20),
                       _ condition: () async throws -> Bool) async throws -> Bool {
    try await eventualValue(within: limit, every: interval) { try await condition() ? true : nil } ?? false
}

/// The first value `probe` gives, asked every `interval` until `limit` has passed and once
/// more after; nil if it gave none. A probe that knows waiting is pointless (the process it
/// watches has ended) throws.
public func eventualValue<Value>(within limit: Duration, every interval: Duration = .milliseconds(20),
                                 _ probe: () async throws -> Value?) async throws -> Value? {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if let value = try await probe() { return value }
        try await Task.sleep(for: interval)
    }
    return try await probe()
}

/// Asks `progress` every `interval` until it reaches `target`, for as long as it keeps rising:
/// gives up only once it has not risen for `stall` (a hang), however long the whole takes on a
/// loaded machine. `progress` answers nil when waiting is pointless (the process it watches has
/// ended). Returns the last value it gave.
@discardableResult
public func progressValue(reaching target: Int, stall: Duration, every interval: Duration = .milliseconds(100),
                          _ progress: () async throws -> Int?) async throws -> Int? {
    guard var last = try await progress() else { return nil }
    var lastRise = ContinuousClock.now
    while last < target, ContinuousClock.now - lastRise < stall {
        try await Task.sleep(for: interval)
        guard let now = try await progress() else { return last }
        if now > last { (last, lastRise) = (now, .now) }
    }
    return last
}
