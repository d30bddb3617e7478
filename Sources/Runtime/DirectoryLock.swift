#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive claim on a directory by one process: an advisory `flock` on a file in it,
/// held while this value lives. The kernel drops it when the process ends, however it ends, so
/// a killed process never leaves a directory claimed. Two claims conflict in one process too.
public final class DirectoryLock: Sendable {
    /// The lock file.
    public let path: String
    private let descriptor: Int32

    /// Claims `directory` (made if missing) through its file `name`; throws
    /// `DirectoryLockError.held` when another claim holds it.
    public init(directory: String, name: String) throws {
        path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
        try Self.makeDirectories(directory)
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw DirectoryLockError.unusable(path: path, errno: errno) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let error = errno
            close(descriptor)
            if error == EWOULDBLOCK { throw DirectoryLockError.held(path: path) }
            throw DirectoryLockError.unusable(path: path, errno: error)
        }
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    private static func makeDirectories(_ directory: String) throws {
        var prefix = directory.hasPrefix("/") ? "/" : ""
        for component in directory.split(separator: "/") {
            prefix += component
            if mkdir(prefix, 0o755) != 0, errno != EEXIST {
                throw DirectoryLockError.cannotMakeDirectory(path: prefix, errno: errno)
            }
            prefix += "/"
        }
    }
}

public enum DirectoryLockError: Error, Equatable, CustomStringConvertible {
    /// Another process (or another claim in this one) holds the lock.
    case held(path: String)
    /// The directory, or one above it, could not be made.
    case cannotMakeDirectory(path: String, errno: Int32)
    /// The lock file could not be made or locked.
    case unusable(path: String, errno: Int32)

    public var description: String {
        switch self {
        case .held(let path): "\(path) is locked by another process"
        case .cannotMakeDirectory(let path, let errno): "cannot make the directory \(path): \(String(cString: strerror(errno)))"
        case .unusable(let path, let errno): "cannot lock \(path): \(String(cString: strerror(errno)))"
        }
    }
}
