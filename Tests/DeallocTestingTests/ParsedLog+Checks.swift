import TestSupport

/// What the leak assertions' tests look for in a log: the `check` records and their order
/// against the queue's releases.
extension ParsedLog {
  struct Check: CustomStringConvertible {
    var alive: Bool
    var id: Int?
    var obj: String?
    var type: String?
    var description: String { "check(alive: \(alive), id: \(id.map(String.init) ?? "-"))" }
  }

  func checks(label: String) -> [Check] {
    kind("check").filter { $0["label"] as? String == label }.map {
      Check(
        alive: $0["alive"] as? Bool ?? false, id: $0["id"] as? Int, obj: $0["obj"] as? String,
        type: $0["type"] as? String)
    }
  }

  /// Whether the first check naming `id` comes before the queue's release of `id`.
  func checkPrecedesRelease(of id: Int) -> Bool {
    let check = records.firstIndex { $0["ev"] as? String == "check" && $0["id"] as? Int == id }
    let release = records.firstIndex {
      $0["ev"] as? String == "release" && $0["id"] as? Int == id
    }
    guard let check, let release else { return false }
    return check < release
  }
}
