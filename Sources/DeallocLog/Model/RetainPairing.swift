/// Which reference each release of a ``RetainHistory`` gave back, and so which were never
/// given back: the references that keep a leaked object alive.
///
/// The rule, as Instruments pairs reference counts: stack similarity first, then order. Each
/// release, oldest first, gives back one of the references taken before it and not given
/// back yet: the one whose stack is most like its own, measured as the outermost frames the
/// two stacks share (return addresses compared from `main` inward), and one more when the
/// first frames that differ are both stacks' innermost and in the same function (a function
/// that retains and releases in balance does both below the same callers); among equals,
/// the oldest.
///
/// The recorder's own references (the queue's and the tracer's, whose code is in the stack)
/// are paired among themselves first: a release in their code gives back a reference their
/// code took when one is open, and the program's releases give back the program's. The two
/// marks join them: the allocation is the program's first reference, and a hand-over to a
/// queue (`enqueue`) gives back the program's reference (the one most like the enqueue
/// stack) and takes the queue's, which the queue's release then gives back.
///
/// Why here, in the reader's model: every text-like output shows the outstanding retains
/// under a finding through ``HolderPathText``, and `DeallocTesting`'s failure messages use
/// it too. The recorder's cap (history.c) drops paired events by the same rule on return
/// addresses alone.
///
/// What is exact and what is not: the events are the runtime's; the pairing is a heuristic.
/// References taken and given back in an order the rule does not expect may pair crosswise,
/// which never changes how many are outstanding, only which.
public struct RetainPairing: Sendable, Equatable {
  /// For each event that takes a reference (a retain, the allocation, a hand-over), the
  /// index of the event that gave it back; nil while outstanding or for other events.
  public var givenBackBy: [Int?]
  /// For each event that gives a reference back (a release, a hand-over), the index of the
  /// event whose reference it gave back; nil when it found none (a reference taken before
  /// the history began) or for other events.
  public var gaveBack: [Int?]
  /// The program's references never given back (retains and the allocation), oldest first.
  public var outstanding: [Int]
  /// The recorder's and the queue's references not given back yet, oldest first: the
  /// tracer's while it looked at the object, the queue's while it waited in one.
  public var recorderOutstanding: [Int]
  /// How many references the program took (retains and the allocation not the recorder's).
  public var programReferences: Int

  public init(_ history: RetainHistory) {
    let events = history.events
    let recorders = events.map { $0.frames.contains(where: \.isRecorderCode) }
    var givenBackBy = [Int?](repeating: nil, count: events.count)
    var gaveBack = [Int?](repeating: nil, count: events.count)
    var openProgram: [Int] = []
    var openRecorder: [Int] = []
    var programReferences = 0
    for (index, event) in events.enumerated() {
      switch event.kind {
      case .allocation:
        openProgram.append(index)
        programReferences += 1
      case .retain:
        if recorders[index] {
          openRecorder.append(index)
        } else {
          openProgram.append(index)
          programReferences += 1
        }
      case .release, .enqueue:
        let own = event.kind == .enqueue || !recorders[index] ? openProgram : openRecorder
        let candidates = own.isEmpty ? openProgram + openRecorder : own
        if let taken = Self.mostSimilar(to: event.frames, among: candidates, in: events) {
          openProgram.removeAll { $0 == taken }
          openRecorder.removeAll { $0 == taken }
          givenBackBy[taken] = index
          gaveBack[index] = taken
        }
        // The queue's reference, which its release gives back.
        if event.kind == .enqueue { openRecorder.append(index) }
      }
    }
    self.givenBackBy = givenBackBy
    self.gaveBack = gaveBack
    outstanding = openProgram
    recorderOutstanding = openRecorder
    self.programReferences = programReferences
  }

  /// The candidate (indexes in order) whose stack is most like `frames`; the oldest of
  /// equals.
  private static func mostSimilar(
    to frames: [Frame], among candidates: [Int], in events: [RetainHistory.Event]
  ) -> Int? {
    var best: (index: Int, similarity: Int)?
    for candidate in candidates.sorted() {
      let similarity = Self.similarity(events[candidate].frames, frames)
      if best == nil || similarity > best!.similarity { best = (candidate, similarity) }
    }
    return best?.index
  }

  /// How many outermost frames `a` and `b` share (compared by return address), and one more
  /// when the first frames that differ are the innermost of both and in the same function
  /// (a retain and a release in the function's own code, not in one of its callees).
  static func similarity(_ a: [Frame], _ b: [Frame]) -> Int {
    var shared = 0
    while shared < a.count, shared < b.count,
      a[a.count - 1 - shared].ip == b[b.count - 1 - shared].ip
    {
      shared += 1
    }
    guard shared < a.count, a.count == b.count,
      let function = a[a.count - 1 - shared].symbol,
      function == b[b.count - 1 - shared].symbol
    else { return shared }
    return shared + 1
  }
}
