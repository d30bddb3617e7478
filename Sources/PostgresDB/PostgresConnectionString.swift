import CPostgres
import Foundation

/// libpq connection strings — URIs (`postgresql://user:secret@host1,host2/db?sslmode=verify-full`)
/// or `key=value` lists — read by libpq itself, so every parameter it knows works, and shown in
/// messages without their password.
public enum PostgresConnectionString {
    /// Throws libpq's own one-line complaint (password hidden) when it cannot read `text`: an
    /// unknown parameter, a malformed URI. Reaching the server is not checked.
    public static func validate(_ text: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(text, &message) else {
            let reason = message.map { PostgresConnection.oneLine(String(cString: $0)) } ?? "out of memory"
            PQfreemem(message)
            throw PostgresError(sqlState: nil, message: hidingPassword(of: text, in: reason),
                                operation: "read the connection string \(redacted(text))", connectionLost: false)
        }
        PQconninfoFree(options)
    }

    /// `text` with its password replaced by `***`, wherever it stands: in the URI's user
    /// information (`user:***@host`), as a `password=` parameter of the URI or of a `key=value`
    /// list, and anywhere else its text appears.
    public static func redacted(_ text: String) -> String {
        var shown = redactingUserInformation(text)
        shown = redactingPasswordParameters(shown)
        return hidingPassword(of: text, in: shown)
    }

    /// `message` with every spelling of `text`'s password (as written, and as libpq decodes it)
    /// replaced by `***`.
    public static func hidingPassword(of text: String, in message: String) -> String {
        var spellings = rawPasswords(in: text)
        if let decoded = parsedPassword(text) { spellings.append(decoded) }
        var shown = message
        for spelling in Set(spellings) where !spelling.isEmpty {
            shown = shown.replacingOccurrences(of: spelling, with: "***")
        }
        return shown
    }

    /// The password as libpq reads it, nil when there is none or `text` does not parse.
    static func parsedPassword(_ text: String) -> String? {
        guard let options = PQconninfoParse(text, nil) else { return nil }
        defer { PQconninfoFree(options) }
        var option = options
        while let keyword = option.pointee.keyword {
            if String(cString: keyword) == "password" { return option.pointee.val.map { String(cString: $0) } }
            option += 1
        }
        return nil
    }

    /// The password as written, percent-encoded or quoted, even where `text` does not parse.
    private static func rawPasswords(in text: String) -> [String] {
        var found: [String] = []
        if let information = userInformation(text), let colon = information.firstIndex(of: ":") {
            found.append(String(information[information.index(after: colon)...]))
        }
        for parameter in passwordParameters(text) { found.append(String(text[parameter])) }
        return found
    }

    /// `user:secret` of `scheme://user:secret@host…`.
    private static func userInformation(_ text: String) -> Substring? {
        guard let scheme = text.range(of: "://") else { return nil }
        let rest = text[scheme.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        guard let at = authority.lastIndex(of: "@") else { return nil }
        return authority[..<at]
    }

    private static func redactingUserInformation(_ text: String) -> String {
        guard let information = userInformation(text), let colon = information.firstIndex(of: ":") else { return text }
        var shown = text
        shown.replaceSubrange(shown.index(after: colon)..<information.endIndex, with: "***")
        return shown
    }

    private static func redactingPasswordParameters(_ text: String) -> String {
        var shown = text
        for range in passwordParameters(text).reversed() { shown.replaceSubrange(range, with: "***") }
        return shown
    }

    /// The ranges of the values of `password=` parameters: `?password=…&` or `&password=…` of a
    /// URI, `password=…` or `password = '…'` of a key=value list.
    private static func passwordParameters(_ text: String) -> [Range<String.Index>] {
        var ranges: [Range<String.Index>] = []
        var searchStart = text.startIndex
        while let match = text.range(of: "password", options: .caseInsensitive, range: searchStart..<text.endIndex) {
            searchStart = match.upperBound
            let before = match.lowerBound == text.startIndex ? nil : text[text.index(before: match.lowerBound)]
            guard before == nil || before == "?" || before == "&" || before!.isWhitespace else { continue }
            var index = match.upperBound
            while index < text.endIndex, text[index] == " " { index = text.index(after: index) }
            guard index < text.endIndex, text[index] == "=" else { continue }
            index = text.index(after: index)
            while index < text.endIndex, text[index] == " " { index = text.index(after: index) }
            let start = index
            if index < text.endIndex, text[index] == "'" {
                index = text.index(after: index)
                while index < text.endIndex, text[index] != "'" {
                    if text[index] == "\\" { index = text.index(after: index) }
                    if index < text.endIndex { index = text.index(after: index) }
                }
                if index < text.endIndex { index = text.index(after: index) }
            } else {
                while index < text.endIndex, text[index] != "&", !text[index].isWhitespace { index = text.index(after: index) }
            }
            if start < index { ranges.append(start..<index) }
            searchStart = index
        }
        return ranges
    }
}
