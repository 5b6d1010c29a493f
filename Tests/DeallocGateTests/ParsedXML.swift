import Foundation

#if canImport(FoundationXML)
  import FoundationXML
#endif

/// An XML element as a real parser (Foundation's `XMLParser`, libxml2 underneath) read it:
/// the tests check the JUnit output through this, never by matching text.
final class ParsedElement {
  let name: String
  let attributes: [String: String]
  var children: [ParsedElement] = []
  var text = ""

  init(name: String, attributes: [String: String]) {
    self.name = name
    self.attributes = attributes
  }

  func children(_ name: String) -> [ParsedElement] { children.filter { $0.name == name } }
  func child(_ name: String) -> ParsedElement? { children.first { $0.name == name } }
  subscript(attribute: String) -> String? { attributes[attribute] }

  /// Parses `xml`; throws with the parser's error when it is not well-formed.
  static func parse(_ xml: String) throws -> ParsedElement {
    let builder = TreeBuilder()
    let parser = XMLParser(data: Data(xml.utf8))
    parser.delegate = builder
    guard parser.parse(), let root = builder.root else {
      throw ParseError(
        message: parser.parserError.map { "\($0)" } ?? "no root element",
        line: parser.lineNumber)
    }
    return root
  }

  struct ParseError: Error, CustomStringConvertible {
    var message: String
    var line: Int
    var description: String { "XML line \(line): \(message)" }
  }

  private final class TreeBuilder: NSObject, XMLParserDelegate {
    var root: ParsedElement?
    var stack: [ParsedElement] = []

    func parser(
      _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
      qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
    ) {
      let element = ParsedElement(name: elementName, attributes: attributeDict)
      if let parent = stack.last { parent.children.append(element) } else { root = element }
      stack.append(element)
    }

    func parser(
      _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?,
      qualifiedName qName: String?
    ) {
      stack.removeLast()
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
      stack.last?.text += string
    }
  }
}
