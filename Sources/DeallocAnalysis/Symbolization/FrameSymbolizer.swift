import DeallocLog

/// Resolves frames further (symbol, file, line) after reading.
///
/// Implementation requirements: return exactly one frame per input frame, in order; leave
/// a frame unchanged when it cannot be resolved; never throw or trap on bad input. A
/// symbolizer is called once per distinct stack and may batch and cache.
public protocol FrameSymbolizer {
  mutating func symbolize(_ frames: [Frame]) -> [Frame]
  /// Problems worth a warning (the tool is missing, a binary is gone), collected once.
  var problems: [String] { get }
}
