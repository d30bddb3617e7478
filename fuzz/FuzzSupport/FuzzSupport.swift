import CLibFuzzer
#if canImport(Glibc)
import Glibc
#endif

/// What every fuzz target shares (docs/fuzzing.md): its `main` hands the target's
/// `LLVMFuzzerTestOneInput` to libFuzzer's driver, and a broken invariant is a crash.
public typealias FuzzTarget = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

public func runLibFuzzer(_ target: FuzzTarget) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, target))
}

/// A broken invariant is a crash, so that libFuzzer keeps the input.
public func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}
