import Testing

@testable import DeallocLog

/// A module's build id is written once per session (the first frame naming it); the reader
/// gives it to every later frame of that module in the session, census `allocStack` frames
/// included, so that `--symbolize` can check each frame against its file.
@Suite struct BuildIDCarryTests {
  private let session =
    #"{"ev":"session","v":1,"t":0,"pid":1,"exe":"/app/Shop","wall":"W","delay_ms":100,"frames":8}"#
  private let introducing =
    #"{"ev":"stack","id":1,"frames":[{"ip":"0x5000","mod":"/app/Shop","off":"0x5000","build_id":"ab12"}]}"#
  private let later =
    #"{"ev":"stack","id":2,"frames":[{"ip":"0x5100","mod":"/app/Shop","off":"0x5100"},{"ip":"0x7000","mod":"/lib/other.so","off":"0x10"}]}"#
  private let census =
    #"{"ev":"census","t":20,"tid":7,"label":"exit","objects":1,"bytes":40,"leaked":1,"leaked_bytes":40,"library_leaked":0,"library_leaked_bytes":0,"delayed_objects":0,"groups":[{"id":"fb73afc9ad01","kind":"leak","instances":1,"count":1,"bytes":40,"members":[{"type":"Shop.Order","count":1,"bytes":40}],"edges":[],"tree":[{"depth":0,"type":"Shop.Order","obj":"0x2000","size":40,"count":1,"bytes":40}],"allocStack":[{"ip":"0x5200","mod":"/app/Shop","off":"0x5200"}]}],"delayed":[],"live":[],"threads_stopped":1,"threads_unstopped":0,"census_us":900}"#

  private func parse(_ lines: [String]) throws -> [LogRecord] {
    var parser = RecordParser()
    return try lines.map { line in
      var bytes = Array(line.utf8)
      return try bytes.withUnsafeMutableBufferPointer { try parser.parse(UnsafeBufferPointer($0)) }
    }
  }

  private func stackFrames(_ record: LogRecord) -> [Frame] {
    if case .stack(let stack) = record { return stack.frames }
    return []
  }

  private func allocationFrames(_ record: LogRecord) -> [Frame] {
    if case .census(let census) = record { return census.groups.flatMap(\.allocationStack) }
    return []
  }

  @Test func laterFramesOfTheSessionCarryTheIntroducedBuildID() throws {
    let records = try parse([session, introducing, later, census])
    #expect(stackFrames(records[1]).map(\.buildID) == ["ab12"])
    #expect(stackFrames(records[2]).map(\.buildID) == ["ab12", nil])
    #expect(allocationFrames(records[3]).map(\.buildID) == ["ab12"])
  }

  @Test func aNewSessionForgetsTheLastOnesBuildIDs() throws {
    let records = try parse([session, introducing, session, later, census])
    #expect(stackFrames(records[3]).map(\.buildID) == [nil, nil])
    #expect(allocationFrames(records[4]).map(\.buildID) == [nil])
  }
}
