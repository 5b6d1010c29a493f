import CUnwind

/// A type declared inside a function, named by that function instead of by the address the
/// runtime prints: `String(reflecting:)` gives `App.(unknown context at $55d0…).Order`, an
/// address that moves with every run, so every id built from the name would too.
///
/// Each `(unknown context at $ADDRESS).` is looked up in the symbol table of the image that
/// holds it (its anonymous context descriptor's symbol, demangled): a function's context
/// goes (the next one names the function), and a local type's context and the component
/// after it become `(Order #1 in App.makeOrder() -> ())`. Where the symbols are stripped the
/// address alone goes (`(unknown context)`): stable across runs, not across two local types
/// of one name. Runs on the writer thread, once per type.
enum LocalTypeName {
  private static let opening = Array("(unknown context at $".utf8)
  private static let descriptor = Array("anonymous descriptor ".utf8)
  private static let localMarker = Array(" #".utf8)

  /// `name` with every unknown context named, or as it is when it has none.
  static func stable(_ name: String) -> String {
    var bytes = Array(name.utf8)
    // From the last context to the first, so that earlier ranges stay valid.
    while let start = lastRange(of: opening, in: bytes)?.lowerBound {
      let digitsStart = start + opening.count
      guard let close = bytes[digitsStart...].firstIndex(of: UInt8(ascii: ")")),
        let address = UInt(String(decoding: bytes[digitsStart..<close], as: UTF8.self), radix: 16)
      else { return name }
      // The context and its dot, and the component it names when it is a local type's.
      let end = min(close + 2, bytes.count)
      let (text, consumed) = replacement(for: address, before: bytes[end...])
      bytes.replaceSubrange(start..<(end + consumed), with: text)
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// What replaces the context at `address` and what follows it of `rest` (the next
  /// component when the context is a local type's).
  private static func replacement(for address: UInt, before rest: ArraySlice<UInt8>)
    -> (bytes: [UInt8], consumed: Int)
  {
    var buffer = [CChar](repeating: 0, count: 2048)
    let unnamed = (Array("(unknown context).".utf8), 0)
    guard cunwind_name_anonymous_context(address, &buffer, buffer.count) == 1 else {
      return unnamed
    }
    let described = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    guard described.starts(with: descriptor) else { return unnamed }
    let context = described[descriptor.count...]
    // `Order #1 in App.makeOrder() -> ()`: the local type's own context, which names the
    // component that follows it.
    if let marker = firstRange(of: localMarker, in: context) {
      let component = rest.prefix { $0 != UInt8(ascii: ".") && $0 != UInt8(ascii: "<") }
      if component.elementsEqual(context[..<marker.lowerBound]) {
        return ([UInt8(ascii: "(")] + context + [UInt8(ascii: ")")], component.count)
      }
    }
    // A function's context: the local type's context that follows names it.
    return ([], 0)
  }

  private static func firstRange(of pattern: [UInt8], in bytes: ArraySlice<UInt8>)
    -> Range<Int>?
  {
    guard bytes.count >= pattern.count else { return nil }
    for start in bytes.startIndex...(bytes.endIndex - pattern.count)
    where bytes[start..<start + pattern.count].elementsEqual(pattern) {
      return start..<start + pattern.count
    }
    return nil
  }

  private static func lastRange(of pattern: [UInt8], in bytes: [UInt8]) -> Range<Int>? {
    guard bytes.count >= pattern.count else { return nil }
    for start in stride(from: bytes.count - pattern.count, through: 0, by: -1)
    where bytes[start..<start + pattern.count].elementsEqual(pattern) {
      return start..<start + pattern.count
    }
    return nil
  }
}
