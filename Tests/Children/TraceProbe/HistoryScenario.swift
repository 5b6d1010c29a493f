import CHolders
import DeallocQueue
import DeallocTrace

// The retain/release history scenario (issue 31, `TraceProbe history`, run with
// DEALLOCTRACE_HOLDERS=1 and DEALLOCTRACE_HISTORY=TraceProbe.HistoryTarget): one object of a
// type under history and one of a type not under it, each kept alive by an extra reference
// that a named function took, handed to a queue and drained, so that each is a survivor
// with a `holders` record. The target's history must show `keepAnExtraReference` as the
// outstanding retain, `retainAndReleaseInBalance` as paired, and the bystander's record
// must have no history. `history unowned` also holds an unowned reference to each in a
// field (`holdUnowned`), loads it strong (`loadUnownedStrong`) and lets it go
// (`letUnownedGo`): the target's history must show them as unowned events and a retain.

/// The type under history.
final class HistoryTarget {
  var payload = [1, 2, 3]
}

/// A type not under history, kept alive the same way.
final class HistoryBystander {
  var payload = [4, 5, 6]
}

nonisolated(unsafe) var historyKeeper: [AnyObject] = []
nonisolated(unsafe) var historyScratch: [AnyObject] = []

/// Takes the reference that is never given back.
@inline(never)
func keepAnExtraReference(_ object: AnyObject) {
  historyKeeper.append(object)
}

/// Takes a reference and gives it back.
@inline(never)
func retainAndReleaseInBalance(_ object: AnyObject) {
  historyScratch.append(object)
  historyScratch.removeAll(keepingCapacity: true)
}

/// Holds an unowned reference in a field: swift_unownedRetain when made, swift_unownedRelease
/// when it goes.
final class UnownedHolder {
  unowned let held: AnyObject

  init(_ held: AnyObject) { self.held = held }
}

nonisolated(unsafe) var unownedHolders: [UnownedHolder] = []

/// Takes an unowned reference to `object`, kept in a holder until `letUnownedGo`.
@inline(never)
func holdUnowned(_ object: AnyObject) {
  unownedHolders.append(UnownedHolder(object))
}

/// Loads each held unowned reference strong (swift_unownedRetainStrong) and gives that
/// strong reference back.
@inline(never)
func loadUnownedStrong() -> Int {
  var seen = 0
  for holder in unownedHolders {
    let strong = holder.held
    seen += strong === holder ? 0 : 1
  }
  return seen
}

/// Drops the holders, and with them the unowned references.
@inline(never)
func letUnownedGo() {
  unownedHolders.removeAll()
}

private let historyQueue = DeallocQueue(label: "history", delay: .seconds(60))

@inline(never)
private func handOverForHistory(_ object: AnyObject) {
  var handed: AnyObject? = object
  historyQueue.releaseInBackground(&handed)
}

/// Makes both objects and hands them over; their locals end here, so that only the keeper
/// and the queue hold them when it returns.
@inline(never)
private func prepareHistoryObjects(balancedRounds: Int, unowned: Bool) {
  let target = HistoryTarget()
  let bystander = HistoryBystander()
  if unowned {
    holdUnowned(target)
    holdUnowned(bystander)
    if loadUnownedStrong() != 2 { fatalError("the unowned references were not loaded") }
    letUnownedGo()
  }
  for _ in 0..<balancedRounds { retainAndReleaseInBalance(target) }
  keepAnExtraReference(target)
  retainAndReleaseInBalance(bystander)
  keepAnExtraReference(bystander)
  handOverForHistory(target)
  handOverForHistory(bystander)
}

/// `history` makes one balanced round; `history cap` makes more than the recorder keeps
/// events per object, so that its cap drops paired ones; `history unowned` adds the unowned
/// references.
func runHistoryScenario(_ variant: String?) {
  // Creating the queue starts tracing from the environment, before the first record.
  _ = historyQueue.pendingCount
  prepareHistoryObjects(
    balancedRounds: variant == "cap" ? Int(CHOLDERS_HISTORY_EVENTS_PER_OBJECT) : 1,
    unowned: variant == "unowned")
  historyQueue.drain()
}
