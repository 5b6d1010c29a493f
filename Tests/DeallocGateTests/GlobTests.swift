import DeallocAnalysis
import Testing

@Suite struct GlobTests {
  @Test(arguments: [
    ("Feed.ImageDecoder*", "Feed.ImageDecoder", true),
    ("Feed.ImageDecoder*", "Feed.ImageDecoderPool", true),
    ("Feed.ImageDecoder*", "Feed.ImageDecode", false),
    ("Feed.ImageDecoder*", "MyFeed.ImageDecoder", false),
    ("*Session*", "ThirdPartySDK.Session.invalidate() -> ()", true),
    ("*.close()*", "Feed.FeedScreen.close() -> ()", true),
    ("Feed.?odeCell", "Feed.NodeCell", true),
    ("Feed.?odeCell", "Feed.odeCell", false),
    ("Feed.[NM]odeCell", "Feed.ModeCell", true),
    ("Feed.[!NM]odeCell", "Feed.NodeCell", false),
    ("Feed.[^NM]odeCell", "Feed.CodeCell", true),
    ("Feed.Cell[0-9]", "Feed.Cell7", true),
    ("Feed.Cell[0-9]", "Feed.CellX", false),
    ("[]]x", "]x", true),
    ("a\\*b", "a*b", true),
    ("a\\*b", "axb", false),
    ("*", "", true),
    ("", "", true),
    ("", "x", false),
    ("a*b*c", "a-b-b-c", true),
    ("a*b*c", "a-b-b-", false),
    ("**x", "yyx", true),
    ("Café*", "Café.Menu", true),
  ])
  func matchesWholeStrings(_ pattern: String, _ text: String, _ expected: Bool) throws {
    #expect(try Glob(pattern).matches(text) == expected)
  }

  @Test func starsNeverBacktrackExponentially() throws {
    // Classic catastrophic case for naive recursive matchers: finishes at once here.
    let glob = try Glob(String(repeating: "a*", count: 30) + "b")
    #expect(!glob.matches(String(repeating: "a", count: 5000)))
  }

  @Test(arguments: [
    ("Feed.[abc", "column 6: '[' is never closed by ']'"),
    ("Feed\\", "column 5: '\\' at the end escapes nothing"),
    ("x[z-a]", "column 2: range 'z-a' in '[...]' is reversed"),
  ])
  func badPatternsNameTheColumn(_ pattern: String, _ message: String) {
    #expect(throws: Glob.SyntaxError.self) { try Glob(pattern) }
    do {
      _ = try Glob(pattern)
    } catch {
      #expect(error.description == message)
    }
  }
}
