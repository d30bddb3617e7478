#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An OS thread for blocking librdkafka calls, so they never occupy Swift's cooperative pool.
/// `join()` waits for the body to return; the owner stops the body by its own means first.
final class DedicatedThread: @unchecked Sendable {
    // Safe to share: `thread` is written once in init and read only by `join`, which its
    // owner calls once, from one thread.
    private var thread: pthread_t
    private var joined = false

    init(body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(ThreadBody(body: body))
        #if canImport(Glibc)
        var handle = pthread_t()
        #else
        var handle: pthread_t? = nil
        #endif
        let status = pthread_create(&handle, nil, { rawBox in
            #if canImport(Glibc)
            let box = Unmanaged<ThreadBody>.fromOpaque(rawBox!).takeRetainedValue()
            #else
            let box = Unmanaged<ThreadBody>.fromOpaque(rawBox).takeRetainedValue()
            #endif
            box.run()
            return nil
        }, box.toOpaque())
        precondition(status == 0, "pthread_create failed with \(status)")
        #if canImport(Glibc)
        thread = handle
        #else
        thread = handle!
        #endif
    }

    func join() {
        guard !joined else { return }
        joined = true
        pthread_join(thread, nil)
    }
}

private final class ThreadBody {
    let body: @Sendable () -> Void

    init(body: @escaping @Sendable () -> Void) {
        self.body = body
    }

    func run() {
        body()
    }
}
