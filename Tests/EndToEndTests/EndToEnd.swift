import Patience
import Testing

/// End-to-end tests of the `counterpoint` executable: each test runs the real binary as
/// processes (`generate`, `batch`, `serve`, `run`) in a scratch folder and talks to it over a
/// real socket. One at a time within each of the two suites below, because time-based steps (a
/// batch killed mid-run, a disk filled while running) are kinder to check on a machine that is
/// not also running their siblings; the two suites run beside each other, so that their chains
/// of tests (about 110 s and 95 s alone) do not add up to the test command's longest wait.
@Suite("counterpoint, end to end", .onTestThreads, .serialized)
enum EndToEnd {}

/// The end-to-end tests of `run`: the embedded broker, the page, full disks, faults and secrets.
@Suite("counterpoint run, end to end", .onTestThreads, .serialized)
enum RunEndToEnd {}
