/// Where the byte-level escapes and number writers append: an array of bytes, or a writer's
/// own buffer.
///
/// Why a protocol: `Array.append(contentsOf:)` costs about a hundred instructions a call
/// before it copies anything, and a pretty JSON report appends a few short runs per member,
/// so the report's writer keeps a buffer of its own. The escapes are `@inlinable` generics
/// so that each sink gets its own specialized copy.
public protocol ByteSink {
  mutating func append(_ byte: UInt8)
  mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>)
}

extension Array: ByteSink where Element == UInt8 {}
