import Patience
import Testing

/// End-to-end tests of the `counterpoint` executable: each test runs the real binary as
/// processes (`generate`, `batch`, `serve`) in a scratch folder and talks to `serve` over a
/// real socket. One at a time, because they share two cores and time-based steps (a batch
/// killed mid-run) are kinder to check on a machine that is not also running their siblings.
@Suite("counterpoint, end to end", .onTestThreads, .serialized)
enum EndToEnd {}
