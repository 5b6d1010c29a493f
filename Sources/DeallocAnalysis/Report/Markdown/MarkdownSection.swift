import DeallocLog
import TextEscaping

/// Pieces that more than one Markdown section writes.
enum MarkdownSection {
  /// `lines` as a fenced code block indented under a list item, each line made safe inside
  /// the fence.
  static func codeBlock(_ lines: [String]) -> [String] {
    ["  ```"] + lines.map { "  \(Escaping.markdownFenceLine($0))" } + ["  ```"]
  }
}
