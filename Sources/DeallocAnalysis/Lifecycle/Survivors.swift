import DeallocLog

/// An object that survived its release, as ``Survivors`` and the check lookup need it.
protocol SurvivingObject {
  var address: Address { get }
  var enqueuedAt: Int64 { get }
  var releasedAt: Int64 { get }
}

/// The objects of one session that survived their release (`freed: false`) and were not
/// deallocated yet, by id and by address.
///
/// Why one type: every reader that follows objects (the analyzer, the Perfetto exporter) keeps
/// them until their dealloc or the session's end, and a check without an id finds its object
/// by address; the address index must forget an object only when it is still the address's
/// latest, which is easy to get wrong twice. Built on ``IntegerTable``, so that following a
/// million survivors costs no hashing of `Dictionary`'s kind.
struct Survivors<Survivor: SurvivingObject> {
  private var byID = IntegerTable<Survivor>()
  /// The latest survivor of each address.
  private var idByAddress = IntegerTable<UInt64>()

  var count: Int { byID.count }
  var isEmpty: Bool { byID.isEmpty }

  /// The survivor `id`. Setting updates a kept survivor only, and must keep its address.
  subscript(id: UInt64) -> Survivor? {
    get { byID[id] }
    set {
      guard let newValue, byID[id] != nil else { return }
      byID[id] = newValue
    }
  }

  /// The latest survivor at `address`.
  func id(at address: Address) -> UInt64? {
    idByAddress[address.rawValue]
  }

  /// Keeps object `id`, just released without being freed, as the latest at its address.
  mutating func insert(_ id: UInt64, _ survivor: Survivor) {
    byID[id] = survivor
    idByAddress[survivor.address.rawValue] = id
  }

  /// Forgets object `id` (deallocated); its address forgets it when it was the latest there.
  @discardableResult
  mutating func remove(_ id: UInt64) -> Survivor? {
    guard let survivor = byID.removeValue(forKey: id) else { return nil }
    if idByAddress[survivor.address.rawValue] == id {
      idByAddress[survivor.address.rawValue] = nil
    }
    return survivor
  }

  /// The survivors, in no particular order.
  var entries: [(id: UInt64, survivor: Survivor)] {
    byID.entries.map { ($0.key, $0.value) }
  }

  /// The survivors' positions (for ``survivor(at:)``) in increasing order of `key`, which
  /// must differ between survivors (the line of each release does). Sorting positions by a
  /// key read once each copies no survivor: an array of them was two copies of every
  /// survivor at the end of a session with many.
  func positions(inOrderOf key: (Survivor) -> Int) -> [Int] {
    let keys = byID.map(key)
    return keys.indices.sorted { keys[$0] < keys[$1] }
  }

  /// The survivor at a position of ``positions(inOrderOf:)``, until the next change.
  func survivor(at position: Int) -> (id: UInt64, survivor: Survivor) {
    let entry = byID.entry(at: position)
    return (entry.key, entry.value)
  }
}
