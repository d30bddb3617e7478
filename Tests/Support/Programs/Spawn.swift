import Foundation

/// Starting a program with `posix_spawn`, its standard streams opened on files: what `Program`
/// and `RunningProgram` share.
enum Spawn {
    /// Starts `executable` with `arguments`; `environment` nil passes ours. Standard input comes
    /// from `input`, output goes to `output`, errors to `errors` (to `output` when nil). The child
    /// starts with every signal at its default action and none blocked, whatever the test
    /// process (or the thread calling) has set, and with no file of ours open beyond its three
    /// streams: a listening socket of an in-process mock broker, inherited, would go on
    /// accepting connections for a broker the test has taken down. With a `workingDirectory`, or
    /// a user to `runAs` (through `runuser`, from "/" unless told otherwise: PostgreSQL's tools
    /// need a working directory their user can read), it is started by a shell that moves there
    /// first and then `exec`s it, so its process id is the one returned.
    static func start(_ executable: String, _ arguments: [String], environment: [String: String]?,
                      input: String, output: String, errors: String?,
                      workingDirectory: String? = nil, runAs: String? = nil) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if let errors {
            posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        guard let closeFrom = addCloseFrom else {
            throw POSIXError(.ENOSYS, userInfo: [NSLocalizedDescriptionKey: "the C library lacks posix_spawn_file_actions_addclosefrom_np (glibc 2.34)"])
        }
        _ = closeFrom(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var argv = [executable] + arguments
        if let user = runAs { argv = ["/usr/sbin/runuser", "-u", user, "--"] + argv }
        if workingDirectory != nil || runAs != nil {
            argv = ["/bin/sh", "-c", "cd \"$1\" && shift && exec \"$@\"", "sh", workingDirectory ?? "/"] + argv
        }
        let cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        let cEnvironment = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { cEnvironment.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, &attributes, cArguments, cEnvironment)
        guard spawned == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EINVAL,
                             userInfo: [NSLocalizedDescriptionKey: "cannot start \(argv[0])"])
        }
        return pid
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc
    /// module does not declare: looked up by name.
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let addCloseFrom: AddCloseFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: AddCloseFrom.self) }

    /// How a program ended, from `waitpid`'s status.
    static func termination(_ status: Int32) -> Termination {
        let signal = status & 0x7f
        return signal == 0 ? Termination(status: (status >> 8) & 0xff, exited: true) : Termination(status: signal, exited: false)
    }
}
