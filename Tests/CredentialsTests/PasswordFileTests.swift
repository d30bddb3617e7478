import Credentials
import Foundation
import Patience
import Scratch
import SecurityFixtures
import Testing

@Suite("an Apache password file", .onTestThreads)
struct PasswordFileTests {
    @Test("a file written by htpasswd -B loads with every user it names")
    func htpasswdFileLoads() throws {
        try withTemporaryDirectory { scratch in
            let file = scratch.appendingPathComponent("htpasswd")
            try htpasswd(file, user: "alice", password: "first")
            try htpasswd(file, user: "bob", password: "second")
            let loaded = try PasswordFile.load(path: file.path)
            #expect(loaded.users == ["alice", "bob"])
        }
    }

    @Test("blank lines, comments and CRLF line ends are accepted, as Apache accepts them")
    func blankLinesCommentsAndCRLF() throws {
        let hash = "$2y$05$roVA8UD4q2rcPb2p8M8qO.H8KXfv8JMdrITKzg0CJyXxkNEuC/Eua"
        let text = "# readers\r\n\r\nalice:\(hash)\r\n   \nbob:\(hash.replacingOccurrences(of: "$2y$", with: "$2b$"))"
        let loaded = try PasswordFile(path: "inline", contents: Array(text.utf8))
        #expect(loaded.users == ["alice", "bob"])
    }

    @Test("every malformed line is one error naming the file and the line, and showing no hash", arguments: [
        ("alice", 2, "no ':'"),
        (":$2y$05$roVA8UD4q2rcPb2p8M8qO.H8KXfv8JMdrITKzg0CJyXxkNEuC/Eua", 2, "user name is empty"),
        ("carol:$apr1$4nl/PHRk$NSipdJrPlWPo6VQgrDzhw1", 2, "no bcrypt hash"),
        ("carol:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=", 2, "no bcrypt hash"),
        ("carol:plaintext", 2, "no bcrypt hash"),
        ("carol:$2y$05$roVA8UD4q2rcPb2p8M8qO.H8KXfv8JMdrITKzg0CJyXxkNEuC", 2, "malformed bcrypt hash"),
        ("carol:$2y$99$roVA8UD4q2rcPb2p8M8qO.H8KXfv8JMdrITKzg0CJyXxkNEuC/Eua", 2, "malformed bcrypt hash"),
        ("carol:$2y$05$roVA8UD4q2rcPb2p8M8qO.H8KXfv8JMdrITKzg0CJyXxkNEuC/Eu!", 2, "malformed bcrypt hash"),
        ("alice:$2y$05$roVA8UD4q2rcPb2p8M8qO.H8KXfv8JMdrITKzg0CJyXxkNEuC/Eua", 2, "appears again (first on line 1)"),
        ("car ol:$2y$05$roVA8UD4q2rcPb2p8M8qO.H8KXfv8JMdrITKzg0CJyXxkNEuC/Eua", 2, "space or a control character"),
    ])
    func malformedLine(line: String, number: Int, reason: String) throws {
        let good = "alice:$2y$05$roVA8UD4q2rcPb2p8M8qO.H8KXfv8JMdrITKzg0CJyXxkNEuC/Eua"
        let contents = Array("\(good)\n\(line)\n".utf8)
        #expect {
            try PasswordFile(path: "/etc/counterpoint/htpasswd", contents: contents)
        } throws: { error in
            let text = String(describing: error)
            return text.hasPrefix("password file /etc/counterpoint/htpasswd, line \(number): ") && text.contains(reason)
                && !text.contains("\n") && !text.contains("roVA8UD4") && !text.contains("apr1") && !text.contains("plaintext")
        }
    }

    @Test("a file without any user is refused: it would lock everyone out")
    func emptyFile() throws {
        #expect(throws: CredentialsError.noUsers(path: "empty")) {
            try PasswordFile(path: "empty", contents: Array("# nobody yet\n\n".utf8))
        }
    }

    @Test("a file that cannot be read is one error naming it")
    func unreadableFile() throws {
        try withTemporaryDirectory { scratch in
            let missing = scratch.appendingPathComponent("missing").path
            #expect(throws: CredentialsError.unreadableFile(what: "the password file", path: missing, reason: "No such file or directory")) {
                try PasswordFile.load(path: missing)
            }
            #expect(throws: CredentialsError.self) { try PasswordFile.load(path: scratch.path) }  // a directory
        }
    }
}
