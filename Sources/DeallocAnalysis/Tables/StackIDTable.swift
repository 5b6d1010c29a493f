/// Values by stack id, for the lookups made once per enqueue: is its stack defined, and what
/// does it index.
///
/// Contract: behaves as a dictionary from stack id to value. The recorder numbers stacks from
/// 1 upwards, so ids below ``denseLimit`` index an array that grows to the highest id seen
/// (no hashing per enqueue); any other id, from a log written by something else, goes to a
/// dictionary.
struct StackIDTable<Value> {
  static var denseLimit: Int64 { 1 << 16 }

  private var dense: [Value?] = []
  private var sparse: [Int64: Value] = [:]

  /// Whether `id` has a value; unlike reading it, copies nothing (a stack's frames are an
  /// array, whose copy is a reference count up and down, per enqueue).
  func contains(_ id: Int64) -> Bool {
    guard id >= 0 && id < Self.denseLimit else { return sparse.index(forKey: id) != nil }
    return id < dense.count && dense[Int(id)] != nil
  }

  subscript(id: Int64) -> Value? {
    get {
      guard id >= 0 && id < Self.denseLimit else { return sparse[id] }
      return id < dense.count ? dense[Int(id)] : nil
    }
    set {
      guard id >= 0 && id < Self.denseLimit else {
        sparse[id] = newValue
        return
      }
      let index = Int(id)
      if index >= dense.count {
        guard newValue != nil else { return }
        dense.append(
          contentsOf: repeatElement(nil, count: max(index + 1, dense.count * 2) - dense.count))
      }
      dense[index] = newValue
    }
  }
}
