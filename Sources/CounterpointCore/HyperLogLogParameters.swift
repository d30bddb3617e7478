extension HyperLogLog {
    /// What postgresql-hll calls the type modifiers of an `hll`: `log2m`, `regwidth`, `expthresh`
    /// and `sparseon`. They travel in every sketch's header, and only sketches with equal
    /// parameters can be united (docs/listeners.md).
    public struct Parameters: Sendable, Hashable, CustomStringConvertible {
        /// log2 of the number of registers (`log2m`).
        public let log2Registers: Int
        /// Bits per register (`regwidth`).
        public let registerWidth: Int
        /// `expthresh`: how many hashes a sketch keeps explicitly before it becomes registers;
        /// -1 for postgresql-hll's automatic choice, 0 for never, otherwise a power of two.
        public let explicitThreshold: Int
        /// `sparseon`: whether registers may be stored sparse (index and value of the non-zero ones).
        public let sparseEnabled: Bool

        /// Counterpoint's listener sketches: 2^12 registers of 5 bits (standard error
        /// 1.04/√4096 ≈ 1.6 %), explicit up to the automatic threshold (320 hashes), sparse on.
        /// In SQL: `hll_add_agg(hll_hash_bigint(listener_id, 0), 12, 5, -1, 1)`.
        public static let listeners = Parameters(log2Registers: 12, registerWidth: 5, explicitThreshold: -1, sparseEnabled: true)!

        /// Nil for parameters outside what both postgresql-hll and this implementation support:
        /// `log2m` 4…17 (its estimator needs more than 8 registers; it refuses more than 2^17),
        /// `regwidth` 1…5 (above 5 its large-range correction shifts a 64-bit integer past its
        /// width), `expthresh` -1, 0 or a power of two up to 8,192 (it refuses larger).
        public init?(log2Registers: Int, registerWidth: Int, explicitThreshold: Int, sparseEnabled: Bool) {
            guard (4...17).contains(log2Registers), (1...5).contains(registerWidth),
                  explicitThreshold == -1 || explicitThreshold == 0
                  || (explicitThreshold <= 8_192 && explicitThreshold.nonzeroBitCount == 1)
            else { return nil }
            self.log2Registers = log2Registers
            self.registerWidth = registerWidth
            self.explicitThreshold = explicitThreshold
            self.sparseEnabled = sparseEnabled
        }

        public var registerCount: Int { 1 << log2Registers }

        /// The bytes of a full sketch's registers: eight registers are `registerWidth` bytes.
        var fullByteCount: Int { registerCount / 8 * registerWidth }

        /// The largest value a register holds.
        var maxRegisterValue: UInt8 { UInt8((1 << registerWidth) - 1) }

        /// The most hashes an explicit sketch holds: the threshold, or automatically as many
        /// 8-byte hashes as fit in the bytes of the full registers (postgresql-hll's rule).
        public var explicitLimit: Int {
            explicitThreshold == -1 ? (registerWidth * registerCount + 7) / 8 / 8 : explicitThreshold
        }

        // MARK: Registers

        /// The register `hash` chooses and the value it gives it: the low `log2m` bits choose
        /// the register; the rest give one plus their number of trailing zeros (0 when they are
        /// all zero), capped at the register's largest value.
        @inline(__always)
        func register(of hash: Int64) -> (index: Int, value: UInt8) {
            let bits = UInt64(bitPattern: hash)
            let rest = bits >> UInt64(log2Registers)
            return (Int(bits & UInt64(registerCount - 1)), rest == 0 ? 0 : UInt8(min(rest.trailingZeroBitCount + 1, Int(maxRegisterValue))))
        }

        /// postgresql-hll's rule: registers are written sparse when that is enabled and takes
        /// strictly fewer bits than full, for `filled` non-zero registers.
        func writesSparse(filled: Int) -> Bool {
            sparseEnabled && filled * (log2Registers + registerWidth) < registerCount * registerWidth
        }

        // MARK: Header bytes

        /// The parameter byte: `regwidth - 1` in the top 3 bits, `log2m` in the low 5.
        var parameterByte: UInt8 { UInt8((registerWidth - 1) << 5 | log2Registers) }

        /// The cutoff byte: `sparseon` in bit 6, the encoded `expthresh` in the low 6 bits
        /// (63 automatic, 0 never, n for 2^(n-1)).
        var cutoffByte: UInt8 {
            let threshold = explicitThreshold == -1 ? 63 : explicitThreshold == 0 ? 0 : explicitThreshold.trailingZeroBitCount + 1
            return UInt8((sparseEnabled ? 0x40 : 0) | threshold)
        }

        /// The parameters of a header; nil when a bit is out of place or a value unsupported.
        init?(parameterByte: UInt8, cutoffByte: UInt8) {
            guard cutoffByte & 0x80 == 0 else { return nil }
            let code = Int(cutoffByte & 0x3F)
            let threshold: Int
            switch code {
            case 63: threshold = -1
            case 0: threshold = 0
            case 1...31: threshold = 1 << (code - 1)
            default: return nil
            }
            self.init(log2Registers: Int(parameterByte & 0x1F), registerWidth: Int(parameterByte >> 5) + 1,
                      explicitThreshold: threshold, sparseEnabled: cutoffByte & 0x40 != 0)
        }

        public var description: String {
            "log2m=\(log2Registers) regwidth=\(registerWidth) expthresh=\(explicitThreshold) sparseon=\(sparseEnabled ? 1 : 0)"
        }
    }
}
