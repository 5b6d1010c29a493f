/// A command line split into options and positional arguments, by a small table of what
/// each command accepts.
///
/// Why hand-written: the toolchain-only rule keeps swift-argument-parser out, and the CLI
/// needs little: `--name VALUE`, `--name=VALUE`, flags, `--` and `-` (standard input).
struct Arguments {
  /// The options a command accepts.
  struct Spec {
    /// Options that take a value, with their aliases mapped to one canonical name.
    var valued: [String: String]
    /// Options without a value, likewise.
    var flags: [String: String]
    /// Options that may be repeated (their values accumulate).
    var repeatable: Set<String> = []
  }

  private(set) var positional: [String] = []
  private var values: [String: [String]] = [:]
  private var setFlags: Set<String> = []

  /// Parses `arguments` (without the command name).
  /// - Throws: ``UsageError`` for unknown options, missing values and repeated options.
  init(_ arguments: [String], spec: Spec) throws(UsageError) {
    var index = 0
    var onlyPositional = false
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if onlyPositional || argument == "-" || !argument.hasPrefix("-") {
        positional.append(argument)
        continue
      }
      if argument == "--" {
        onlyPositional = true
        continue
      }
      var name = argument
      var inlineValue: String?
      if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
        name = String(argument[..<equals])
        inlineValue = String(argument[argument.index(after: equals)...])
      }
      if let canonical = spec.flags[name] {
        if inlineValue != nil { throw UsageError("\(name) takes no value") }
        setFlags.insert(canonical)
        continue
      }
      guard let canonical = spec.valued[name] else {
        throw UsageError("unknown option '\(name)'")
      }
      let value: String
      if let inlineValue {
        value = inlineValue
      } else {
        guard index < arguments.count else { throw UsageError("\(name) needs a value") }
        value = arguments[index]
        index += 1
      }
      if values[canonical] != nil && !spec.repeatable.contains(canonical) {
        throw UsageError("\(name) given twice")
      }
      values[canonical, default: []].append(value)
    }
  }

  /// The value of an option, if given.
  func value(_ name: String) -> String? { values[name]?.last }

  /// Every value of a repeatable option.
  func values(_ name: String) -> [String] { values[name] ?? [] }

  /// Whether a flag was given.
  func flag(_ name: String) -> Bool { setFlags.contains(name) }
}

/// A mistake in the command line: one line, exit status 2.
struct UsageError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
