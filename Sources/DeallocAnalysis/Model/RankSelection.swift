/// The values at given ranks of a list of samples, as sorting them would give, without
/// sorting: a selection (quickselect with a three-way partition) per rank.
///
/// Why: a report's percentiles are three ranks of up to a hundred thousand exact samples per
/// distribution, one distribution per type; sorting each cost about n log n compares at the
/// end of the report, where nothing runs beside it, and a selection costs about 3n. Equal
/// samples (a generated log's latencies are often all alike) stay linear thanks to the
/// three-way partition; a run of bad pivots falls back to sorting what is left, so no input
/// costs more than a sort.
enum RankSelection {
  /// The value at each 0-based rank of `ranks` (in any order, each below `samples.count`) in
  /// `samples` sorted ascending.
  static func values(at ranks: [Int], in samples: [Int64]) -> [Int64] {
    var work = samples
    var values = [Int64](repeating: 0, count: ranks.count)
    work.withUnsafeMutableBufferPointer { buffer in
      // Highest rank first: each selection leaves everything below its rank at or below its
      // value, so the next (lower) one searches only that prefix.
      var end = buffer.count
      for (index, rank) in ranks.enumerated().sorted(by: { $0.element > $1.element }) {
        precondition(rank >= 0 && rank < buffer.count, "rank \(rank) of \(buffer.count) samples")
        values[index] = select(rank, in: buffer, below: min(end, buffer.count))
        end = rank + 1
      }
    }
    return values
  }

  /// Moves the `rank`-th smallest of `buffer[0..<end]` to `buffer[rank]`, smaller or equal
  /// values before it and greater or equal after it, and returns it.
  private static func select(
    _ rank: Int, in buffer: UnsafeMutableBufferPointer<Int64>, below end: Int
  ) -> Int64 {
    var low = 0
    var high = end
    // Each round should leave about half; far more rounds than that means bad pivots.
    let roundLimit = 2 * (Int.bitWidth - end.leadingZeroBitCount) + 8
    var rounds = 0
    while high - low > 16 {
      rounds += 1
      if rounds > roundLimit { break }
      let pivot = median(buffer[low], buffer[low + (high - low) / 2], buffer[high - 1])
      // [low, less): below the pivot; [less, index): equal; [greater, high): above.
      var less = low
      var index = low
      var greater = high
      while index < greater {
        let value = buffer[index]
        if value < pivot {
          buffer.swapAt(less, index)
          less += 1
          index += 1
        } else if value > pivot {
          greater -= 1
          buffer.swapAt(index, greater)
        } else {
          index += 1
        }
      }
      if rank < less {
        high = less
      } else if rank >= greater {
        low = greater
      } else {
        return pivot
      }
    }
    var rest = UnsafeMutableBufferPointer(rebasing: buffer[low..<high])
    rest.sort()
    return buffer[rank]
  }

  private static func median(_ a: Int64, _ b: Int64, _ c: Int64) -> Int64 {
    max(min(a, b), min(max(a, b), c))
  }
}
