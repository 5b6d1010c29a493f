import DeallocLog

/// Objects released lately, by id and by address, kept for a bounded while after their release.
///
/// Why: the recorder takes `t` before its buffer lock, so a `check` timed before a release can
/// reach the file after it. To judge such a check by its `t` (the contract), the reader must
/// still know the released object when the check arrives. Memory stays bounded: at most
/// ``capacity`` entries, and an entry goes once it is older than ``window`` of log time (the
/// oldest goes first when full). The trade-off: a check that arrives later than that is judged
/// without the release, as if its object had left the queue long ago.
///
/// Every release passes through here, so the layout is for the hot path: entries sit in a ring
/// in release order (aging them is a look at the oldest), and the two indexes are direct-mapped
/// arrays of slot numbers (one read or write each, and small enough to stay in cache). Two ids
/// or addresses that share an index cell keep only the later: the earlier is then found no
/// more, which shortens its look-back but never mixes two objects up.
struct RecentReleases<Value> {
  /// One released object.
  struct Entry {
    var address: Address
    var enqueuedAt: Int64
    var releasedAt: Int64
    var value: Value
  }

  private struct Slot {
    var id: UInt64
    var entry: Entry
  }

  /// The default bound on entries: a burst of releases this long (a few hundred microseconds
  /// of a drain) fits, and the indexes stay in cache.
  static var defaultCapacity: Int { 4096 }
  /// The default look-back in log time: one second, ten times the shared queue's delay, far
  /// more than a thread waits between reading the clock and writing its record.
  static var defaultWindow: Int64 { 1_000_000_000 }

  /// A power of two.
  let capacity: Int
  let window: Int64
  /// The ring: release number `n` sits in slot `n & (slots.count - 1)`. Grows by doubling up
  /// to `capacity`. A slot holds a release only while its number is kept (``kept(_:)``); the
  /// others hold stale or filler entries, which no lookup reads. Not `Optional`s: each was a
  /// tag and padding more per slot, and a test per read, on a path every release takes.
  private var slots: [Slot] = []
  /// The release numbers kept are `oldest ..< oldest + count`.
  private var oldest = 0
  private(set) var count = 0
  /// Release number by id cell, and of each address cell's latest release; -1 when none. A
  /// cell whose number is no longer kept, or whose slot holds another id or address, is
  /// empty: forgetting an entry touches no index.
  private var numberByID: [Int] = []
  private var numberByAddress: [Int] = []

  init(
    capacity: Int = RecentReleases.defaultCapacity, window: Int64 = RecentReleases.defaultWindow
  ) {
    var size = 16
    while size < capacity && size < 1 << 30 { size <<= 1 }
    self.capacity = size
    self.window = window
  }

  /// The entry of object `id`, while it is kept. Setting updates a kept entry only.
  subscript(id: UInt64) -> Entry? {
    get { slot(of: id).map { slots[$0].entry } }
    set {
      guard let newValue, let index = slot(of: id) else { return }
      slots[index].entry = newValue
    }
  }

  /// The latest kept release of an object at `address`.
  func latest(at address: Address) -> (id: UInt64, entry: Entry)? {
    guard !numberByAddress.isEmpty,
      let index = kept(numberByAddress[Self.cell(address: address.rawValue, capacity)]),
      slots[index].entry.address == address
    else { return nil }
    return (slots[index].id, slots[index].entry)
  }

  /// Keeps the release of object `id`; `now` is the latest `t` read, which ages older entries.
  mutating func add(_ id: UInt64, _ entry: Entry, now: Int64) {
    let (difference, overflow) = now.subtractingReportingOverflow(window)
    let limit = overflow ? Int64.min : difference
    while count > 0, slots[oldest & (slots.count - 1)].entry.releasedAt < limit {
      oldest += 1
      count -= 1
    }
    if count == capacity {
      oldest += 1
      count -= 1
    }
    let slot = Slot(id: id, entry: entry)
    if count == slots.count { grow(filler: slot) }
    let number = oldest + count
    slots[number & (slots.count - 1)] = slot
    count += 1
    numberByID[Self.cell(id: id, capacity)] = number
    numberByAddress[Self.cell(address: entry.address.rawValue, capacity)] = number
  }

  /// The slot of release `number`, when it is still kept.
  @inline(__always)
  private func kept(_ number: Int) -> Int? {
    number >= oldest && number < oldest + count ? number & (slots.count - 1) : nil
  }

  private func slot(of id: UInt64) -> Int? {
    guard !numberByID.isEmpty, let index = kept(numberByID[Self.cell(id: id, capacity)]),
      slots[index].id == id
    else { return nil }
    return index
  }

  /// Index cells: twice as many as entries. Ids are handed out in sequence, so their low bits
  /// spread them already.
  @inline(__always)
  private static func cell(id: UInt64, _ capacity: Int) -> Int {
    Int(truncatingIfNeeded: id) & (capacity * 2 - 1)
  }

  /// Addresses are aligned and close together: mixed, then the high bits.
  @inline(__always)
  private static func cell(address: UInt64, _ capacity: Int) -> Int {
    Int(truncatingIfNeeded: (address &* WordMix.golden) >> 40) & (capacity * 2 - 1)
  }

  /// Doubles the ring (up to `capacity`) and moves the kept entries to their new slots; the
  /// indexes (release numbers) stay valid. They are allocated at the first release. The
  /// slots that hold no kept release yet are `filler` (the release being added).
  private mutating func grow(filler: Slot) {
    if numberByID.isEmpty {
      numberByID = Array(repeating: -1, count: capacity * 2)
      numberByAddress = Array(repeating: -1, count: capacity * 2)
    }
    let size = min(capacity, max(16, slots.count * 2))
    var grown = [Slot](repeating: filler, count: size)
    for number in oldest..<(oldest + count) {
      grown[number & (size - 1)] = slots[number & (slots.count - 1)]
    }
    slots = grown
  }
}
