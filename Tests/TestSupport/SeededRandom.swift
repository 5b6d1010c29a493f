import DeallocLog
import Foundation

/// A seedable generator for the tests' random inputs, so that a failing run can be replayed:
/// `printed(for:)` takes the seed from `DEALLOCTRACE_TEST_SEED` or makes one, and prints it
/// with the way to rerun.
public struct SeededRandom: RandomNumberGenerator {
  public let seed: UInt64
  private var state: UInt64

  public init(seed: UInt64) {
    self.seed = seed
    state = seed
  }

  /// A generator for `test`, its seed printed on standard output.
  public static func printed(for test: String) -> SeededRandom {
    let seed =
      ProcessInfo.processInfo.environment["DEALLOCTRACE_TEST_SEED"].flatMap { UInt64($0) }
      ?? UInt64.random(in: 1...UInt64(UInt32.max))
    print("\(test) seed: \(seed) (rerun with DEALLOCTRACE_TEST_SEED=\(seed))")
    return SeededRandom(seed: seed)
  }

  public mutating func next() -> UInt64 {
    defer { state &+= WordMix.golden }
    return WordMix.splitMix(state)
  }
}
