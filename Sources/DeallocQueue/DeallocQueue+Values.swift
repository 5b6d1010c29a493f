import DeallocHooks

extension DeallocQueue {
  /// Takes over a value that holds references (`[CellModel]`, `[ID: Node]`, a struct of
  /// arrays, an enum with an object payload) and sets the caller's variable to `nil`.
  ///
  /// Why: in Swift a large graph is as often held in a value as in an object, and tearing
  /// down the value costs the caller the same. The value goes in inside one box, its only
  /// allocation: the queue holds the box as it holds an object, one entry whatever the value
  /// holds (`pendingCount`, `maxPending`), and the box's release on the queue's thread
  /// destroys the value, which releases what it references. A class instance, even through
  /// generic code that calls this overload, goes in as itself, with no box.
  ///
  /// With tracing on, the `enqueue` record names the value's type (`Swift.Array<App.Cell>`),
  /// not the box's, with its element count when it is a collection; its `release` says
  /// whether the box was freed, that is whether the queue's copy of the value was destroyed
  /// there (docs/log-format.md).
  ///
  /// Not `sending`, as the class overload is not: both run synchronously in the caller's
  /// isolation, so Swift 6 accepts a non-`Sendable` value from `@MainActor` or an actor as it
  /// is, where `inout sending` would refuse the common case, an isolated stored property
  /// (`performBackgroundDeallocation(&self.cells)`), for being in the actor's region. The
  /// trade-off is the queue's own, as with objects: the value's last reference moves to
  /// another thread for its destruction (`Entry` owns that promise), so `deinit`s of the
  /// objects it held run there and must not touch the caller's isolated state.
  public func releaseInBackground<Value>(_ value: inout Value?) {
    guard let taken = value.take() else { return }
    if Value.self is AnyObject.Type, MemoryLayout<Value>.size == MemoryLayout<AnyObject>.size {
      var object: AnyObject? = unsafeBitCast(consume taken, to: AnyObject.self)
      enqueue(&object, hooked: true)
      return
    }
    enqueueValue(consume taken)
  }

  /// Boxes `value` and queues the box; the `enqueue` record, when traced, names `Value`.
  @inline(__always)
  private func enqueueValue<Value>(_ value: consuming Value) {
    let traced = QueueTracing.isRecording
    // Counted while the value is still the caller's, and only when it is recorded.
    let elementCount = traced ? ValueBox<Value>.elementCount(of: value) : nil
    // Moved, never copied, into the box, as an object is into its entry: a copy left in
    // this frame would keep the value's objects alive until the hand-over returns, so a drain
    // on another thread in that window would leave them to die on this one.
    let box = ValueBox(consume value)
    let id = traced ? QueueTracing.prepareEnqueue(box, naming: Value.self) : 0
    push(
      Entry(object: consume box, traceID: id),
      commit: traced ? .value(elementCount: elementCount) : .untraced)
  }
}
