import DeallocAnalysis
import DeallocLog
import Foundation
import Testing
import TextEscaping

/// One policy per output format (`Escaping`), each tested on its own, then the hostile
/// fixture (terminal escapes, bidirectional overrides, line separators, workflow commands,
/// `@mentions`, NUL and C1 controls in every field a log can carry) through every format.
@Suite struct EscapingTests {
  /// Characters that must never reach a human-readable output raw.
  static let forbidden: [Unicode.Scalar] =
    (0..<0x20).compactMap { $0 == 0x0A ? nil : Unicode.Scalar($0) }
    + (0x7F...0x9F).compactMap(Unicode.Scalar.init)
    + (0x202A...0x202E).compactMap(Unicode.Scalar.init)
    + (0x2066...0x2069).compactMap(Unicode.Scalar.init) + ["\u{2028}", "\u{2029}"]

  @Test func terminalShowsControlsAndLayoutCharactersOneWay() {
    #expect(Escaping.terminal("plain é😀") == "plain é😀")
    #expect(
      Escaping.terminal("a\nb\r\tc\u{1B}[31m\u{7F}\u{9B}\u{202E}\u{2066}\u{2028}\u{2029}")
        == #"a\nb\r\tc\u{1B}[31m\u{7F}\u{9B}\u{202E}\u{2066}\u{2028}\u{2029}"#)
  }

