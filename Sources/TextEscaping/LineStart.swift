extension Escaping {
  /// Finds the `:` that would start a line of output, for the escapers of formats that may
  /// be written to a CI job's log (JUnit and HTML on standard output).
  ///
  /// Why: a GitHub runner reads each line of a step's output (split at `\n` and at `\r`),
  /// trims its leading white space, and executes it when it then starts with `::`
  /// (`::stop-commands::`, `::error file=…::`). Such a `:` is written as a character
  /// reference instead, which XML and HTML read as the same `:`. Where the escaped text
  /// begins counts as a line start too, since the escaper cannot see what comes before it;
  /// the cost is a reference where a `:` starts a name, which reads the same.
  struct LineStart {
    private var atStart = true

    /// Whether `scalar`, the next one of the text, is a `:` at the start of a line; keeps
    /// track of line breaks and of the white space a runner trims.
    @inline(__always)
    mutating func isCommand(_ scalar: Unicode.Scalar) -> Bool {
      if scalar == ":" && atStart {
        atStart = false
        return true
      }
      atStart =
        scalar == "\n" || scalar == "\r" || (atStart && scalar.properties.isWhitespace)
      return false
    }
  }
}
