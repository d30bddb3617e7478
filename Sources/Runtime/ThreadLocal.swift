#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An object of each thread's own (a pool thread's connections): `current` is the calling
/// thread's, set by that thread. A thread's object is released when the thread exits, on that
/// thread, so what it holds is torn down where it was used.
public final class ThreadLocal<Value: AnyObject>: @unchecked Sendable {
    // @unchecked: the key is written once in `init`; each thread reaches only its own object.
    // `@usableFromInline`: `current`, reached on every HTTP request, is specialized in its caller.
    @usableFromInline let key: pthread_key_t

    /// Throws the system's message when no key is left (`PTHREAD_KEYS_MAX`).
    public init() throws(RuntimeError) {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { object in
            if let object { Unmanaged<AnyObject>.fromOpaque(object).release() }
        }
        guard status == 0 else {
            throw .unavailable("cannot create a thread-local key: \(String(cString: strerror(status)))")
        }
        self.key = key
    }

    /// The calling thread's object, owned (+1) by the key until its thread exits.
    public var current: Value? {
        @inlinable get { pthread_getspecific(key).map { Unmanaged<Value>.fromOpaque($0).takeUnretainedValue() } }
        set {
            if let old = pthread_getspecific(key) { Unmanaged<AnyObject>.fromOpaque(old).release() }
            pthread_setspecific(key, newValue.map { Unmanaged.passRetained($0).toOpaque() })
        }
    }

    deinit {
        // Deleting the key runs no destructor: release this only once the threads that set an
        // object have exited (an HTTP server's pool is joined before its slot goes).
        pthread_key_delete(key)
    }
}

/// Which thread is running: compare with the identity a thread recorded earlier.
public struct ThreadIdentity: Equatable, @unchecked Sendable {
    // @unchecked: a pthread_t is an opaque id (an integer on Linux), only compared.
    private let thread: pthread_t

    /// The calling thread's.
    public static var current: ThreadIdentity { ThreadIdentity(thread: pthread_self()) }

    public static func == (a: ThreadIdentity, b: ThreadIdentity) -> Bool {
        pthread_equal(a.thread, b.thread) != 0
    }
}
