import Foundation
import Programs
import Scratch
import Testing

/// The compose file, the systemd units, HAProxy's configuration and the secrets script,
/// checked as far as a machine without a container engine can: every counterpoint subcommand,
/// flag and COUNTERPOINT_ variable they name exists in that subcommand's --help.
extension DeployFilesTests {
    @Test("compose.yaml is YAML, and every counterpoint command, flag, variable and secret it names exists")
    func composeNamesOnlyWhatExists() async throws {
        let parsed = try await Self.run(["python3", "-c", """
            import json, sys, yaml
            print(json.dumps(yaml.safe_load(open(sys.argv[1]))))
            """, Self.root.appendingPathComponent("deploy/compose.yaml").path])
        try #require(parsed.status == 0, "compose.yaml does not parse: \(parsed.output)")
        let compose = try #require(try JSONSerialization.jsonObject(with: Data(parsed.output.utf8)) as? [String: Any])
        let services = try #require(compose["services"] as? [String: [String: Any]])
        let declaredSecrets = Set((compose["secrets"] as? [String: Any] ?? [:]).keys)
        var help = HelpTexts()
        var counterpointServices: [String] = []
        for (name, service) in services.sorted(by: { $0.key < $1.key }) where service["build"] != nil {
            counterpointServices.append(name)
            let commands = Self.counterpointCommands(entrypoint: service["entrypoint"] as? [String] ?? [],
                                                     command: service["command"] as? [String] ?? [])
            #expect(!commands.isEmpty, "\(name) runs no counterpoint subcommand")
            let environment = (service["environment"] as? [String: Any] ?? [:]).keys
            for (subcommand, flags) in commands {
                let text = try await help.text(of: subcommand)
                for flag in flags { #expect(HelpTexts.lists(flag, in: text), "\(name): counterpoint \(subcommand) has no \(flag)") }
                for variable in environment where variable.hasPrefix("COUNTERPOINT_") {
                    #expect(HelpTexts.lists(HelpTexts.flag(forVariable: variable), in: text), "\(name): \(variable) is no flag of \(subcommand)")
                }
            }
            // Every secret a service reads under /run/secrets/ is one it mounts, and is declared.
            let mounted = Set(service["secrets"] as? [String] ?? [])
            #expect(mounted.isSubset(of: declaredSecrets), "\(name) mounts undeclared secrets")
            let text = "\(service["environment"] ?? "") \(service["command"] ?? "")"
            for match in text.matches(of: /\/run\/secrets\/([A-Za-z0-9._-]+)/) {
                #expect(mounted.contains(String(match.1)), "\(name) reads /run/secrets/\(match.1) without mounting it")
            }
        }
        // The layers the multi-machine deployment needs, the batch layer included.
        for needed in ["consume-1", "archive", "batch", "serve-1"] { #expect(counterpointServices.contains(needed)) }
        #expect(services["archive"]?["volumes"] as? [String] == ["logs:/var/lib/counterpoint/logs"])
        #expect((services["batch"]?["volumes"] as? [String])?.first?.hasPrefix("logs:/var/lib/counterpoint/logs") == true)
        // No password written in the file itself: they come from the secret files.
        let raw = try String(contentsOf: Self.root.appendingPathComponent("deploy/compose.yaml"), encoding: .utf8)
        #expect(raw.firstMatch(of: /postgresql:\/\/[^@\s]*:[^@\s]*@/) == nil)
        #expect(!raw.contains("POSTGRES_PASSWORD:"))

        // The variables of the shared environment file are flags of some subcommand.
        let allHelp = try await help.all()
        for file in ["deploy/counterpoint.env", "deploy/secrets.env.example"] {
            for variable in try Self.variables(in: file) where variable.hasPrefix("COUNTERPOINT_") {
                #expect(HelpTexts.lists(HelpTexts.flag(forVariable: variable), in: allHelp), "\(file): \(variable) is no flag")
            }
        }
    }

    @Test("the systemd units run existing subcommands and read the secrets file, optional and apart from the shared one")
    func systemdUnits() async throws {
        var help = HelpTexts()
        let directory = Self.root.appendingPathComponent("deploy/systemd")
        for unit in try FileManager.default.contentsOfDirectory(atPath: directory.path) where unit.hasSuffix(".service") {
            let text = try String(contentsOf: directory.appendingPathComponent(unit), encoding: .utf8)
            let exec = try #require(text.firstMatch(of: /\nExecStart=\/usr\/local\/bin\/counterpoint ([^\n]+)/)?.1, "\(unit)")
            let words = exec.split(separator: " ").map(String.init)
            let helpText = try await help.text(of: words[0])
            for flag in words.dropFirst() where flag.hasPrefix("--") {
                #expect(HelpTexts.lists(String(flag.split(separator: "=")[0]), in: helpText), "\(unit): \(flag)")
            }
            #expect(text.contains("\nEnvironmentFile=/etc/counterpoint/counterpoint.env\n"), "\(unit)")
            #expect(text.contains("\nEnvironmentFile=-/etc/counterpoint/secrets.env\n"), "\(unit)")
        }
    }

    @Test("haproxy -c accepts haproxy.cfg")
    func haproxyConfiguration() async throws {
        let result = try await Self.run(["haproxy", "-c", "-f", Self.root.appendingPathComponent("deploy/haproxy.cfg").path])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("Configuration file is valid"))
    }

    @Test("make-secrets writes every secret compose.yaml mounts: a server certificate for postgres its CA verifies, private files 0600")
    func makeSecrets() async throws {
        try await withTemporaryDirectory { scratch in
            let secrets = scratch.appendingPathComponent("secrets")
            let made = try await Self.run([Self.root.appendingPathComponent("deploy/make-secrets").path, secrets.path])
            try #require(made.status == 0, "\(made.output)")
            let compose = try String(contentsOf: Self.root.appendingPathComponent("deploy/compose.yaml"), encoding: .utf8)
            let files = compose.matches(of: /file: \.\/secrets\/([A-Za-z0-9._-]+)/).map { String($0.1) }
            #expect(files.count >= 5)
            for file in files {
                let attributes = try FileManager.default.attributesOfItem(atPath: secrets.appendingPathComponent(file).path)
                let mode = (attributes[.posixPermissions] as? Int ?? 0) & 0o777
                #expect(file.hasSuffix(".pem") ? mode == 0o644 : mode == 0o600, "\(file): \(String(mode, radix: 8))")
            }
            let verified = try await Self.run(["openssl", "verify", "-CAfile", secrets.appendingPathComponent("postgres-ca.pem").path,
                                               "-verify_hostname", "postgres", secrets.appendingPathComponent("postgres-server.pem").path])
            #expect(verified.status == 0, "\(verified.output)")
            let password = try String(contentsOf: secrets.appendingPathComponent("postgres-password"), encoding: .utf8)
            let passfile = try String(contentsOf: secrets.appendingPathComponent("pgpass"), encoding: .utf8)
            #expect(password.count >= 20 && passfile == "postgres:5432:counterpoint:counterpoint:\(password)\n")
        }
    }

    /// The counterpoint subcommands a service runs, with the flags given to each: the image's
    /// entrypoint is the binary (command[0] is the subcommand), or a shell runs `counterpoint …`.
    static func counterpointCommands(entrypoint: [String], command: [String]) -> [(String, [String])] {
        func flags(_ words: some Sequence<Substring>) -> [String] {
            words.filter { $0.hasPrefix("--") }.map { String($0.split(separator: "=")[0]) }
        }
        if entrypoint.isEmpty, let subcommand = command.first {
            return [(subcommand, flags(command.dropFirst().map { Substring($0) }))]
        }
        return command.joined(separator: " ").matches(of: /counterpoint\s+([a-z-]+)([^;|&]*)/).map {
            (String($0.1), flags($0.2.split(separator: " ")))
        }
    }

    static func variables(in file: String) throws -> [String] {
        try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8).split(separator: "\n")
            .map { $0.hasPrefix("#") ? $0.dropFirst() : $0 }
            .compactMap { $0.firstMatch(of: /^([A-Z_]+)=/).map { String($0.1) } }
    }
}

