import CounterpointCore
import EventLogs
import Foundation
import Generator
import Logging
import Runtime

/// 48 hours of closed history ending at the current hour, which the first batch run covers.
/// Hours that hold logs already (an earlier run's history, or the plays its archiver filed) are
/// left as they are, so a second run neither adds history on top of real plays nor makes the
/// batch layer rebuild hours that did not change.
///
/// `progress` is told the events written so far, now and then (every 65,536); what it throws
/// ends the generation at once, the hour being written removed (see `Generator.generate`).
func generateDemoHistory(events: Int, into logDirectory: String, clock: WallClock, logger: Logger,
                         progress: @escaping (_ written: Int) throws -> Void = { _ in }) throws {
    var configuration = GeneratorConfiguration()
    configuration.events = events
    configuration.tracks = 5_000
    configuration.hours = RunConfiguration.demoHistoryHours
    configuration.clock = clock
    configuration.duplicateRate = 0.01
    configuration.malformedRate = 0.001
    configuration.signalShare = SignalMix.realisticShare  // every signal, as SPEC §11 asks of the demo
    if FileManager.default.fileExists(atPath: logDirectory) {
        let inventory = try LogDiscovery.inventory(of: [logDirectory])
        configuration.keptHours = Set(inventory.files.compactMap(\.hour) + inventory.closedHours)
    }
    let hoursToWrite = RunConfiguration.demoHistoryHours - configuration.keptHours.count
    logger.info("generating demo history", metadata: [
        "logs.directory": "\(logDirectory)", "logs.events": "\(events)", "logs.hours": "\(hoursToWrite)",
        "logs.estimated_mb": "\(configuration.estimatedBytes / 1_000_000)",
    ])
    let logThrottle = LogThrottle(every: .seconds(2))
    let summary = try Generator.generate(configuration, into: logDirectory) { written in
        try progress(written)
        guard logThrottle.admit() != nil, written < events else { return }
        logger.info("generating demo history: \(written * 100 / max(1, events)) % (\(written) of \(events) events)")
    }
    logger.info("demo history generated", metadata: [
        "logs.directory": "\(logDirectory)", "logs.events": "\(summary.events)", "logs.files": "\(summary.files)",
        "logs.hours_kept": "\(RunConfiguration.demoHistoryHours - summary.files)",
    ])
}

/// `1234567` as `1,234,567`: counts as people read them in `/readyz` and `/v1/status`.
func grouped(_ number: Int) -> String {
    let digits = String(number.magnitude)
    var result = ""
    for (index, digit) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
        result.append(digit)
    }
    return number < 0 ? "-" + result : result
}
