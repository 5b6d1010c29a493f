import DeallocQueue
import DeallocTrace

#if canImport(Glibc)
  import Glibc
#endif

// A program whose leaks are chosen on the command line, for the baseline's end-to-end
// tests: a traced run with some leaks records a baseline, a later run with others is gated
// against it. Each argument names a leak site (session, cache, profile).
//
//   DEALLOCTRACE_LOG=run.jsonl swift run BaselineDemo session cache

var sites: [LeakSite] = []
for argument in CommandLine.arguments.dropFirst() {
  guard let site = LeakSite(rawValue: argument) else {
    let names = LeakSite.allCases.map(\.rawValue).joined(separator: ", ")
    print("BaselineDemo: unknown leak site '\(argument)'; use \(names)")
    exit(2)
  }
  sites.append(site)
}
for site in sites { site.leak() }
// Release everything now rather than after the queue's delay: the leaked objects survive
// the release, which is what the trace records.
DeallocQueue.shared.drain()
DeallocTrace.finish()
