/// Hands `object` to `DeallocQueue.shared` and sets the variable to `nil`.
///
/// The free-function spelling of `DeallocQueue.shared.releaseInBackground(_:)`, for call
/// sites that tear down a large graph and should not pay for it on the current thread.
public func performBackgroundDeallocation<T: AnyObject>(_ object: inout T?) {
  DeallocQueue.shared.releaseInBackground(&object)
}
