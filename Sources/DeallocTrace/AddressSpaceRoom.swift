import CTraceRuntime

/// How much address space a session can take, under an address-space limit (`ulimit -v`,
/// `RLIMIT_AS`): the recorder then shrinks its event buffer and says so, once on stderr
/// and in a `memory` record, instead of taking what the host's own threads need.
///
/// Why: the limit counts every mapping, reserved or touched. A session reserves a writer
/// thread's stack and two event buffers (tens of bytes per event, plus the frames of each
/// backtrace), about 5 MiB at `TraceSession.bufferCapacity`; under a limit of a few tens of
/// MiB that was the room libdispatch needed for its next worker, and the host's queues
/// never drained. The trade-off of the smaller buffer: recording threads wait for the
/// writer sooner (back-pressure), never dropping a record.
struct AddressSpaceRoom: Equatable {
  /// The limit in bytes; 0 when there is none.
  var limit: UInt64
  /// What the process had mapped when the session started.
  var used: UInt64

  /// Below this much free address space a session records with `TraceSession.tightBufferCapacity`.
  /// Far above what a session takes, so that the host keeps the room it had.
  static let roomyBytes: UInt64 = 256 << 20

  var free: UInt64 { limit > used ? limit - used : 0 }

  var isTight: Bool { limit > 0 && free < Self.roomyBytes }

  static func now() -> AddressSpaceRoom {
    AddressSpaceRoom(limit: ctrace_address_space_limit(), used: ctrace_address_space_used())
  }

  /// The one stderr line of a session that starts in a tight address space.
  func notice(bufferCapacity: Int) -> String {
    "dealloctrace: the address space is limited (ulimit -v) to \(limit >> 20) MiB with"
      + " \(free >> 20) MiB free: recording with a \(bufferCapacity)-event buffer"
      + " (see the log's memory record)"
  }

  /// The `memory` record (docs/log-format.md), written right after `session`.
  func recordLine(bufferCapacity: Int) -> [UInt8] {
    var line = JSONLine()
    line.begin("memory")
    line.field("t", 0)
    line.field("as_limit", limit)
    line.field("as_free", free)
    line.field("buffer", bufferCapacity)
    line.end()
    return line.bytes
  }
}
