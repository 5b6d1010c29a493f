/// Objects released lately, by id and by address, kept for a bounded while after their release.
///
/// Why: the recorder takes `t` before its buffer lock, so a `check` timed before a release can
/// reach the file after it. To judge such a check by its `t` (the contract), the reader must
/// still know the released object when the check arrives. Memory stays bounded: at most
/// ``capacity`` entries, and an entry goes once it is older than ``window`` of log time (the
/// oldest goes first when full). The trade-off: a check that arrives later than that is judged
/// without the release, as if its object had left the queue long ago.
struct RecentReleases<Value> {
  /// One released object.
  struct Entry {
    var address: Address
    var enqueuedAt: Int64
    var releasedAt: Int64
    var value: Value
    /// Tells a later release of a reused id from this one.
    fileprivate var serial: UInt64 = 0

    init(address: Address, enqueuedAt: Int64, releasedAt: Int64, value: Value) {
      self.address = address
      self.enqueuedAt = enqueuedAt
      self.releasedAt = releasedAt
      self.value = value
    }
  }

  /// The default bound on entries: a burst of releases this long fits.
  static var defaultCapacity: Int { 16_384 }
  /// The default look-back in log time: one second, ten times the shared queue's delay, far
  /// more than a thread waits between reading the clock and writing its record.
  static var defaultWindow: Int64 { 1_000_000_000 }

  let capacity: Int
  let window: Int64
  private var entries = IntegerTable<Entry>()
  private var idByAddress = IntegerTable<UInt64>()
  /// Ids and serials in release order: a ring of `count` slots from `head`.
  private var order: [(id: UInt64, serial: UInt64)] = []
  private var head = 0
  private(set) var count = 0
  private var nextSerial: UInt64 = 0

  init(
    capacity: Int = RecentReleases.defaultCapacity, window: Int64 = RecentReleases.defaultWindow
  ) {
    self.capacity = max(1, capacity)
    self.window = window
  }

  /// The entry of object `id`, while it is kept. Setting updates a kept entry only.
  subscript(id: UInt64) -> Entry? {
    get { entries[id] }
    set {
      guard let newValue, let old = entries[id] else { return }
      var updated = newValue
      updated.serial = old.serial
      entries[id] = updated
    }
  }

  /// The latest kept release of an object at `address`.
  func latest(at address: Address) -> (id: UInt64, entry: Entry)? {
    guard let id = idByAddress[address.rawValue], let entry = entries[id] else { return nil }
    return (id, entry)
  }

  /// Keeps the release of object `id`; `now` is the latest `t` read, which ages older entries.
  mutating func add(_ id: UInt64, _ entry: Entry, now: Int64) {
    expire(before: now - window)
    if count == capacity { removeOldest() }
    var entry = entry
    nextSerial += 1
    entry.serial = nextSerial
    if count < order.count {
      order[(head + count) % order.count] = (id, nextSerial)
    } else {
      // Grow the ring (only until `capacity`): straighten it, then append.
      if head != 0 {
        order = Array(order[head...] + order[..<head])
        head = 0
      }
      order.append((id, nextSerial))
    }
    count += 1
    entries[id] = entry
    idByAddress[entry.address.rawValue] = id
  }

  /// Forgets entries released before `time`.
  private mutating func expire(before time: Int64) {
    while count > 0 {
      let oldest = order[head]
      if let entry = entries[oldest.id], entry.serial == oldest.serial, entry.releasedAt >= time {
        return
      }
      removeOldest()
    }
  }

  private mutating func removeOldest() {
    let oldest = order[head]
    head = (head + 1) % order.count
    count -= 1
    guard let entry = entries[oldest.id], entry.serial == oldest.serial else { return }
    entries[oldest.id] = nil
    if idByAddress[entry.address.rawValue] == oldest.id {
      idByAddress[entry.address.rawValue] = nil
    }
  }
}
