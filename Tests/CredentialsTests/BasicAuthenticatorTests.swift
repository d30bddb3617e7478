import Credentials
import Foundation
import Patience
import Runtime
import Scratch
import SecurityFixtures
import Testing

@Suite("HTTP Basic credentials checked against a password file", .onTestThreads)
struct BasicAuthenticatorTests {
    /// alice and bob, hashed by `htpasswd -B`.
    static func withAuthenticator<T>(concurrentHashing: Int = 2, cost: Int = 5,
                                     _ body: (BasicAuthenticator, URL) throws -> T) throws -> T {
        try withTemporaryDirectory { scratch in
            let file = scratch.appendingPathComponent("htpasswd")
            try htpasswd(file, user: "alice", password: "correct horse: battery", cost: cost)
            try htpasswd(file, user: "bob", password: "hunter2", cost: cost)
            let authenticator = try BasicAuthenticator(passwordFile: .load(path: file.path), concurrentHashing: concurrentHashing)
            return try body(authenticator, file)
        }
    }

    @Test("the passwords htpasswd -B hashed are granted to their users, and nothing else is")
    func rightAndWrongPasswords() throws {
        try Self.withAuthenticator { authenticator, _ in
            #expect(authenticator.verdict(authorization: basicHeader("alice", "correct horse: battery")) == .granted(user: "alice"))
            #expect(authenticator.verdict(authorization: basicHeader("bob", "hunter2")) == .granted(user: "bob"))
            #expect(authenticator.verdict(authorization: basicHeader("alice", "hunter2")) == .denied)
            #expect(authenticator.verdict(authorization: basicHeader("bob", "hunter")) == .denied)
            #expect(authenticator.verdict(authorization: basicHeader("bob", "hunter22")) == .denied)
            #expect(authenticator.verdict(authorization: basicHeader("mallory", "hunter2")) == .denied)
            #expect(authenticator.verdict(authorization: basicHeader("Bob", "hunter2")) == .denied)
            #expect(authenticator.verdict(authorization: basicHeader("bob", "")) == .denied)
            // libcrypt reads a C string: a NUL must not cut a wrong password down to the right one.
            #expect(authenticator.verdict(authorization: basicHeader("bob", "hunter2\u{0}extra")) == .denied)
            // Once remembered, a password is still checked whole.
            #expect(authenticator.verdict(authorization: basicHeader("bob", "hunter2\u{0}extra")) == .denied)
            #expect(authenticator.verdict(authorization: "basic  " + Data("bob:hunter2".utf8).base64EncodedString()) == .granted(user: "bob"))
        }
    }

    @Test("$2b$ hashes verify like the $2y$ ones htpasswd writes (the same algorithm)")
    func twoBHashes() throws {
        try Self.withAuthenticator { _, file in
            let rewritten = try String(contentsOf: file, encoding: .utf8).replacingOccurrences(of: "$2y$", with: "$2b$")
            #expect(rewritten.contains("$2b$"))
            let authenticator = try BasicAuthenticator(
                passwordFile: PasswordFile(path: file.path, contents: Array(rewritten.utf8)), concurrentHashing: 1)
            #expect(authenticator.verdict(authorization: basicHeader("bob", "hunter2")) == .granted(user: "bob"))
            #expect(authenticator.verdict(authorization: basicHeader("bob", "hunter3")) == .denied)
        }
    }

    @Test("a missing, foreign or malformed Authorization header is denied", arguments: [
        nil, "", "Bearer abc", "Basic", "Basic ", "Basic !!!!", "Basic " + Data("no colon".utf8).base64EncodedString(),
        "Basic Ym9iOmh1bnRlcjI", "Basic Ym9iOmh1bnRlcjI=x", "Digest username=\"bob\"", "Basicbm9wZQ==",
    ] as [String?])
    func malformedHeaders(header: String?) throws {
        try Self.withAuthenticator { authenticator, _ in
            #expect(authenticator.verdict(authorization: header) == .denied)
            #expect(authenticator.hashings == 0, "nothing to hash without a user and a password")
        }
    }

    @Test("a credential that verified once is not hashed again; wrong ones always are")
    func goodCredentialsAreRemembered() throws {
        try Self.withAuthenticator { authenticator, _ in
            for _ in 0..<200 {
                #expect(authenticator.verdict(authorization: basicHeader("alice", "correct horse: battery")) == .granted(user: "alice"))
            }
            #expect(authenticator.hashings == 1)
            for attempt in 0..<3 {
                #expect(authenticator.verdict(authorization: basicHeader("alice", "guess \(attempt)")) == .denied)
            }
            #expect(authenticator.hashings == 4)
            #expect(authenticator.verdict(authorization: basicHeader("alice", "correct horse: battery")) == .granted(user: "alice"))
            #expect(authenticator.hashings == 4)
        }
    }

    @Test("while wrong passwords hold every hashing permit, a remembered credential is still granted every time")
    func wrongPasswordsCannotStarveGoodOnes() throws {
        // Cost 8: each wrong guess holds the only permit for tens of milliseconds.
        try Self.withAuthenticator(concurrentHashing: 1, cost: 8) { authenticator, _ in
            let good = basicHeader("bob", "hunter2")
            #expect(authenticator.verdict(authorization: good) == .granted(user: "bob"))
            let outcomes = Tally()
            let stop = Tally()
            let attackers = (0..<4).map { index in
                BlockingThread(name: "test-guesser-\(index)") {
                    var attempt = 0
                    while stop.count(of: "stop") == 0 && attempt < 500 {
                        let verdict = authenticator.verdict(authorization: basicHeader("bob", "guess \(index)-\(attempt)"))
                        outcomes.add(verdict == .busy ? "busy" : verdict == .denied ? "denied" : "granted")
                        attempt += 1
                    }
                }
            }
            var goodChecks = 0
            while goodChecks < 200 || (outcomes.count(of: "busy") == 0 && goodChecks < 100_000) {
                #expect(authenticator.verdict(authorization: good) == .granted(user: "bob"))
                goodChecks += 1
            }
            stop.add("stop")
            for attacker in attackers { attacker.join() }
            #expect(outcomes.count(of: "granted") == 0)
            #expect(outcomes.count(of: "busy") > 0, "four guessers and one permit: some were turned away at once")
            #expect(outcomes.count(of: "denied") + 1 == authenticator.hashings, "only the permitted guesses were hashed")
        }
    }
}

/// Counts of labels, shared between test threads.
final class Tally: Sendable {
    private let counts = Locked<[String: Int]>([:])

    func add(_ label: String) {
        counts.withLock { $0[label, default: 0] += 1 }
    }

    func count(of label: String) -> Int {
        counts.withLock { $0[label, default: 0] }
    }
}
