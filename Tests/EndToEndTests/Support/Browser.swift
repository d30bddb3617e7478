import Foundation
import Patience
import Testing

/// Headless Chromium (Debian's `chromium`, installed by scripts/setup) driven over the
/// DevTools protocol on a pipe (`--remote-debugging-pipe`: the browser reads commands on fd 3
/// and writes answers and events on fd 4, one JSON object per message, each ended by a NUL).
/// A pipe rather than a websocket keeps the client to plain reads and writes. Every host name
/// resolves to nothing, so the page cannot reach beyond 127.0.0.1 even if it tried.
final class Browser {
    private let pid: pid_t
    private let commands: Int32
    private let answers: Int32
    private var buffer: [UInt8] = []
    private var nextID = 0
    private var closed = false
    /// Every event received so far, in order (messages without an `id`).
    private(set) var events: [[String: Any]] = []
    /// The tabs `openTab` made and `closeTabs` has not closed yet.
    private var targets: [String] = []
    let logURL: URL

    /// The browser's path, or a failure that says how to install it: the browser tests are
    /// part of the suite, so a machine without Chromium fails them rather than skipping them.
    static func executable() throws -> String {
        let candidates = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .flatMap { ["\($0)/chromium", "\($0)/chromium-browser"] }
        guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw CommandError(description: "the browser tests need Chromium: run ./scripts/setup (it installs Debian's `chromium`)")
        }
        return path
    }

    init(scratch: URL) throws {
        let executable = try Self.executable()
        logURL = scratch.appendingPathComponent("chromium.log")
        let profile = scratch.appendingPathComponent("chromium-profile")
        let arguments = [
            executable, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
            "--user-data-dir=\(profile.path)", "--no-first-run", "--no-default-browser-check",
            "--disable-extensions", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-default-apps", "--hide-scrollbars", "--mute-audio",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "about:blank",
        ]
        var toBrowser: [Int32] = [0, 0]
        var fromBrowser: [Int32] = [0, 0]
        guard pipe(&toBrowser) == 0, pipe(&fromBrowser) == 0 else {
            throw CommandError(description: "pipe: \(String(cString: strerror(errno)))")
        }
        // Close-on-exec, so that no other child inherits them (dup2 into 3 and 4 clears it for the browser).
        for fd in toBrowser + fromBrowser { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logURL.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Pipe ends are above 4 (fds 0…2 are taken and 3/4 would need care); dup2 clears close-on-exec.
        posix_spawn_file_actions_adddup2(&actions, toBrowser[0], 3)
        posix_spawn_file_actions_adddup2(&actions, fromBrowser[1], 4)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, executable, &actions, nil, argv, environ)
        Glibc.close(toBrowser[0])
        Glibc.close(fromBrowser[1])
        guard spawned == 0 else {
            Glibc.close(toBrowser[1]); Glibc.close(fromBrowser[0])
            throw CommandError(description: "cannot start \(executable): \(String(cString: strerror(spawned)))")
        }
        pid = child
        commands = toBrowser[1]
        answers = fromBrowser[0]
    }

    deinit { quit() }

    /// Ends the browser (SIGKILL: its profile is scratch) and reaps it.
    func quit() {
        guard !closed else { return }
        closed = true
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        Glibc.close(commands)
        Glibc.close(answers)
    }

    /// Sends one command and waits for its answer, collecting the events that arrive meanwhile.
    @discardableResult
    func send(_ method: String, _ params: [String: Any] = [:], session: String? = nil,
              timeout: Duration = .seconds(20)) throws -> [String: Any] {
        nextID += 1
        let id = nextID
        var message: [String: Any] = ["id": id, "method": method, "params": params]
        if let session { message["sessionId"] = session }
        var bytes = [UInt8](try JSONSerialization.data(withJSONObject: message))
        bytes.append(0)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(commands, $0.baseAddress, $0.count) }
            guard count > 0 else { throw CommandError(description: "the browser stopped reading (\(method)); log: \(log)") }
            written += count
        }
        let deadline = ContinuousClock.now + timeout
        while true {
            guard let reply = try receive(until: deadline) else {
                throw CommandError(description: "no answer to \(method) within \(timeout); log: \(log)")
            }
            guard let replyID = reply["id"] as? Int else {
                events.append(reply)
                continue
            }
            guard replyID == id else { continue }
            if let error = reply["error"] as? [String: Any] {
                throw CommandError(description: "\(method) failed: \(error)")
            }
            return reply["result"] as? [String: Any] ?? [:]
        }
    }

    /// Reads events until none arrives for `quiet`, so that `events` holds what happened so far.
    func drain(quiet: Duration = .milliseconds(50)) throws {
        while let event = try receive(until: ContinuousClock.now + quiet) { events.append(event) }
    }

    /// One message, or nil at the deadline.
    private func receive(until deadline: ContinuousClock.Instant) throws -> [String: Any]? {
        while true {
            if let end = buffer.firstIndex(of: 0) {
                let message = Data(buffer[..<end])
                buffer.removeSubrange(...end)
                guard let object = try JSONSerialization.jsonObject(with: message) as? [String: Any] else {
                    throw CommandError(description: "the browser sent something other than a JSON object")
                }
                return object
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return nil }
            var poller = pollfd(fd: answers, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min(left.components.seconds * 1_000 + left.components.attoseconds / 1_000_000_000_000_000 + 1, 60_000))
            let ready = poll(&poller, 1, milliseconds)
            guard ready > 0 else {
                if ready < 0 && errno != EINTR { throw CommandError(description: "poll: \(String(cString: strerror(errno)))") }
                continue
            }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { read(answers, $0.baseAddress, $0.count) }
            guard count > 0 else { throw CommandError(description: "the browser closed its pipe; log: \(log)") }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    var log: String { String((try? String(contentsOf: logURL, encoding: .utf8))?.suffix(2_000) ?? "") }

    /// Closes every tab `openTab` made, so that a browser shared by several tests does not keep
    /// their pages refreshing in the background.
    func closeTabs() throws {
        for target in targets { try send("Target.closeTarget", ["targetId": target]) }
        targets = []
    }

    /// A fresh tab of the given size, attached, with the domains the tests watch enabled.
    func openTab(width: Int, height: Int, mobile: Bool = false) throws -> Tab {
        let target = try send("Target.createTarget", ["url": "about:blank"])
        guard let targetID = target["targetId"] as? String else { throw CommandError(description: "no targetId: \(target)") }
        let attached = try send("Target.attachToTarget", ["targetId": targetID, "flatten": true])
        guard let session = attached["sessionId"] as? String else { throw CommandError(description: "no sessionId: \(attached)") }
        targets.append(targetID)
        let tab = Tab(browser: self, session: session)
        for domain in ["Page", "Runtime", "Network", "Log"] { try send("\(domain).enable", session: session) }
        try tab.resize(width: width, height: height, mobile: mobile)
        return tab
    }
}

/// One page of the browser.
struct Tab {
    let browser: Browser
    let session: String

    @discardableResult
    func send(_ method: String, _ params: [String: Any] = [:]) throws -> [String: Any] {
        try browser.send(method, params, session: session)
    }

    func resize(width: Int, height: Int, mobile: Bool = false) throws {
        try send("Emulation.setDeviceMetricsOverride",
                 ["width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile])
    }

    func navigate(_ url: String) throws {
        try send("Page.navigate", ["url": url])
    }

    /// The value of a JavaScript expression, as JSON turns it into Foundation objects.
    func evaluate(_ expression: String) throws -> Any? {
        let answer = try send("Runtime.evaluate", ["expression": expression, "returnByValue": true])
        if let exception = answer["exceptionDetails"] {
            throw CommandError(description: "evaluating `\(expression.prefix(200))` threw: \(exception)")
        }
        return (answer["result"] as? [String: Any])?["value"]
    }

    func text(_ selector: String) throws -> String? {
        try evaluate("(() => { const e = document.querySelector(\(Self.quoted(selector))); return e ? e.textContent : null })()") as? String
    }

    /// Polls `condition` (a JavaScript expression) until it is true. A deadline, not a timed
    /// assertion: the page refreshes itself every 5 s and the wait ends as soon as it has.
    func wait(until condition: String, timeout: Duration = .seconds(20), _ what: String) async throws {
        // Mid-navigation the elements may not exist yet: that is "not yet", not a failure.
        let shown = try await eventually(within: timeout, every: .milliseconds(50)) {
            try evaluate("(() => { try { return !!(\(condition)) } catch (_) { return false } })()") as? Bool == true
        }
        if shown { return }
        let body = try evaluate("document.body ? document.body.innerText.slice(0, 1500) : ''") as? String ?? ""
        throw CommandError(description: "the page did not show \(what) within \(timeout); it shows:\n\(body)\nbrowser log: \(browser.log)")
    }

    /// Presses and releases `key` (a DOM key name with its Windows key code, Enter by default)
    /// in the focused element, as a person's keyboard does: Enter on a focused button clicks it.
    func press(_ key: String = "Enter", code: Int = 13, text: String = "\r") throws {
        try send("Input.dispatchKeyEvent", ["type": "keyDown", "key": key, "code": key, "windowsVirtualKeyCode": code, "text": text])
        try send("Input.dispatchKeyEvent", ["type": "keyUp", "key": key, "code": key, "windowsVirtualKeyCode": code])
    }

    /// A PNG of the whole page at the current width.
    func screenshot() throws -> Data {
        let answer = try send("Page.captureScreenshot", ["format": "png", "captureBeyondViewport": true])
        guard let base64 = answer["data"] as? String, let png = Data(base64Encoded: base64) else {
            throw CommandError(description: "no screenshot data")
        }
        return png
    }

    /// What the page's session did so far: URLs it requested, and script errors and error
    /// messages it logged (network failures aside: those are what some tests provoke).
    func activity() throws -> (requests: [String], errors: [String]) {
        try browser.drain()
        var requests: [String] = []
        var errors: [String] = []
        for event in browser.events where event["sessionId"] as? String == session {
            let params = event["params"] as? [String: Any] ?? [:]
            switch event["method"] as? String {
            case "Network.requestWillBeSent":
                requests.append((params["request"] as? [String: Any])?["url"] as? String ?? "?")
            case "Runtime.exceptionThrown":
                errors.append("exception: \(params["exceptionDetails"] ?? params)")
            case "Runtime.consoleAPICalled":
                if ["error", "assert", "warning"].contains(params["type"] as? String) { errors.append("console: \(params["args"] ?? params)") }
            case "Log.entryAdded":
                let entry = params["entry"] as? [String: Any] ?? [:]
                if entry["source"] as? String != "network", ["error", "warning"].contains(entry["level"] as? String) {
                    errors.append("log: \(entry["source"] ?? "?"): \(entry["text"] ?? "?")")
                }
            default: break
            }
        }
        return (requests, errors)
    }

    /// A JavaScript string literal (JSON's string syntax is a subset).
    static func quoted(_ text: String) -> String {
        let array = (try? JSONSerialization.data(withJSONObject: [text])).map { String(decoding: $0, as: UTF8.self) } ?? "[\"\"]"
        return String(array.dropFirst().dropLast())
    }
}

/// Expects a page's `activity` to have asked nothing of any host but `origin`, and to have
/// logged no script error.
func expectOwnOriginOnlyAndNoErrors(_ activity: (requests: [String], errors: [String]), origin: String,
                                    sourceLocation: SourceLocation = #_sourceLocation) {
    let elsewhere = activity.requests.filter { !$0.hasPrefix(origin + "/") }
    #expect(elsewhere.isEmpty, "\(elsewhere)", sourceLocation: sourceLocation)
    #expect(activity.errors.isEmpty, "\(activity.errors)", sourceLocation: sourceLocation)
}
