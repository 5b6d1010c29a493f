/// The box a value handed to a queue waits in: the one allocation the value costs.
///
/// The queue holds it as it holds an object, so values and objects share one batch, one
/// drain and one traced release; releasing the box destroys the value, and with it the
/// value's references to the objects it held.
final class ValueBox<Value> {
  let value: Value

  init(_ value: consuming Value) {
    self.value = value
  }

  /// The element count of a collection for its `enqueue` record, `nil` for any other value.
  ///
  /// Only collections that know their count without walking themselves: random-access ones
  /// (`Array`, `ContiguousArray`, slices) and `Dictionary` and `Set`. The trade-off: other
  /// collections (a `String`, a linked list) get no count, since counting them would cost
  /// the enqueuing thread a walk of the value (and run user code) on the queue's hot path.
  static func elementCount(of value: Value) -> Int? {
    if let counted = value as? any CountedInConstantTime {
      return counted.count
    }
    if let collection = value as? any RandomAccessCollection {
      return collection.count
    }
    return nil
  }
}

/// The collections besides the random-access ones whose `count` costs O(1).
private protocol CountedInConstantTime {
  var count: Int { get }
}

extension Array: CountedInConstantTime {}
extension Dictionary: CountedInConstantTime {}
extension Set: CountedInConstantTime {}
