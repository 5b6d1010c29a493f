import DeallocQueue

/// Objects that something outside the queue keeps alive: each site hands one to the queue
/// while this global still holds it, so the queue's release does not free it, and it lives
/// to the end of the run ("leaked after release").
nonisolated(unsafe) var keptAlive: [AnyObject] = []

/// A session a logout forgets in the global list.
final class AuthSession {}
/// A cache entry a screen keeps after handing it over.
final class ImageCacheEntry {}
/// A view model a notification observer keeps.
final class ProfileViewModel {}

/// One leak per site, each from its own function, so that each is its own finding with its
/// own enqueue stack (and so its own id).
enum LeakSite: String, CaseIterable {
  case session
  case cache
  case profile

  @inline(never)
  func leak() {
    switch self {
    case .session: leakSession()
    case .cache: leakCacheEntry()
    case .profile: leakProfile()
    }
  }
}

@inline(never)
func leakSession() {
  var session: AuthSession? = AuthSession()
  keptAlive.append(session!)
  performBackgroundDeallocation(&session)
}

@inline(never)
func leakCacheEntry() {
  var entry: ImageCacheEntry? = ImageCacheEntry()
  keptAlive.append(entry!)
  performBackgroundDeallocation(&entry)
}

@inline(never)
func leakProfile() {
  var model: ProfileViewModel? = ProfileViewModel()
  keptAlive.append(model!)
  performBackgroundDeallocation(&model)
}
