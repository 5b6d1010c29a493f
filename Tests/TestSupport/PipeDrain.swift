import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Reads a pipe on a thread of its own while the child runs, so that a child writing more
/// than the pipe holds (64 KiB on Linux) never blocks on it.
public final class PipeDrain: @unchecked Sendable {
  // @unchecked: `data` and `ended` are guarded by `condition`.
  private let condition = NSCondition()
  private var data = Data()
  private var ended = false

  public convenience init(_ handle: FileHandle) {
    self.init { handle.availableData }
  }

  /// Reads the primary side of a pseudo-terminal, and closes it at the end. Its end is the
  /// secondary side closed everywhere, which Linux reports as EIO rather than as an end of
  /// file: `FileHandle.availableData` would fail on it.
  convenience init(terminalPrimary descriptor: Int32) {
    self.init {
      var buffer = [UInt8](repeating: 0, count: 1 << 16)
      while true {
        let count = read(descriptor, &buffer, buffer.count)
        if count > 0 { return Data(buffer[..<count]) }
        if count < 0 && errno == EINTR { continue }
        close(descriptor)
        return Data()
      }
    }
  }

  /// Calls `nextChunk` on a thread of its own until it returns no bytes (the end).
  private init(_ nextChunk: @escaping @Sendable () -> Data) {
    let thread = Thread { [self] in
      while true {
        let chunk = nextChunk()
        condition.lock()
        if chunk.isEmpty {
          ended = true
        } else {
          data.append(chunk)
        }
        condition.broadcast()
        condition.unlock()
        if chunk.isEmpty { return }
      }
    }
    thread.start()
  }

  /// Waits for the pipe's end (every process holding its write end closed it), at most until
  /// `deadline`: a descendant of the child that keeps the write end open must not hang the
  /// test. Returns everything read, and whether the pipe ended.
  public func wait(deadline: Date) -> (data: Data, ended: Bool) {
    condition.lock()
    defer { condition.unlock() }
    while !ended {
      if !condition.wait(until: deadline) && !ended { break }
    }
    return (data, ended)
  }

  /// Waits until what was read so far satisfies `isComplete`, or the pipe ends, or
  /// `deadline` passes (a guard against a hang, not a measurement); returns whether it was
  /// satisfied.
  public func wait(until isComplete: (Data) -> Bool, deadline: Date) -> Bool {
    condition.lock()
    defer { condition.unlock() }
    while true {
      if isComplete(data) { return true }
      if ended { return false }
      if !condition.wait(until: deadline) && !isComplete(data) { return false }
    }
  }
}
