import DeallocTesting

/// One node of the cycle `runBothEnds` leaks.
final class CycleEnd {
  var next: CycleEnd?
}

/// Both ends of a two-object cycle tracked by one `LeakTracker` (holders on from the
/// environment): the tracker keeps the first finding's holder path, with the addresses on
/// it, while it scans for the second, and that record of the tool's own must never be named
/// as a holder. Prints each finding, then `findings: N`.
func runBothEnds() {
  let tracker = LeakTracker(label: "both ends")
  do {
    let first = CycleEnd()
    let second = CycleEnd()
    first.next = second
    second.next = first
    tracker.track(first)
    tracker.track(second)
  }
  let findings = tracker.verify()
  for finding in findings { print(finding) }
  print("findings: \(findings.count)")
}
