import CCrypt
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// bcrypt through libxcrypt (`crypt_rn`, `crypt_gensalt_rn`): the only code that reaches libcrypt.
/// Each call has its own `struct crypt_data`, so calls may run on any number of threads at once.
enum Bcrypt {
    /// `password` hashed under `setting`. A whole stored hash is a valid setting (crypt reads its
    /// prefix, cost and salt from it), so comparing the result with the stored hash verifies it.
    static func hash(_ password: [UInt8], setting: String) throws(CredentialsError) -> [UInt8] {
        var phrase = password
        phrase.append(0)
        let size = MemoryLayout<crypt_data>.size
        let data = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: MemoryLayout<crypt_data>.alignment)
        // libxcrypt requires the first use of a crypt_data to start from zeroes.
        data.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        defer {
            // Leave no copy of the password behind, in our buffer or in libcrypt's scratch space.
            explicit_bzero(data, size)
            data.deallocate()
            wipe(&phrase)
        }
        errno = 0
        let result = phrase.withUnsafeBufferPointer { phraseBytes in
            phraseBytes.withMemoryRebound(to: CChar.self) { crypt_rn($0.baseAddress, setting, data, Int32(size)) }
        }
        guard let result else { throw .cryptFailure("hash a password with bcrypt", errno: errno) }
        return Array(UnsafeRawBufferPointer(start: result, count: strlen(result)))
    }

    /// A fresh bcrypt setting (`$2b$`, this cost, a random salt from the system's generator).
    static func newSetting(cost: Int) throws(CredentialsError) -> String {
        var output = [CChar](repeating: 0, count: Int(CRYPT_GENSALT_OUTPUT_SIZE))
        errno = 0
        guard crypt_gensalt_rn("$2b$", UInt(cost), nil, 0, &output, Int32(output.count)) != nil else {
            throw .cryptFailure("make a bcrypt salt", errno: errno)
        }
        return String(decoding: output.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// True when `left` and `right` hold the same bytes, in a time that depends only on their
/// lengths: no early exit at the first difference for a timing probe to find.
func constantTimeEqual(_ left: [UInt8], _ right: [UInt8]) -> Bool {
    guard left.count == right.count else { return false }
    var difference: UInt8 = 0
    for index in left.indices { difference |= left[index] ^ right[index] }
    return difference == 0
}
