import Credentials
import Foundation
import Patience
import Programs
import Scratch
import SecurityFixtures
import Testing

@Suite("SHA-256", .onTestThreads)
struct SHA256Tests {
    @Test("digests agree with coreutils' sha256sum at every padding boundary", arguments: [0, 1, 55, 56, 63, 64, 65, 119, 120, 200])
    func agreesWithSha256sum(length: Int) throws {
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        try withTemporaryDirectory { scratch in
            let file = scratch.appendingPathComponent("input")
            try Data(bytes).write(to: file)
            let expected = try Program.checkBlocking("/usr/bin/sha256sum", [file.path]).prefix(64)
            let actual = SHA256.digest(bytes).map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
            #expect(actual == expected)
        }
    }
}
