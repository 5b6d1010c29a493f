import Foundation
import XCTest

/// A structural check of Chrome trace-event JSON, as Perfetto's importer needs it: every
/// async begin has one end with the same cat, name, id and pid, ids are unique per slice,
/// timestamps are numbers in microseconds, every counter track runs forward in time, and
/// every process is named.
struct TraceValidation {
  typealias Event = [String: Any]

  var events: [Event] = []
  /// Problems found; empty when the trace is valid.
  var problems: [String] = []

  init(json: String) {
    guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)),
      let root = object as? [String: Any], let events = root["traceEvents"] as? [Event]
    else {
      problems.append("not a JSON object with a traceEvents array")
      return
    }
    self.events = events
    validate()
  }

  func ofPhase(_ phase: String) -> [Event] { events.filter { $0["ph"] as? String == phase } }

  func named(_ name: String, phase: String) -> [Event] {
    ofPhase(phase).filter { $0["name"] as? String == name }
  }

  static func args(_ event: Event) -> [String: Any] { event["args"] as? [String: Any] ?? [:] }

  private mutating func validate() {
    var open: [String: Event] = [:]
    var seenIDs = Set<String>()
    var counterTimes: [String: Double] = [:]
    var namedProcesses = Set<Int>()
    var usedProcesses = Set<Int>()
    for (index, event) in events.enumerated() {
      guard let phase = event["ph"] as? String else {
        problems.append("event \(index) has no ph")
        continue
      }
      guard let pid = event["pid"] as? Int, event["tid"] is Int else {
        problems.append("event \(index) has no integer pid/tid")
        continue
      }
      if phase == "M" {
        if event["name"] as? String == "process_name" { namedProcesses.insert(pid) }
        continue
      }
      usedProcesses.insert(pid)
      guard let ts = event["ts"] as? Double ?? (event["ts"] as? Int).map(Double.init) else {
        problems.append("event \(index) has no numeric ts")
        continue
      }
      if ts < 0 { problems.append("event \(index) has a negative ts") }
      switch phase {
      case "b", "e":
        guard let id = event["id"] as? Int, let cat = event["cat"] as? String,
          let name = event["name"] as? String
        else {
          problems.append("async event \(index) lacks an integer id, a cat or a name")
          continue
        }
        let key = "\(pid)/\(cat)/\(id)"
        if phase == "b" {
          if !seenIDs.insert("\(cat)/\(id)").inserted {
            problems.append("id \(id) begins more than one slice")
          }
          var begun = event
          begun["name"] = name
          open[key] = begun
        } else {
          guard let begin = open.removeValue(forKey: key) else {
            problems.append("end of \(key) without a begin")
            continue
          }
          if begin["name"] as? String != name { problems.append("end of \(key) renames it") }
          if let start = (begin["ts"] as? Double) ?? (begin["ts"] as? Int).map(Double.init),
            ts < start
          {
            problems.append("slice \(key) ends before it begins")
          }
        }
      case "C":
        let track = "\(pid)/\(event["name"] as? String ?? "")"
        if let last = counterTimes[track], ts < last {
          problems.append("counter \(track) goes back in time at event \(index)")
        }
        counterTimes[track] = ts
        if Self.args(event).isEmpty { problems.append("counter event \(index) has no value") }
      case "i":
        if !["t", "p", "g"].contains(event["s"] as? String ?? "") {
          problems.append("instant \(index) has no scope")
        }
      default:
        problems.append("event \(index) has an unexpected phase \(phase)")
      }
    }
    for key in open.keys.sorted() { problems.append("slice \(key) never ends") }
    for pid in usedProcesses.subtracting(namedProcesses).sorted() {
      problems.append("process \(pid) has no process_name")
    }
  }
}
