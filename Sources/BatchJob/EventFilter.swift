import CounterpointCore
import EventLogs

/// The per-line step both ways of reading a batch share (`GroupProcessor` for files of one
/// hour, `UnpartitionedPass` for files of any hour): parse the line with the core parser,
/// count it, record a rejection with its file and line, count a valid event of an hour outside
/// the target, and hand back the events that remain. One filter per worker; what each path then
/// does with an event (de-duplicate and count, or keep a record of it) stays with that path.
struct EventFilter {
    let target: Coverage
    /// Lines read, valid events, events outside the target and rejections so far; the caller
    /// adds what it finds later (duplicates).
    var tally = GroupTally()
    /// The file being read, as its place in the run's input, for the origin of each sample.
    var file = (unit: -1, index: 0)
    /// The hour last found inside the target, to skip the coverage lookup for the next event.
    private var lastTargetHour = Hour(index: .min)

    init(target: Coverage) {
        self.target = target
    }

    /// The event on `line` if it is a valid play of a target hour, with its waveform bucket,
    /// client and country in `dimensions`; `nil` for a blank line (not an event), a rejected
    /// line or an event of another hour, each counted in `tally`.
    @inline(__always)
    mutating func admit(_ line: UnsafeRawBufferPointer, dimensions: inout PlayDimensions,
                        path: String, lineNumber: Int) -> Event? {
        let rejection: EventRejection
        switch EventParser.parse(line, dimensions: &dimensions) {
        case .success(let event):
            tally.eventsRead += 1
            tally.valid += 1
            let hour = event.hour
            if hour != lastTargetHour {
                guard target.contains(hour) else {
                    tally.outsideRange += 1
                    return nil
                }
                lastTargetHour = hour
            }
            return event
        case .failure(let failure):
            // Blank lines separate nothing in NDJSON; they are not events.
            guard failure.reason != .empty else { return nil }
            rejection = failure
        }
        tally.eventsRead += 1
        if tally.rejections.wantsSample {
            tally.sampleOrigins.append(LineOrigin(unit: file.unit, file: file.index, line: lineNumber))
        }
        tally.rejections.record(Self.describingCut(rejection, line), source: "\(path):\(lineNumber)", payload: line)
        return nil
    }

    /// The log reader cuts a line longer than its limit to the limit: the parser then sees that
    /// many bytes, not the line's length, which the reader never learns.
    private static func describingCut(_ rejection: EventRejection, _ line: UnsafeRawBufferPointer) -> EventRejection {
        guard rejection.reason == .tooLarge, line.count >= LogReader.defaultMaxLineBytes else { return rejection }
        var described = rejection
        described.message = "line is at least \(LogReader.defaultMaxLineBytes) bytes long (read no further), more than the limit of \(EventLimits.maxEventBytes)"
        return described
    }
}
