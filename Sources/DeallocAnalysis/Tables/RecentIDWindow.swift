/// The positions of the objects with the latest ids, by id, in a direct-mapped window: id `n`
/// sits in slot `n mod size` while it is among the latest `size` ids seen.
///
/// Contract: an id is in the window exactly when it was put there and ``covers(_:)`` it; the
/// owner keeps every other id in its own table (a dictionary), where
/// ``advance(to:evicting:)`` hands over each position whose id leaves the window, and
/// ``insert(_:position:evicting:)`` refuses an id below the window's range. No id at or
/// below one the table received is covered, so a window that grows never claims an id the
/// table holds.
///
/// Why: a recorder hands out ids in order and a queue releases most objects shortly after
/// their enqueue, so nearly every release is of an id among the latest few thousand, which
/// then needs no hashing. The window doubles, up to ``maximumSize``, whenever an eighth of
/// its size in objects has left it since it last grew, so that a log whose queues keep
/// objects keeps them here too. The trade-off: a window that grew keeps its size to the
/// session's end, and growing moves every slot once.
struct RecentIDWindow {
  /// Slots; a power of two.
  private(set) var size: Int
  let maximumSize: Int
  /// `position + 1` per slot; 0 when empty. Allocated at the first id.
  private var slots: [UInt32] = []
  /// The highest id put in so far.
  private(set) var highest: UInt64?
  /// Ids below this one are never covered: one past the highest id the table received.
  private var floor: UInt64 = 0
  private var evictedSinceGrowth = 0

  init(size: Int, maximumSize: Int) {
    precondition(size > 0 && size & (size - 1) == 0, "a power of two")
    precondition(maximumSize >= size && maximumSize & (maximumSize - 1) == 0, "a power of two")
    self.size = size
    self.maximumSize = maximumSize
  }

  @inline(__always)
  private func slot(_ id: UInt64) -> Int { Int(truncatingIfNeeded: id) & (size - 1) }

  /// Whether `id` is among the latest `size` ids up to the highest (the window's range), and
  /// above every id the table received.
  @inline(__always)
  func covers(_ id: UInt64) -> Bool {
    guard let highest, id <= highest, id >= floor else { return false }
    return highest - id < UInt64(size)
  }

  /// The position stored for `id`, which the window covers.
  @inline(__always)
  func position(of id: UInt64) -> Int? {
    let stored = slots[slot(id)]
    return stored == 0 ? nil : Int(stored) - 1
  }

  /// Stores `position` for `id` when the window takes it: an id above the highest so far (the
  /// window moves up to it first, ``advance(to:evicting:)``) or one it covers. `false` for an
  /// id below its range, which the owner's table must take: the window then never covers it.
  @inline(__always)
  mutating func insert(_ id: UInt64, position: Int, evicting evict: (Int) -> Void) -> Bool {
    if highest.map({ id > $0 }) ?? true {
      advance(to: id, evicting: evict)
    } else if !covers(id) {
      tableReceived(id)
      return false
    }
    set(id, position: position)
    return true
  }

  /// Stores `position` for `id`, which the window covers, or which is above the highest id
  /// (call ``advance(to:evicting:)`` first then).
  @inline(__always)
  mutating func set(_ id: UInt64, position: Int) {
    precondition(position < Int(UInt32.max), "more than 4 billion positions")
    slots[slot(id)] = UInt32(position + 1)
  }

  /// Forgets `id`, which the window covers.
  @inline(__always)
  mutating func remove(_ id: UInt64) {
    slots[slot(id)] = 0
  }

  /// Notes that the owner's table received `id` (one the window did not cover).
  @inline(__always)
  mutating func tableReceived(_ id: UInt64) {
    if id >= floor { floor = id + 1 }
  }

  /// Moves the window up to `id` (above the highest so far): each position still stored
  /// for an id that leaves the window goes to `evict`, which must put it in the table, and
  /// its slot is emptied.
  @inline(__always)
  mutating func advance(to id: UInt64, evicting evict: (Int) -> Void) {
    if slots.isEmpty { slots = Array(repeating: 0, count: size) }
    defer { highest = id }
    guard let highest else { return }
    // Ids below `kept` leave; those of the old window among them are visited, at most
    // `size` (every slot) when the window jumps by that much or more.
    let window = UInt64(size)
    let kept = id >= window ? id - window + 1 : 0
    let oldLowest = highest >= window ? highest - window + 1 : 0
    guard kept > oldLowest else { return }
    let leaving = min(kept - oldLowest, window)
    var leavingID = kept - leaving
    while leavingID < kept {
      let index = slot(leavingID)
      if slots[index] != 0 {
        evict(Int(slots[index]) - 1)
        slots[index] = 0
        tableReceived(leavingID)
        evictedSinceGrowth += 1
      }
      leavingID += 1
    }
    if evictedSinceGrowth >= max(1, size / 8) && size < maximumSize { grow() }
  }

  /// Doubles the window: each stored position moves to its id's slot in the larger one. A
  /// slot's id is the one id of the covered range that maps to it.
  @inline(never)
  private mutating func grow() {
    guard let highest else { return }
    let larger = size * 2
    var grown = [UInt32](repeating: 0, count: larger)
    for index in slots.indices where slots[index] != 0 {
      let id = highest - ((highest &- UInt64(index)) & UInt64(size - 1))
      grown[Int(truncatingIfNeeded: id) & (larger - 1)] = slots[index]
    }
    slots = grown
    size = larger
    evictedSinceGrowth = 0
  }

  /// A position for ``renumber(_:)`` that empties its slot.
  static let dropped = UInt32.max

  /// Replaces every stored position `p` by `renumbered[p]`; ``dropped`` empties the slot.
  mutating func renumber(_ renumbered: [UInt32]) {
    for index in slots.indices where slots[index] != 0 {
      let position = renumbered[Int(slots[index]) - 1]
      slots[index] = position == Self.dropped ? 0 : position + 1
    }
  }
}