/// `counterpoint <subcommand> --help`, asked once per subcommand.
struct HelpTexts {
    private var cache: [String: String] = [:]
    static let subcommands = ["run", "consume", "archive", "batch", "serve", "replay", "generate", "copy-store"]

    mutating func text(of subcommand: String) async throws -> String {
        if let text = cache[subcommand] { return text }
        let result = try await DeployFilesTests.run([Executable.path, subcommand, "--help"])
        guard result.status == 0 else { throw CommandError(description: "counterpoint \(subcommand) --help: \(result.output)") }
        cache[subcommand] = result.output
        return result.output
    }

    mutating func all() async throws -> String {
        var texts: [String] = []
        for subcommand in Self.subcommands { texts.append(try await text(of: subcommand)) }
        return texts.joined(separator: "\n")
    }

    /// `COUNTERPOINT_DATA_DIR` → `--data-dir`.
    static func flag(forVariable variable: String) -> String {
        "--" + variable.dropFirst("COUNTERPOINT_".count).lowercased().replacingOccurrences(of: "_", with: "-")
    }

    /// Whether `flag` is one of the flags `help` lists (not merely a prefix of one).
    static func lists(_ flag: String, in help: String) -> Bool {
        help.ranges(of: flag).contains { range in
            range.upperBound == help.endIndex || !(help[range.upperBound].isLetter || help[range.upperBound] == "-")
        }
    }
}
