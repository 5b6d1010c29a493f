import DeallocLog
import Testing

@testable import DeallocAnalysis

/// A query sees every insert before it: an inserted address is never a certain "no".
@Suite struct EnqueueFilterTests {
  @Test func everyInsertedAddressIsMaybeAtEveryPoint() {
    var filter = EnqueueFilter()
    #expect(!filter.mayContain(address: Address(0x6000_0000_0040)))
    var inserted: [Address] = []
    var generator = SplitMix(seed: 3)
    // Queries after 1, 2, … inserts.
    for round in 1...40 {
      for _ in 0..<round {
        let address = Address(0x6000_0000_0000 + (generator.next() % 1_000_000) * 16)
        filter.insert(address: address)
        inserted.append(address)
      }
      #expect(filter.mayContain(address: inserted.last!), "round \(round)")
      #expect(filter.mayContain(address: inserted[inserted.count / 2]), "round \(round)")
    }
    for address in inserted { #expect(filter.mayContain(address: address)) }
  }

  /// With few addresses in 2²⁰ bits, most never-inserted ones are a certain "no": the filter
  /// does answer no.
  @Test func mostOtherAddressesAreCertainlyAbsent() {
    var filter = EnqueueFilter()
    for index in 0..<1_000 {
      filter.insert(address: Address(0x6000_0000_0000 + UInt64(index) * 64))
    }
    let absent = (0..<1_000).filter {
      !filter.mayContain(address: Address(0x7000_0000_0000 + UInt64($0) * 64))
    }
    #expect(absent.count > 990)
  }
}
