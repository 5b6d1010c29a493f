import DeallocAnalysis
import DeallocLog
import TextEscaping

/// The benchmark's output: named figures, printed as one JSON object in insertion order.
struct BenchFigures {
  private var entries: [(key: String, json: String)] = []

  /// Adds a number; non-finite values become `null`.
  mutating func add(_ key: String, _ value: Double) {
    entries.append((key, value.isFinite ? String(format3(value)) : "null"))
  }

  mutating func add(_ key: String, _ value: Int) {
    entries.append((key, String(value)))
  }

  mutating func add(_ key: String, _ value: String) {
    var quoted = ""
    Escaping.json(value, into: &quoted)
    entries.append((key, quoted))
  }

  mutating func add(_ key: String, _ value: Bool) {
    entries.append((key, value ? "true" : "false"))
  }

  func json() -> String {
    "{\n" + entries.map { "  \"\($0.key)\": \($0.json)" }.joined(separator: ",\n") + "\n}"
  }
}

/// Rounds to three decimals without Foundation's formatters.
private func format3(_ value: Double) -> String {
  let rounded = (value * 1000).rounded() / 1000
  return String(rounded)
}
