import Foundation

#if canImport(FoundationXML)
  import FoundationXML
#endif

/// An HTML page parsed as XML: proof that it is well-formed, and its elements for counting.
///
/// The renderer promises XML-compatible markup (void elements self-closed, only the XML
/// entities), so an XML parser is a strict well-formedness check.
struct XMLDocumentScan {
  struct Element {
    var name: String
    var attributes: [String: String]
    /// The element's own text (not its children's).
    var text: String
    /// Names of the enclosing elements, outermost first.
    var ancestors: [String]
    /// The `class` attributes of the enclosing elements, outermost first.
    var ancestorClasses: [Set<String>]

    var classes: Set<String> {
      Set((attributes["class"] ?? "").split(separator: " ").map(String.init))
    }

    func hasClass(_ name: String) -> Bool { classes.contains(name) }

    /// Whether an enclosing element is a `name` with class `className`.
    func isInside(_ name: String, withClass className: String) -> Bool {
      zip(ancestors, ancestorClasses).contains { $0 == name && $1.contains(className) }
    }
  }

  var elements: [Element] = []
  /// Every text node, in order.
  var texts: [String] = []

  /// Parses `markup` (the DOCTYPE line is dropped first: XML has no `<!DOCTYPE html>` DTD).
  /// - Throws: the parser's error, with its line and column.
  init(_ markup: String) throws {
    var body = markup
    if body.hasPrefix("<!DOCTYPE html>") { body.removeFirst("<!DOCTYPE html>".count) }
    let delegate = Collector()
    let parser = XMLParser(data: Data(body.utf8))
    parser.delegate = delegate
    guard parser.parse() else {
      throw ScanError(
        message:
          "not well-formed at line \(parser.lineNumber), column \(parser.columnNumber): "
          + "\(parser.parserError.map { "\($0)" } ?? "unknown error")")
    }
    elements = delegate.elements
    texts = delegate.texts
  }

  /// Elements named `name` that carry every class in `classes`.
  func all(_ name: String, classes: Set<String> = []) -> [Element] {
    elements.filter { $0.name == name && classes.isSubset(of: $0.classes) }
  }

  struct ScanError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
  }

  private final class Collector: NSObject, XMLParserDelegate {
    var elements: [Element] = []
    var texts: [String] = []
    var stack: [Int] = []

    func parser(
      _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
      qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
    ) {
      elements.append(
        Element(
          name: elementName, attributes: attributeDict, text: "",
          ancestors: stack.map { elements[$0].name },
          ancestorClasses: stack.map { elements[$0].classes }))
      stack.append(elements.count - 1)
    }

    func parser(
      _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?,
      qualifiedName qName: String?
    ) {
      stack.removeLast()
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
      texts.append(string)
      if let index = stack.last { elements[index].text += string }
    }

    func parser(_ parser: XMLParser, foundCDATA cdataBlock: Data) {
      let string = String(decoding: cdataBlock, as: UTF8.self)
      texts.append(string)
      if let index = stack.last { elements[index].text += string }
    }
  }
}
