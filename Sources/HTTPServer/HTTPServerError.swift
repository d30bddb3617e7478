/// Why an `HTTPServer` could not be started. Once running, the server never throws: every request,
/// however malformed, gets an answer from the handler or from the rejection renderer.
public enum HTTPServerError: Error, CustomStringConvertible, Equatable {
    /// A configuration value is out of range.
    case invalidConfiguration(String)
    /// The listen host is neither an address literal nor a name that resolves.
    case cannotResolveHost(host: String, reason: String)
    /// libmicrohttpd refused to start (typically: the address is in use or not local).
    case cannotStart(address: String, reason: String)

    public var description: String {
        switch self {
        case .invalidConfiguration(let message):
            return "invalid HTTP server configuration: \(message)"
        case .cannotResolveHost(let host, let reason):
            return "cannot resolve listen host '\(host)': \(reason)"
        case .cannotStart(let address, let reason):
            return "cannot start the HTTP server on \(address): \(reason)"
        }
    }
}
