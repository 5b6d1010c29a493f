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
/// Contract: ``id(at:)`` names the latest survivor inserted at an address while it is kept;
/// removing a survivor forgets its address only when it is still the address's latest. Every
/// reader that follows objects (the analyzer, the Perfetto exporter) shares this rule.
struct Survivors<Survivor: SurvivingObject> {
  private var byID: [UInt64: Survivor] = [:]
  /// The latest survivor of each address.
  private var idByAddress: [UInt64: UInt64] = [:]

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
    byID.map { ($0.key, $0.value) }
  }

  /// A survivor's place, for ``survivor(at:)``, valid until the next change.
  typealias Position = Dictionary<UInt64, Survivor>.Index

  /// The survivors' positions in increasing order of `key`, which must differ between
  /// survivors (the line of each release does); each key is read once.
  func positions(inOrderOf key: (Survivor) -> Int) -> [Position] {
    let positions = Array(byID.indices)
    let keys = positions.map { key(byID[$0].value) }
    return keys.indices.sorted { keys[$0] < keys[$1] }.map { positions[$0] }
  }

  /// The survivor at a position of ``positions(inOrderOf:)``, until the next change.
  func survivor(at position: Position) -> (id: UInt64, survivor: Survivor) {
    let entry = byID[position]
    return (entry.key, entry.value)
  }
}
