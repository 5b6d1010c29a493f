import DeallocTrace

#if canImport(Glibc)
  import Glibc
#endif

/// What a leak assertion holds: a weak reference, and what to say once the object is gone.
final class WeakReference {
  private(set) weak var object: AnyObject?
  let typeName: String
  /// The address, bit-inverted: kept as a plain integer, it would be a word equal to the
  /// object's address, which a holder scan (`DEALLOCTRACE_HOLDERS=1`) cannot tell from a
  /// reference and would list as a holder (docs/log-format.md, the `holders` limits).
  private let invertedAddress: UInt

  init(_ object: AnyObject?) {
    self.object = object
    typeName = object.map { String(reflecting: type(of: $0)) } ?? "nil"
    invertedAddress =
      ~(object.map { UInt(bitPattern: Unmanaged.passUnretained($0).toOpaque()) } ?? 0)
  }

  var address: UInt { ~invertedAddress }

  var isAlive: Bool { object != nil }

  /// Writes a `check` record, so that `dealloctrace report` can judge this look later.
  func recordCheck(alive: Bool, label: String) {
    DeallocTrace.recordCheck(address: address, typeName: typeName, alive: alive, label: label)
  }
}

/// Sleeps the calling thread.
func usleepMilliseconds(_ milliseconds: UInt32) {
  usleep(milliseconds * 1_000)
}