  @Test func markdownEscapesSyntaxAndNeutralisesMentions() {
    #expect(
      Escaping.markdown("@octocat <b>|*_`#[x]\\ &")
        == "@&#8203;octocat &lt;b&gt;\\|\\*\\_\\`\\#\\[x\\]\\\\ &amp;")
    #expect(Escaping.markdown("a\nb\u{1B}c\u{202E}") == #"a b\\u{1B}c\\u{202E}"#)
    #expect(Escaping.markdownCode("a|b`c\nd\u{1B}") == #"a¦bˋc d\u{1B}"#)
  }

  @Test func htmlEscapesMarkupAndShowsControls() {
    #expect(
      Escaping.html("<a href=\"x\">'&'</a>\u{1}\t\u{202E}\u{FFFE}")
        == "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;\\u{1}\t\\u{202E}\u{FFFD}")
  }

  @Test func xmlKeepsOnlyCharactersXMLAllows() {
    #expect(
      Escaping.xmlText("a<b>&\n\t\r\u{0}\u{1B}\u{FFFE}")
        == "a&lt;b&gt;&amp;\n\t&#13;\\u{0}\\u{1B}\\u{FFFE}")
    #expect(Escaping.xmlAttribute("\"a\"\n\t") == "&quot;a&quot;&#10;&#9;")
  }

  @Test func jsonEscapesControlsAndLayoutCharacters() {
    #expect(Escaping.json("a\"b\\c\n\u{1}é") == #""a\"b\\c\n\u0001é""#)
    #expect(
      Escaping.json("\u{7F}\u{85}\u{2028}\u{2029}\u{202A}\u{202E}\u{2066}\u{2069}\u{2067}x")
        == #""\u007f\u0085\u2028\u2029\u202a\u202e\u2066\u2069\u2067x""#)
    let decoded = try? JSONSerialization.jsonObject(
      with: Data(Escaping.json("\u{1B}\u{202E}é😀").utf8), options: .fragmentsAllowed)
    #expect(decoded as? String == "\u{1B}\u{202E}é😀")
  }

  /// The scan looks at eight bytes at a time: every character that needs escaping, and
  /// every lead byte that only looks like one, at each offset within a word and across a
  /// word's end, reads as a scalar-by-scalar escape writes it.
  @Test func jsonEscapesAtEveryOffsetOfTheWordScan() {
    func reference(_ text: String) -> String {
      var out = "\""
      for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _
        where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
          || (0x2028...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value):
          let hex = String(scalar.value, radix: 16)
          out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: out.unicodeScalars.append(scalar)
        }
      }
      return out + "\""
    }
    let specials = [
      "\"", "\\", "\n", "\u{0}", "\u{1F}", "\u{7F}", "\u{80}", "\u{9F}", "\u{A0}", "é", "\u{2028}",
      "\u{202E}", "\u{202F}", "\u{2027}", "\u{2066}", "\u{2069}", "\u{206A}", "€", "😀",
    ]
    for special in specials {
      for offset in 0..<17 {
        let text =
          String(repeating: "a", count: offset) + special + String(repeating: "b", count: 9)
        #expect(
          Escaping.json(text) == reference(text),
          "\(special.unicodeScalars.first!.value) at \(offset)")
        let twice = text + special
        #expect(Escaping.json(twice) == reference(twice))
      }
    }
  }

  @Test func workflowCommandsEscapeTheirOwnSyntax() {
    #expect(Escaping.workflowData("100% done\r\nnext: a,b") == "100%25 done%0D%0Anext: a,b")
    #expect(Escaping.workflowProperty("Box<A, B>: 5%\n") == "Box<A%2C B>%3A 5%25%0A")
    #expect(
      Escaping.workflowData("a\u{1B}[31mb\tc\u{202E}") == #"a\u{1B}[31mb"# + "\tc" + #"\u{202E}"#)
  }

  /// The hostile fixture through every format: no forbidden character where a person or a
  /// runner reads it raw, no line a runner would take for a workflow command, no mention.
  @Test func hostileFixtureThroughEveryFormat() throws {
    let report = try Fixtures.report(["hostile-escapes.jsonl"])
    #expect(report.summary.leaked == 1)
    let result = Gate().evaluate(report)
    let selector = ObjectSelector("1")
    var collector = ObjectHistoryCollector(
      selector, stuckAfter: AnalysisOptions.defaultStuckAfter, symbolizer: nil)
    var reader = LogReader()
    try reader.read([Fixtures.input("hostile-escapes.jsonl")], into: &collector)
    #expect(!collector.histories.isEmpty)
    // Each human-readable output, with the characters its format keeps on purpose.
    let outputs: [(name: String, text: String, keeps: Set<Unicode.Scalar>)] = [
      ("text", TextRenderer().render(report), []),
      ("markdown", MarkdownRenderer().render(report), []),
      ("html", HTMLRenderer().render(report), ["\t", "\r"]),
      ("gate text", GateTextRenderer().render(result), []),
      ("gate markdown", GateMarkdownRenderer().render(result), []),
      ("junit", JUnitRenderer().render(result), ["\t"]),
      ("github", GitHubRenderer(workspace: "/", currentDirectory: "/").render(result), ["\t"]),
      (
        "explain",
        ExplainRenderer().render(collector.histories, selector: selector, omitted: 0), []
      ),
    ]
    for output in outputs {
      let bad = output.text.unicodeScalars.first {
        Self.forbidden.contains($0) && !output.keeps.contains($0)
      }
      #expect(bad == nil, "\(output.name) holds U+\(String(bad?.value ?? 0, radix: 16))")
      #expect(output.text.contains("Evil.Leak") || output.name == "gate markdown", "\(output.name)")
      // HTML and JUnit are files for parsers, which keep a label's line breaks; the rest can
      // reach a terminal or the runner's log, where a line must not start a command.
      guard output.name != "html" && output.name != "junit" else { continue }
      let lines = output.text.split(separator: "\n")
      #expect(
        !lines.contains { $0.hasPrefix("::stop-commands") || $0.hasPrefix("::set-output") },
        "\(output.name)")
      #expect(
        !lines.contains { $0.hasPrefix("::error::") || $0.hasPrefix("::warning::") },
        "\(output.name)")
    }
    for output in outputs where output.name.contains("markdown") {
      let prose = Self.prose(output.text)
      #expect(!prose.contains("@octocat") && !prose.contains("@org") && !prose.contains("@here"))
    }
    for json in [JSONRenderer().render(report), GateJSONRenderer().render(result)] {
      #expect(!json.unicodeScalars.contains { Self.forbidden.contains($0) })
      #expect((try? JSONSerialization.jsonObject(with: Data(json.utf8))) != nil)
    }
  }

  /// Markdown without its code fences and code spans, where GitHub links no mention.
  private static func prose(_ markdown: String) -> String {
    var inFence = false
    var out: [String] = []
    for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
      if line.trimmingPrefix(while: \.isWhitespace).hasPrefix("```") {
        inFence.toggle()
        continue
      }
      if inFence { continue }
      let parts = line.split(separator: "`", omittingEmptySubsequences: false)
      out.append(parts.enumerated().filter { $0.offset % 2 == 0 }.map(\.element).joined())
    }
    return out.joined(separator: "\n")
  }

  /// Issue 29, item 6: no line of XML or HTML starts with `::` once a runner trims its
  /// leading white space; the `:` is a character reference, which reads the same.
  @Test func aColonThatStartsALineIsAReferenceInXMLAndHTML() {
    #expect(Escaping.xmlText("a\n::error::x") == "a\n&#58;:error::x")
    #expect(Escaping.xmlText("::x") == "&#58;:x")
    #expect(Escaping.xmlText("a\n \t\u{A0}::x") == "a\n \t\u{A0}&#58;:x")
    #expect(Escaping.xmlText("a\r::x") == "a&#13;&#58;:x")
    #expect(Escaping.xmlText("a::b\nc: d") == "a::b\nc: d")
    #expect(Escaping.xmlAttribute("::x\n::y") == "&#58;:x&#10;&#58;:y")
    #expect(Escaping.html("::x") == "&#58;:x")
    #expect(Escaping.html("a\r::x\n\u{2003}::y") == "a\r&#58;:x\n\u{2003}&#58;:y")
    #expect(Escaping.html("std::vector") == "std::vector")
  }
}
