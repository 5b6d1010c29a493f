/// A text key whose hash is worked out once from its bytes, eight at a time, for tables keyed
/// by long texts: a finding's signature key (the type and three demangled frames, a few
/// hundred bytes) and a stack's key (its return addresses).
///
/// Why: `String` hashes every byte through the standard library's seeded SipHash at every
/// lookup, about 2,000 instructions for such a key, and the collector looks one up for every
/// origin of a session's findings (a third of ending a leak-heavy session). A key made here
/// costs a multiply per eight bytes, once. The trade-off: the hash is not seeded, so keys
/// crafted to collide make a slow report, as with ``IntegerTable``; equal hashes still
/// compare the texts.
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

  /// A multiply-and-fold over the bytes' little-endian words, the last one zero-padded, and
  /// the length, so that texts that differ only by trailing zero bytes differ.
  private static func digest(of bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
    let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15
    var digest = UInt64(truncatingIfNeeded: bytes.count) &* multiplier
    guard let base = bytes.baseAddress else { return digest }
    let raw = UnsafeRawPointer(base)
    var offset = 0
    func mix(_ word: UInt64) {
      digest = (digest ^ word) &* multiplier
      digest ^= digest >> 29
    }
    while offset + 8 <= bytes.count {
      mix(UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
      offset += 8
    }
    if offset < bytes.count {
      var last: UInt64 = 0
      for index in offset..<bytes.count {
        last |= UInt64(bytes[index]) << UInt64(8 * (index - offset))
      }
      mix(last)
    }
    return digest
  }
}
