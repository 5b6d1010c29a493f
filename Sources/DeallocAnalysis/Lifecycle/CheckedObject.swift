import DeallocLog

/// An object in a queue, as the check lookup needs it.
protocol QueuedObject {
  var enqueuedAt: Int64 { get }
}

/// A recent release, as a check's verdict needs it.
protocol ReleasedObject {
  /// Whether the release freed the object.
  var freed: Bool { get }
}

/// What a reader of one session follows of its objects: those in a queue, the survivors of
/// their release and the recent releases. The check lookup (``object(checkedBy:)``) reads it,
/// so that every reader matches a check with the same object.
protocol SessionObjects {
  associatedtype Queued: QueuedObject
  associatedtype Survivor: SurvivingObject
  associatedtype Released: ReleasedObject

  /// Object `id`, while it is in a queue.
  func queued(_ id: UInt64) -> Queued?
  /// The latest enqueue of `address` still in a queue.
  func latestQueuedID(at address: Address) -> UInt64?
  var survivors: Survivors<Survivor> { get }
  var released: RecentReleases<Released> { get }
}

/// The object a check is about, as far as the log has told so far, and where it is now.
enum CheckedObject<Queued: QueuedObject, Survivor: SurvivingObject, Released: ReleasedObject> {
  /// Still in its queue: the check's verdict may change when its release is read.
  case queued(UInt64, Queued)
  /// Released, not freed, not deallocated yet.
  case survivor(UInt64, Survivor)
  /// Released lately (freed, or a survivor whose dealloc followed).
  case released(UInt64, RecentReleases<Released>.Entry)

  var id: UInt64 {
    switch self {
    case .queued(let id, _), .survivor(let id, _), .released(let id, _): return id
    }
  }

  var enqueuedAt: Int64 {
    switch self {
    case .queued(_, let object): return object.enqueuedAt
    case .survivor(_, let survivor): return survivor.enqueuedAt
    case .released(_, let entry): return entry.enqueuedAt
    }
  }

  /// `nil` while the object is in its queue.
  var releasedAt: Int64? {
    switch self {
    case .queued: return nil
    case .survivor(_, let survivor): return survivor.releasedAt
    case .released(_, let entry): return entry.releasedAt
    }
  }

  /// What the log has told of the object's release (its dealloc is not followed here): the
  /// facts its check's verdict is judged on.
  var lifecycle: ObjectLifecycle {
    var lifecycle = ObjectLifecycle(enqueuedAt: enqueuedAt)
    switch self {
    case .queued: break
    case .survivor(_, let survivor):
      lifecycle.releasedAt = survivor.releasedAt
      lifecycle.freedByRelease = false
    case .released(_, let entry):
      lifecycle.releasedAt = entry.releasedAt
      lifecycle.freedByRelease = entry.value.freed
    }
    return lifecycle
  }

  var isQueued: Bool {
    if case .queued = self { return true }
    return false
  }

  /// Whether the object was in its queue at `t` (``QueueMembership``): a check then is a
  /// false leak.
  func wasWaiting(at t: Int64) -> Bool {
    QueueMembership.wasWaiting(at: t, enqueuedAt: enqueuedAt, releasedAt: releasedAt)
  }
}

extension SessionObjects {
  typealias Checked = CheckedObject<Queued, Survivor, Released>

  /// The object `check` is about: by id when the check has one, else the latest enqueue of its
  /// address at or before the check's `t` (or, when every enqueue of the address came later,
  /// the one still in its queue, which explains the verdict). Looks among the objects in a
  /// queue, the survivors of their release and the recent releases.
  func object(checkedBy check: CheckRecord) -> Checked? {
    if let id = check.id { return object(id: id) }
    var latest: Checked?
    var queued: Checked?
    func consider(_ id: UInt64?) {
      guard let id, let found = object(id: id) else { return }
      if found.enqueuedAt <= check.time, latest.map({ $0.enqueuedAt < found.enqueuedAt }) ?? true {
        latest = found
      }
      if queued == nil, found.isQueued { queued = found }
    }
    consider(latestQueuedID(at: check.object))
    consider(survivors.id(at: check.object))
    consider(released.latest(at: check.object)?.id)
    return latest ?? queued
  }

  /// Object `id`, wherever it is now.
  func object(id: UInt64) -> Checked? {
    if let object = queued(id) { return .queued(id, object) }
    if let survivor = survivors[id] { return .survivor(id, survivor) }
    if let entry = released[id] { return .released(id, entry) }
    return nil
  }
}
