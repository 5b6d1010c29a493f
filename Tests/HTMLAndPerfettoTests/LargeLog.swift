import Foundation

/// Writes a large, valid v1 log for the size and memory tests: many sessions and queues,
/// thousands of types, checks and marks, objects released about 100 ms after their enqueue
/// (so at most a few hundred are ever queued at once).
enum LargeLog {
  struct Shape {
    var sessions = 3
    var queues = 10
    var objectsPerSession = 20_000
    var types = 1_500
    var checksPerSession = 1_500
    var marksPerSession = 1_500
  }

  static func write(to url: URL, shape: Shape = Shape()) throws {
    var text = ""
    text.reserveCapacity(shape.sessions * shape.objectsPerSession * 260)
    for session in 0..<shape.sessions {
      text += """
        {"ev":"session","v":1,"t":0,"pid":\(9000 + session),"exe":"/app/Large<\(session)>",\
        "wall":"2026-11-29T18:00:00Z","delay_ms":100,"frames":0}\n
        """
      var queued: [(id: Int, queue: Int, releaseAt: Int64)] = []
      var depth = [Int](repeating: 0, count: shape.queues)
      var nextCheck = 0
      var nextMark = 0
      let step: Int64 = 50_000  // an enqueue every 50 µs
      for index in 0..<shape.objectsPerSession {
        let t = Int64(index) * step + 1_000
        // Releases that are due, in time order.
        while let first = queued.first, first.releaseAt <= t {
          queued.removeFirst()
          depth[first.queue] -= 1
          let freed = first.id % 97 != 0
          text +=
            "{\"ev\":\"release\",\"t\":\(first.releaseAt),\"id\":\(first.id),\"tid\":2,"
            + "\"freed\":\(freed)\(freed ? "" : ",\"rc\":1")}\n"
        }
        let id = index + 1
        let queue = index % shape.queues
        depth[queue] += 1
        let type = "Large.Type\(index % shape.types)<Array<Node>>"
        text +=
          "{\"ev\":\"enqueue\",\"t\":\(t),\"id\":\(id),\"obj\":\"0x\(String(0x7f00_0000 + index % 512 * 64, radix: 16))\","
          + "\"type\":\"\(type)\",\"q\":\"queue-\(queue)\",\"tid\":1,\"depth\":\(depth[queue])}\n"
        queued.append((id, queue, t + 100_000_000 + Int64(index % 7) * 1_000_000))
        if nextCheck < shape.checksPerSession,
          index % (shape.objectsPerSession / shape.checksPerSession) == 3
        {
          nextCheck += 1
          text +=
            "{\"ev\":\"check\",\"t\":\(t + 10),\"obj\":\"0x1\",\"type\":\"\(type)\",\"alive\":true,"
            + "\"label\":\"test \(nextCheck)\",\"id\":\(id)}\n"
        }
        if nextMark < shape.marksPerSession,
          index % (shape.objectsPerSession / shape.marksPerSession) == 5
        {
          nextMark += 1
          text += "{\"ev\":\"mark\",\"t\":\(t + 20),\"label\":\"mark \(nextMark)\",\"tid\":1}\n"
        }
      }
      let last = Int64(shape.objectsPerSession) * step + 200_000_000
      for entry in queued.dropLast(50) {
        text +=
          "{\"ev\":\"release\",\"t\":\(entry.releaseAt),\"id\":\(entry.id),\"tid\":2,\"freed\":true}\n"
      }
      text += "{\"ev\":\"end\",\"t\":\(last),\"why\":\"exit\",\"pending\":50,\"lost\":0}\n"
    }
    try Data(text.utf8).write(to: url)
  }
}
