extension ObjectFacts {
  /// The facts of the object's life, through the one model that sets them: changing them
  /// also moves ``state`` to the state they settle (freed, late), and leaves it otherwise.
  var lifecycle: ObjectLifecycle {
    get {
      ObjectLifecycle(
        enqueuedAt: enqueuedAt, releasedAt: releasedAt, freedByRelease: freedByRelease,
        retainCountAfterRelease: retainCountAfterRelease, deallocAt: deallocAt)
    }
    set {
      enqueuedAt = newValue.enqueuedAt
      releasedAt = newValue.releasedAt
      freedByRelease = newValue.freedByRelease
      retainCountAfterRelease = newValue.retainCountAfterRelease
      deallocAt = newValue.deallocAt
      if let settled = newValue.settledState { state = settled }
    }
  }
}
