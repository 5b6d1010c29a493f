/// The `stack` records of one session, so that an `enqueue` record's stack id resolves to its
/// frames.
///
/// Why a type: `explain` and the leak assertions' failure messages both resolve an enqueue's
/// stack the same way (ids are per session; a missing stack is an empty one), and the
/// assertions read the log through `DeallocLog` only. Memory grows with the session's distinct
/// stacks, which the recorder interns.
public struct EnqueueStacks: Sendable {
  private var framesByID: [Int64: [Frame]] = [:]

  public init() {}

  /// Keeps a `stack` record's frames; a later record with the same id replaces them.
  public mutating func record(_ stack: StackRecord) {
    framesByID[stack.id] = stack.frames
  }

  /// Forgets every stack: a new session numbers its stacks anew.
  public mutating func removeAll() {
    framesByID = [:]
  }

  /// The frames of `enqueue`'s stack, innermost first; empty when it has none or its `stack`
  /// record was not read.
  public func frames(of enqueue: EnqueueRecord) -> [Frame] {
    enqueue.stack.flatMap { framesByID[$0] } ?? []
  }

  /// The program's frames of `enqueue`'s stack: ``frames(of:)`` without the queue's and the
  /// tracer's (``Frame/isMachinery``), which every enqueue stack starts in.
  ///
  /// A rule for showing a stack, the one a finding's signature skips machinery by; it differs
  /// on purpose from ``RetainPairing/programFrames(_:)`` (a retain history keeps the
  /// recorder's own frames, see there) and from the names a finding's id hashes, which leave
  /// out test frameworks and thunks too, so that one bug seen from two tests is one finding.
  public func programFrames(of enqueue: EnqueueRecord) -> [Frame] {
    frames(of: enqueue).filter { !$0.isMachinery }
  }
}
