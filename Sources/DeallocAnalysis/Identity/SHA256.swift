/// SHA-256 (FIPS 180-4), for finding ids.
///
/// Why hand-written: Foundation on Linux has no CryptoKit and the package takes no outside
/// dependencies. Why SHA-256 rather than a 64-bit FNV or xxhash: it is specified once and
/// for all, so an id computed by any later version of the tool (or by a script in another
/// language) is the same. The trade-off is speed: a report hashes a few hundred short
/// strings, so the blocks are read in place (see `hash`) and nothing more is done for it.
package enum SHA256 {
  private static let roundConstants: [UInt32] = [
    0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4,
    0xab1c_5ed5, 0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe,
    0x9bdc_06a7, 0xc19b_f174, 0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f,
    0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da, 0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7,
    0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967, 0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc,
    0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85, 0xa2bf_e8a1, 0xa81a_664b,
    0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070, 0x19a4_c116,
    0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
    0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7,
    0xc671_78f2,
  ]

  private static let initialState = SIMD8<UInt32>(
    0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab,
    0x5be0_cd19)

  /// The 32-byte digest of `message`.
  package static func digest(_ message: [UInt8]) -> [UInt8] {
    let state = hash(message)
    var digest: [UInt8] = []
    digest.reserveCapacity(32)
    for index in 0..<8 {
      for shift in stride(from: 24, through: 0, by: -8) {
        digest.append(UInt8(truncatingIfNeeded: state[index] >> UInt32(shift)))
      }
    }
    return digest
  }

  /// The first `digits` hex digits (lower case) of the digest of `message`: a finding id
  /// needs twelve, and writing only those skips building the other 52.
  package static func hexDigest(_ message: [UInt8], digits: Int = 64) -> String {
    precondition((0...64).contains(digits), "a SHA-256 digest has 64 hex digits")
    let state = hash(message)
    return String(unsafeUninitializedCapacity: digits) { text in
      for index in 0..<digits {
        let nibble = state[index / 8] >> UInt32(28 - 4 * (index % 8)) & 0xF
        text[index] = UInt8(truncatingIfNeeded: nibble < 10 ? 0x30 + nibble : 0x57 + nibble)
      }
      return digits
    }
  }

  /// The state after the whole padded message: its full blocks read in place, the padding
  /// written with the last bytes into one or two blocks on the stack.
  ///
  /// Why in place and on the stack: a finding id hashes a few hundred bytes, and copying the
  /// message into a padded array, the state and the schedule into arrays of their own cost
  /// more than compressing the blocks did (a leak-heavy report computes hundreds of ids at
  /// its end, on the threads that write it).
  private static func hash(_ message: [UInt8]) -> SIMD8<UInt32> {
    var state = initialState
    roundConstants.withUnsafeBufferPointer { constants in
      withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { schedule in
        message.withUnsafeBytes { bytes in
          let fullBlocks = bytes.count / 64
          for block in 0..<fullBlocks {
            compress(
              UnsafeRawBufferPointer(rebasing: bytes[block * 64..<block * 64 + 64]),
              into: &state, schedule, constants)
          }
          // The rest, 0x80, zeros, and the length in bits: one block, or two when fewer
          // than nine bytes are left after the rest.
          withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { tail in
            let rest = bytes.count - fullBlocks * 64
            let tailCount = rest < 56 ? 64 : 128
            tail.initialize(repeating: 0)
            for index in 0..<rest { tail[index] = bytes[fullBlocks * 64 + index] }
            tail[rest] = 0x80
            let bitLength = UInt64(bytes.count) &* 8
            for index in 0..<8 {
              tail[tailCount - 1 - index] = UInt8(
                truncatingIfNeeded: bitLength >> UInt64(8 * index))
            }
            let raw = UnsafeRawBufferPointer(tail)
            for start in stride(from: 0, to: tailCount, by: 64) {
              compress(
                UnsafeRawBufferPointer(rebasing: raw[start..<start + 64]), into: &state,
                schedule, constants)
            }
          }
        }
      }
    }
    return state
  }

  /// One 64-byte block into `state`; `schedule` holds the 64 message words.
  @inline(__always)
  private static func compress(
    _ block: UnsafeRawBufferPointer, into state: inout SIMD8<UInt32>,
    _ schedule: UnsafeMutableBufferPointer<UInt32>, _ constants: UnsafeBufferPointer<UInt32>
  ) {
    for index in 0..<16 {
      schedule[index] = UInt32(
        bigEndian: block.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self))
    }
    for index in 16..<64 {
      let s0 =
        rotateRight(schedule[index - 15], 7) ^ rotateRight(schedule[index - 15], 18)
        ^ (schedule[index - 15] >> 3)
      let s1 =
        rotateRight(schedule[index - 2], 17) ^ rotateRight(schedule[index - 2], 19)
        ^ (schedule[index - 2] >> 10)
      schedule[index] = schedule[index - 16] &+ s0 &+ schedule[index - 7] &+ s1
    }
    var (a, b, c, d, e, f, g, h) = (
      state[0], state[1], state[2], state[3], state[4], state[5], state[6], state[7]
    )
    for index in 0..<64 {
      let s1 = rotateRight(e, 6) ^ rotateRight(e, 11) ^ rotateRight(e, 25)
      let choice = (e & f) ^ (~e & g)
      let temp1 = h &+ s1 &+ choice &+ constants[index] &+ schedule[index]
      let s0 = rotateRight(a, 2) ^ rotateRight(a, 13) ^ rotateRight(a, 22)
      let majority = (a & b) ^ (a & c) ^ (b & c)
      let temp2 = s0 &+ majority
      (h, g, f, e, d, c, b, a) = (g, f, e, d &+ temp1, c, b, a, temp1 &+ temp2)
    }
    state &+= SIMD8(a, b, c, d, e, f, g, h)
  }

  @inline(__always)
  private static func rotateRight(_ value: UInt32, _ count: UInt32) -> UInt32 {
    (value >> count) | (value << (32 - count))
  }
}
