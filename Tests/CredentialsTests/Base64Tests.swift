import Credentials
import Foundation
import Patience
import Testing

@Suite("base64", .onTestThreads)
struct Base64Tests {
    @Test("encoding and decoding agree with Foundation on every length up to 64 bytes")
    func agreesWithFoundation() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...64 {
            let bytes = (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            let foundation = Data(bytes).base64EncodedString()
            #expect(Base64.encode(bytes) == foundation)
            #expect(Base64.decode(foundation[...].utf8) == bytes)
        }
    }

    @Test("anything but canonical padded base64 is refused", arguments: [
        "Zg", "Zg=", "Zg===", "Z===", "Zh==", "Zm9=", "Zm9v====", "Zg==Zm9v", "Zm 9v", "Zm9v\n", "Zm-v", "Zm_v",
    ])
    func refusesNonCanonical(text: String) {
        #expect(Base64.decode(text[...].utf8) == nil)
    }
}
