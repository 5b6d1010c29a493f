/// Hands `object` to `DeallocQueue.shared` and sets the variable to `nil`.
///
/// The free-function spelling of `DeallocQueue.shared.releaseInBackground(_:)`, for call
/// sites that tear down a large graph and should not pay for it on the current thread.
public func performBackgroundDeallocation<T: AnyObject>(_ object: inout T?) {
  DeallocQueue.shared.releaseInBackground(&object)
}

/// Hands a value that holds references (an array of objects, a struct of arrays) to
/// `DeallocQueue.shared` and sets the variable to `nil`: the free-function spelling of the
/// value overload of `DeallocQueue.shared.releaseInBackground(_:)`, which boxes the value.
public func performBackgroundDeallocation<Value>(_ value: inout Value?) {
  DeallocQueue.shared.releaseInBackground(&value)
}
