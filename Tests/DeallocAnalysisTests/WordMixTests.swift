import DeallocLog
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// ``WordMix``: the mixes every hash table of the reader and the analyzer uses.
@Suite struct WordMixTests {
  /// SplitMix64's first outputs from state 0, as its reference implementation gives them.
  @Test func splitMixIsSplitMix64() {
    var state: UInt64 = 0
    var outputs: [UInt64] = []
    for _ in 0..<3 {
      outputs.append(WordMix.splitMix(state))
      state &+= WordMix.golden
    }
    #expect(outputs == [0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F])
  }

  /// The hash depends on the bytes alone, not on where they lie: the same bytes at every
  /// alignment hash alike, for every length up to three words.
  @Test func bytesHashAlikeAtEveryAlignment() {
    let text = Array("Feed.Screen2.step0(animated: Swift.Bool)".utf8)
    var buffer = [UInt8](repeating: 0xAA, count: text.count + 16)
    for count in 0...24 {
      let expected = text.withUnsafeBufferPointer { WordMix.bytes($0.baseAddress!, count) }
      for offset in 0..<8 {
        buffer.replaceSubrange(offset..<offset + count, with: text[..<count])
        let hash = buffer.withUnsafeBufferPointer { WordMix.bytes($0.baseAddress! + offset, count) }
        #expect(hash == expected, "count \(count) at offset \(offset)")
      }
    }
  }

  /// A changed byte anywhere, a trailing zero byte and the length alone all change the hash.
  @Test func bytesThatDifferHashApart() {
    let text = Array("Feed.Screen2.step0(animated: Swift.Bool) -> ()".utf8)
    var hashes: Set<UInt64> = [hash(text)]
    for index in text.indices {
      var changed = text
      changed[index] ^= 0x01
      hashes.insert(hash(changed))
    }
    #expect(hashes.count == text.count + 1)
    #expect(hash(Array("ab".utf8)) != hash(Array("ab".utf8) + [0]))
    #expect(hash(Array("abcdefgh".utf8)) != hash(Array("abcdefgh".utf8) + [0]))
    let zeros = Set((0...40).map { hash([UInt8](repeating: 0, count: $0)) })
    #expect(zeros.count == 41)
  }

  /// The bytes just before an unreadable page hash without a fault: no read goes past the
  /// last byte (the tail is read from the word that ends with it, or byte by byte).
  @Test func bytesReadNothingPastTheirEnd() throws {
    let page = Int(sysconf(Int32(_SC_PAGESIZE)))
    let memory = try #require(
      mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
    #expect(memory != MAP_FAILED)
    defer { munmap(memory, 2 * page) }
    #expect(mprotect(memory + page, page, PROT_NONE) == 0)
    let end = memory.assumingMemoryBound(to: UInt8.self) + page
    for count in 0...24 {
      for index in 0..<count { (end - count + index).pointee = UInt8(truncatingIfNeeded: index) }
      let atTheEnd = WordMix.bytes(UnsafePointer(end - count), count)
      let elsewhere = hash((0..<count).map { UInt8(truncatingIfNeeded: $0) })
      #expect(atTheEnd == elsewhere, "count \(count)")
    }
  }

  private func hash(_ bytes: [UInt8]) -> UInt64 {
    bytes.withUnsafeBufferPointer {
      WordMix.bytes($0.baseAddress ?? UnsafePointer(bitPattern: 1)!, $0.count)
    }
  }
}
