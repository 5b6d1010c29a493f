/// Which reference each release of a ``RetainHistory`` gave back, and so which were never
/// given back: the references that keep a leaked object alive.
///
/// The rule, as Instruments pairs reference counts: stack similarity first, then order. Each
/// release, oldest first, gives back one of the references taken before it and not given
/// back yet: the one whose stack is most like its own, measured as the outermost frames the
/// two stacks share (return addresses compared from `main` inward), and one more when the
/// retain was made on the release's own call path (``similarity(_:_:)``: a function that
/// retains and releases in balance does both below the same callers); among equals, the
/// oldest.
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
/// Unowned retains and releases pair among themselves by the same rule, never with strong
/// ones; an unowned reference never given back keeps the object's memory, not the object, so
/// it is not among the ``outstanding`` references that keep a leaked object alive.
///
/// What is exact and what is not: the events are the runtime's; the pairing is a heuristic.
/// References taken and given back in an order the rule does not expect may pair crosswise,
/// which never changes how many are outstanding, only which.
public struct RetainPairing: Sendable, Equatable {
  /// The history's events, with a `.unseen` reference inserted before each event whose
  /// count after it says more references were taken than the events before it show
  /// (swift_weakLoadStrong takes one without any hook, and so does swift_unownedRetainStrong
  /// where the recorder's definition of it is not reached): the indexes below are into this
  /// list. An unseen reference is taken to be short-lived (a weak reference loaded to be
  /// used): the next release gives it back. It counts as the recorder's when an event next to
  /// it is, else as the program's.
  public var events: [RetainHistory.Event]
  /// For each event that takes a reference (a retain, unowned or strong, the allocation, a
  /// hand-over), the index of the event that gave it back; nil while outstanding or for
  /// other events.
  public var givenBackBy: [Int?]
  /// For each event that gives a reference back (a release, unowned or strong, a hand-over),
  /// the index of the event whose reference it gave back; nil when it found none (a
  /// reference taken before the history began) or for other events.
  public var gaveBack: [Int?]
  /// The program's strong references never given back (retains and the allocation), oldest
  /// first.
  public var outstanding: [Int]
  /// The unowned references never given back, oldest first: they keep the object's memory
  /// once it is deinited, never the object.
  public var unownedOutstanding: [Int]
  /// The recorder's and the queue's references not given back yet, oldest first: the
  /// tracer's while it looked at the object, the queue's while it waited in one.
  public var recorderOutstanding: [Int]
  /// How many references the program took (retains and the allocation not the recorder's).
  public var programReferences: Int

