import DeallocLog

/// A stack's place in its session's ``StackSlots``, or ``noStack`` for an object whose enqueue
/// named no stack: 4 bytes, so that a per-object table keeps it at no cost, and dense from
/// 0, so that a table by stack can be an array.
struct StackSlot: Hashable {
  var rawValue: Int32

  /// No stack.
  static var noStack: StackSlot { StackSlot(rawValue: -1) }

  init(rawValue: Int32) { self.rawValue = rawValue }

  /// The slot as an index below ``StackSlots/count`` + 1, ``noStack`` included (0): for
  /// tables by stack that also keep the objects without one.
  var denseIndex: Int { Int(rawValue) + 1 }
}

/// The stacks of one session: every stack id the session names gets one dense ``StackSlot``,
/// where its `stack` record (or the first enqueue naming it) arrives, with the record's frames
/// and, once asked for, the frames symbolized. Dropped with the session: stack ids are per
/// session.
///
/// Why one map: the objects still in a queue, the released ones, the checks, the finding
/// origins and the symbolized frames all key by stack, so each stack id is looked up once per
/// record, here, and every table after keeps a slot (4 bytes, an array index) instead of
/// hashing the id again.
///
/// Contract: behaves as a dictionary from stack id to slot. The recorder numbers stacks from
/// 1 upwards, so ids below ``denseLimit`` index an array that grows to the highest id seen
/// (no hashing per enqueue); any other id, from a log written by something else, goes to a
/// dictionary.
struct StackSlots {
  static var denseLimit: Int64 { 1 << 16 }

  /// Slot by id below ``denseLimit``; -1 for an id not seen.
  private var dense: [Int32] = []
  private var sparse: [Int64: Int32] = [:]
  /// Frames by slot; `nil` for a stack an enqueue named and no `stack` record defined.
  private var frames: [[Frame]?] = []
  /// Whether a `stack` record defined each slot: what an enqueue asks, apart from `frames`
  /// so that asking copies no array (a reference count up and down, per enqueue).
  private var defined: [Bool] = []
  /// Symbolized frames by slot, once asked for.
  private var symbolized: [[Frame]?] = []

  /// How many slots there are: every slot is below it.
  var count: Int { frames.count }

  /// Keeps a `stack` record's frames; a later record with the same id replaces them (its
  /// symbolized frames, once made, stay).
  mutating func define(_ id: Int64, frames: [Frame]) {
    let index = Int(slot(of: id).rawValue)
    self.frames[index] = frames
    defined[index] = true
  }

  /// The slot of stack `id` as an enqueue names it (``StackSlot/noStack`` when it names none),
  /// and whether a `stack` record defined it. A stack no record defined gets a slot too, with
  /// no frames, so that its objects stay apart from those without a stack as they were.
  mutating func slot(naming id: Int64?) -> (slot: StackSlot, isDefined: Bool) {
    guard let id else { return (.noStack, true) }
    let slot = slot(of: id)
    return (slot, defined[Int(slot.rawValue)])
  }

  /// The frames of `slot` as logged; `nil` for ``StackSlot/noStack`` and for a stack no record
  /// defined.
  func frames(of slot: StackSlot) -> [Frame]? {
    slot == .noStack ? nil : frames[Int(slot.rawValue)]
  }

  /// The symbolized frames of `slot`, when ``keepSymbolized(_:of:)`` kept them.
  func symbolizedFrames(of slot: StackSlot) -> [Frame]? {
    slot == .noStack ? nil : symbolized[Int(slot.rawValue)]
  }

  /// Keeps `frames` as the symbolized frames of `slot` (not ``StackSlot/noStack``).
  mutating func keepSymbolized(_ frames: [Frame], of slot: StackSlot) {
    symbolized[Int(slot.rawValue)] = frames
  }

  /// The slot of `id`, made on first use.
  private mutating func slot(of id: Int64) -> StackSlot {
    guard id >= 0 && id < Self.denseLimit else {
      if let known = sparse[id] { return StackSlot(rawValue: known) }
      let slot = addSlot()
      sparse[id] = slot.rawValue
      return slot
    }
    let index = Int(id)
    if index < dense.count, dense[index] >= 0 { return StackSlot(rawValue: dense[index]) }
    if index >= dense.count {
      dense.append(
        contentsOf: repeatElement(-1, count: max(index + 1, dense.count * 2) - dense.count))
    }
    let slot = addSlot()
    dense[index] = slot.rawValue
    return slot
  }

  private mutating func addSlot() -> StackSlot {
    let slot = StackSlot(rawValue: Int32(truncatingIfNeeded: frames.count))
    frames.append(nil)
    defined.append(false)
    symbolized.append(nil)
    return slot
  }
}
