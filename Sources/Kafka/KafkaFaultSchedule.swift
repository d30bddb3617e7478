/// Faults to inject into a `KafkaMockCluster` at set moments: what `run --embedded-faults`
/// takes, so the load test and the drills can break the embedded broker (see docs/faults.md).
///
/// Text form: comma-separated steps `SECONDS:FAULT`, SECONDS after the start, where FAULT is
/// - `down:BROKER:SECONDS` — a broker (1…n, or `all`) down for that long, then up again;
/// - `leaders` — every partition's leader moves to the next broker;
/// - `coordinator:BROKER` — the consumer groups' coordinator moves to that broker;
/// - `errors:REQUEST:COUNT` — the next COUNT requests of that type fail with the error a broker
///   gives while leaders or coordinators move (REQUEST: fetch, offset-commit, heartbeat,
///   join-group, sync-group, produce, metadata, offset-fetch, find-coordinator, list-offsets);
/// - `slow:REQUEST:COUNT:MILLISECONDS` — the next COUNT requests of that type to each broker
///   answered that late;
/// plus `repeat:SECONDS` to start the schedule over every SECONDS. `drill` is `KafkaFaultSchedule.drill`.
public struct KafkaFaultSchedule: Sendable, Equatable, CustomStringConvertible {
    public enum Fault: Sendable, Equatable {
        /// nil: every broker.
        case down(broker: Int?, for: Duration)
        case moveLeaders
        case moveCoordinator(to: Int)
        case errors(KafkaMockCluster.Request, count: Int)
        case slow(KafkaMockCluster.Request, count: Int, by: Duration)

        /// How faults are counted in reports: `broker-down`, `cluster-down`, `leaders-moved`,
        /// `coordinator-moved`, `errors:fetch`, `slow:fetch`, …
        public var kind: String {
            switch self {
            case .down(let broker, _): broker == nil ? "cluster-down" : "broker-down"
            case .moveLeaders: "leaders-moved"
            case .moveCoordinator: "coordinator-moved"
            case .errors(let request, _): "errors:\(request.flagName)"
            case .slow(let request, _, _): "slow:\(request.flagName)"
            }
        }

        /// How long the fault lasts by itself: a broker's downtime; zero for the others, whose
        /// effects last as long as the clients take to recover.
        public var duration: Duration {
            if case .down(_, let duration) = self { duration } else { .zero }
        }
    }

    public struct Step: Sendable, Equatable {
        public var at: Duration
        public var fault: Fault
    }

    public var steps: [Step]
    /// When the schedule starts over; nil: it runs once.
    public var period: Duration?
    public let description: String

    /// A minute of every kind of fault, repeated: one broker down for 5 s, leaders and the
    /// coordinator moving, bursts of errors on fetch, offset commit and group coordination, and
    /// the whole cluster unreachable for 4 s.
    public static let drill = try! KafkaFaultSchedule(parsing:
        "5:down:2:5,15:leaders,20:errors:fetch:20,24:errors:offset-commit:10,28:errors:heartbeat:3,"
        + "29:errors:join-group:2,29:errors:sync-group:2,35:coordinator:3,38:slow:fetch:10:500,45:down:all:4,repeat:60")

    public init(parsing text: String) throws(KafkaError) {
        if text == "drill" { self = Self.drill; return }
        description = text
        steps = []
        period = nil
        for item in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !item.isEmpty {
            let fields = item.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            func bad(_ why: String) -> KafkaError {
                KafkaError.invalidArgument("fault \"\(item)\": \(why)", context: "reading the fault schedule")
            }
            if fields[0] == "repeat" {
                guard fields.count == 2, let seconds = Double(fields[1]), seconds > 0 else { throw bad("expected repeat:SECONDS") }
                period = .milliseconds(Int(seconds * 1000))
                continue
            }
            guard fields.count >= 2, let seconds = Double(fields[0]), seconds >= 0 else {
                throw bad("expected SECONDS:FAULT")
            }
            let arguments = Array(fields.dropFirst(2))
            func request(_ index: Int) throws(KafkaError) -> KafkaMockCluster.Request {
                guard index < arguments.count, let request = KafkaMockCluster.Request(flagName: arguments[index]) else {
                    throw bad("unknown request type; one of " + KafkaMockCluster.Request.allCases.map(\.flagName).joined(separator: ", "))
                }
                return request
            }
            func number(_ index: Int) throws(KafkaError) -> Int {
                guard index < arguments.count, let value = Int(arguments[index]), value > 0 else { throw bad("expected a positive number") }
                return value
            }
            let fault: Fault
            switch (fields[1], arguments.count) {
            case ("down", 2):
                fault = .down(broker: arguments[0] == "all" ? nil : try number(0), for: .milliseconds(try number(1) * 1000))
            case ("leaders", 0):
                fault = .moveLeaders
            case ("coordinator", 1):
                fault = .moveCoordinator(to: try number(0))
            case ("errors", 2):
                fault = .errors(try request(0), count: try number(1))
            case ("slow", 3):
                fault = .slow(try request(0), count: try number(1), by: .milliseconds(try number(2)))
            default:
                throw bad("expected down:BROKER:SECONDS, leaders, coordinator:BROKER, errors:REQUEST:COUNT or slow:REQUEST:COUNT:MS")
            }
            steps.append(Step(at: .milliseconds(Int(seconds * 1000)), fault: fault))
        }
        guard !steps.isEmpty else {
            throw KafkaError.invalidArgument("no faults in \"\(text)\"", context: "reading the fault schedule")
        }
        steps.sort { $0.at < $1.at }
        if let period, let last = steps.last?.at, period <= last {
            throw KafkaError.invalidArgument("repeat:SECONDS must come after the last fault", context: "reading the fault schedule")
        }
    }
}

extension KafkaMockCluster.Request {
    /// The request's name in a schedule: `offset-commit` for `.offsetCommit`.
    public var flagName: String {
        rawValue.reduce(into: "") { name, character in
            if character.isUppercase { name += "-" + character.lowercased() } else { name.append(character) }
        }
    }

    init?(flagName: String) {
        guard let request = Self.allCases.first(where: { $0.flagName == flagName }) else { return nil }
        self = request
    }
}