  public init(_ history: RetainHistory) {
    let events = Self.withUnseenReferences(history.events)
    self.events = events
    var recorders = events.map { $0.frames.contains(where: \.isRecorderCode) }
    for index in events.indices where events[index].kind == .unseen {
      recorders[index] =
        (index > 0 && recorders[index - 1])
        || (index + 1 < events.count && recorders[index + 1])
    }
    let stacks = events.map { Array(Self.programFrames($0.frames)) }
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
      case .retain, .unseen:
        if recorders[index] {
          openRecorder.append(index)
        } else {
          openProgram.append(index)
          programReferences += 1
        }
      case .release, .enqueue:
        let own = event.kind == .enqueue || !recorders[index] ? openProgram : openRecorder
        let candidates = own.isEmpty ? openProgram + openRecorder : own
        // An unseen reference is a weak or unowned load's, short-lived as a rule: the next
        // release gives it back.
        let unseen = (openProgram + openRecorder).filter { events[$0].kind == .unseen }.max()
        if let taken =
          event.kind == .release && unseen != nil
          ? unseen : Self.mostSimilar(to: stacks[index], among: candidates, in: stacks)
        {
          openProgram.removeAll { $0 == taken }
          openRecorder.removeAll { $0 == taken }
          givenBackBy[taken] = index
          gaveBack[index] = taken
        }
        // The queue's reference, which its release gives back.
        if event.kind == .enqueue { openRecorder.append(index) }
      case .unownedRetain, .unownedRelease:
        continue  // paired apart, below
      }
    }
    unownedOutstanding = Self.pairUnowned(
      events, stacks: stacks, givenBackBy: &givenBackBy, gaveBack: &gaveBack)
    self.givenBackBy = givenBackBy
    self.gaveBack = gaveBack
    outstanding = openProgram
    recorderOutstanding = openRecorder
    self.programReferences = programReferences
  }

  /// Pairs the unowned releases with the unowned retains, by the strong ones' rule; returns
  /// the unowned retains never given back.
  private static func pairUnowned(
    _ events: [RetainHistory.Event], stacks: [[Frame]], givenBackBy: inout [Int?],
    gaveBack: inout [Int?]
  ) -> [Int] {
    var open: [Int] = []
    for (index, event) in events.enumerated() {
      if event.kind == .unownedRetain { open.append(index) }
      guard event.kind == .unownedRelease,
        let taken = mostSimilar(to: stacks[index], among: open, in: stacks)
      else { continue }
      open.removeAll { $0 == taken }
      givenBackBy[taken] = index
      gaveBack[index] = taken
    }
    return open
  }

  /// The candidate (indexes in order) whose stack is most like `frames`; the oldest of
  /// equals.
  private static func mostSimilar(
    to frames: [Frame], among candidates: [Int], in stacks: [[Frame]]
  ) -> Int? {
    var best: (index: Int, similarity: Int)?
    for candidate in candidates.sorted() {
      let similarity = Self.similarity(stacks[candidate], frames)
      if best == nil || similarity > best!.similarity { best = (candidate, similarity) }
    }
    return best?.index
  }

  /// `events` with the unseen references the counts reveal (the most inserted at one place:
  /// eight, so that a damaged count cannot flood the list).
  static func withUnseenReferences(_ events: [RetainHistory.Event]) -> [RetainHistory.Event] {
    var result: [RetainHistory.Event] = []
    result.reserveCapacity(events.count)
    var previous: Int?
    for event in events {
      if let before = previous, let after = event.countAfter {
        let change: Int
        switch event.kind {
        case .retain, .unseen: change = 1
        case .release: change = -1
        case .allocation, .enqueue, .unownedRetain, .unownedRelease: change = 0
        }
        let unseen = after - (before + change)
        if event.kind != .allocation, unseen > 0 {
          for _ in 0..<min(unseen, 8) {
            result.append(RetainHistory.Event(.unseen, countAfter: nil, frames: []))
          }
        }
      }
      previous = event.countAfter ?? previous
      result.append(event)
    }
    return result
  }

  /// An event's stack from its first frame that is not the runtime's (the whole stack when
  /// all are): where the program (or the queue and the tracer) retained or released.
  ///
  /// Not ``EnqueueStacks/programFrames(of:)``'s rule on purpose: a retain or release made by
  /// the queue or the tracer is a reference of their own that the history must show, so their
  /// frames stay, and so do the frames past the first kept one, whose return addresses pair a
  /// retain with its release (``similarity(_:_:)``). An enqueue stack always starts in the
  /// queue and the tracer, which say nothing there, so that rule drops every such frame.
  /// Neither is the rule of a finding's id (`SymbolNormalization.programFrames` in the
  /// analysis), which judges names, not frames, and also drops test frameworks and thunks.
  public static func programFrames(_ frames: [Frame]) -> ArraySlice<Frame> {
    let callers = frames.drop { $0.isMachinery && !$0.isRecorderCode }
    return callers.isEmpty ? frames[...] : callers
  }

  /// How like release stack `release` retain stack `retain` is: the outermost frames they
  /// share (compared by return address), and one more when the retain was made in an
  /// activation on the release's own call path: past the shared frames it has only its
  /// innermost, in the function the release's stack has at that level (the same function
  /// releasing what it retained, or a function giving back an owned argument its caller
  /// retained for it).
  static func similarity(_ retain: [Frame], _ release: [Frame]) -> Int {
    var shared = 0
    while shared < retain.count, shared < release.count,
      retain[retain.count - 1 - shared].ip == release[release.count - 1 - shared].ip
    {
      shared += 1
    }
    guard retain.count == shared + 1, shared < release.count,
      let function = retain[0].symbol,
      function == release[release.count - 1 - shared].symbol
    else { return shared }
    return shared + 1
  }
}
