import DeallocLog

/// A text key whose hash is worked out once from its bytes, eight at a time, for tables keyed
/// by long texts: a finding's signature key (the type and three demangled frames, a few
/// hundred bytes) and a stack's key (its return addresses).
///
/// Contract: equal exactly when the texts are equal; the dictionary then hashes one word
/// instead of every byte of the text at every lookup. The trade-off: the digest is not
/// seeded, so keys crafted to collide make a slow report; equal digests still compare the
/// texts.
struct HashedKey: Hashable {
  let text: String
  private let digest: UInt64

  init(_ text: String) {
    var text = text
    self.digest = text.withUTF8 { Self.digest(of: $0) }
    self.text = text
  }

  static func == (lhs: HashedKey, rhs: HashedKey) -> Bool {
    lhs.digest == rhs.digest && lhs.text == rhs.text
  }

  func hash(into hasher: inout Hasher) {
    hasher.combine(digest)
  }

  /// ``WordMix/bytes(_:_:)``: the reader's mix for names, the length included.
  private static func digest(of bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
    // An empty text's bytes are read nowhere: any pointer does.
    WordMix.bytes(bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!, bytes.count)
  }
}
