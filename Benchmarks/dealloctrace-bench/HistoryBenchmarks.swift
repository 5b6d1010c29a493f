import CHolders

// What a retain/release history (issue 31 item 2, `DEALLOCTRACE_HISTORY`) costs the types it
// does not name: a retain+release pair of an object of another type, in a process whose
// history matched one type, against the same pair with holders alone (its floor), each in a
// child of its own (the hooks are per process), alternating.

/// The argument that makes the bench run one history measurement as a child.
let historyChildArgument = "--history-child"

/// How many retain+release pairs one timed round makes, and timed rounds per child (the
/// fastest is the figure).
private let pairsPerRound: UInt64 = 2_000_000
private let roundsPerChild = 7

/// The type the history names: one is allocated, so that the history has matched a type and
/// every other type's retains take the path that compares metadata.
final class HistoryNamed {
  var value = 0
}

/// Keeps the named object on the heap (a local that does not escape may live on the stack,
/// and then no allocation hook sees its type).
nonisolated(unsafe) private var namedKept: AnyObject?

/// The type measured: not named.
final class HistoryOther {
  var value = 0
}

/// The child's side: the fastest round's CPU nanoseconds per pair, and whether a type
/// matched (`1 …`: the history path was the one measured; `0 …` with holders alone).
func historyChild() {
  namedKept = HistoryNamed()
  let other = HistoryOther()
  var matched: UInt64 = 0
  var overCap: UInt64 = 0
  cholders_history_type_counts(&matched, &overCap)
  let pointer = Unmanaged.passUnretained(other).toOpaque()
  var best = Double.infinity
  for _ in 0..<roundsPerChild {
    best = min(best, cholders_bench_retain_release_ns(pointer, pairsPerRound))
  }
  withExtendedLifetime(other) {}
  print("\(matched) \(best)")
}

/// The history figure: a pair of an unnamed type with a history on for another, over the
/// same pair with holders alone.
func historyFigures(into figures: inout BenchFigures) {
  var holdersAlone = Double.infinity
  var withHistory = Double.infinity
  var matched = true
  for _ in 0..<3 {
    let floor = runBenchChild([historyChildArgument], environment: ["DEALLOCTRACE_HOLDERS": "1"])
    let history = runBenchChild(
      [historyChildArgument],
      environment: [
        "DEALLOCTRACE_HOLDERS": "1", "DEALLOCTRACE_HISTORY": "dealloctrace_bench.HistoryNamed",
      ])
    let floorParts = floor?.split(separator: " ") ?? []
    let historyParts = history?.split(separator: " ") ?? []
    holdersAlone = min(holdersAlone, floorParts.last.flatMap { Double($0) } ?? .nan)
    withHistory = min(withHistory, historyParts.last.flatMap { Double($0) } ?? .nan)
    matched = matched && historyParts.first == "1"
  }
  figures.add("history_other_type_retain_release_ns", withHistory)
  figures.add("history_holders_alone_retain_release_ns", holdersAlone)
  figures.add("history_other_type_over_holders_alone", withHistory / holdersAlone)
  figures.add("history_type_matched", matched)
}
