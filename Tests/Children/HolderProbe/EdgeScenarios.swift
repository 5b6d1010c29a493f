// HolderProbe scenarios at the edges of naming and ranking: more direct holders than the
// caps, more closure captures than a step names, array elements whose stride is not 8.

import CHolders
import Foundation

nonisolated(unsafe) var manyOwner: Child?
nonisolated(unsafe) var manyThread: Int32 = 0

nonisolated(unsafe) var edgeOwner: Child?

/// A global owner beside `others` unrooted direct holders: at the 256 given paths' edge
/// (255 others) and one past it (256 others).
@inline(never)
func ownerAmong(_ others: Int) -> UInt {
  let child = Child()
  edgeOwner = child
  for _ in 0..<others {
    let holder = Holder()
    holder.child = child
    _ = Unmanaged.passRetained(holder)
  }
  return address(of: child) ^ scramble
}

/// The real owners of an object among more direct holders than the scan follows: a global
/// (scanned first, so linked last) and another thread's stack (scanned after the heap, so
/// past the per-target cap), beside 1,100 objects that hold it too and are themselves held
/// by nothing the scan sees (leaked on purpose). Prints the thread's id (`TID`).
func manyHolders() {
  let child = Child()
  manyOwner = child
  for _ in 0..<1_100 {
    let holder = Holder()
    holder.child = child
    _ = Unmanaged.passRetained(holder)
  }
  let ready = DispatchSemaphore(value: 0)
  let release = DispatchSemaphore(value: 0)
  let thread = Thread {
    var object: Child? = manyOwner
    manyThread = Int32(cholders_thread_id())
    park(&object, ready, release)
  }
  thread.start()
  ready.wait()
  print("TID \(manyThread)")
  scan(address(of: child) ^ scramble, paths: 4)
  release.signal()
}

/// A closure context at the naming's edge: the model and 15 strings (16 captures, all
/// named), then the model and 16 strings (17: 16 named, one counted).
@inline(never)
func closure16Captures(_ label: String) -> UInt {
  let model = CartModel()
  let a = label + "a"
  let b = label + "b"
  let c = label + "c"
  let d = label + "d"
  let e = label + "e"
  let f = label + "f"
  let g = label + "g"
  let h = label + "h"
  let i = label + "i"
  let j = label + "j"
  let k = label + "k"
  let l = label + "l"
  let m = label + "m"
  let n = label + "n"
  let o = label + "o"
  model.onChange = { model.name = a + b + c + d + e + f + g + h + i + j + k + l + m + n + o }
  return address(of: model) ^ scramble
}

@inline(never)
func closure17Captures(_ label: String) -> UInt {
  let model = CartModel()
  let a = label + "a"
  let b = label + "b"
  let c = label + "c"
  let d = label + "d"
  let e = label + "e"
  let f = label + "f"
  let g = label + "g"
  let h = label + "h"
  let i = label + "i"
  let j = label + "j"
  let k = label + "k"
  let l = label + "l"
  let m = label + "m"
  let n = label + "n"
  let o = label + "o"
  let p = label + "p"
  model.onChange = { model.name = a + b + c + d + e + f + g + h + i + j + k + l + m + n + o + p }
  return address(of: model) ^ scramble
}

/// An array element whose stride is not 8: 24 bytes, the reference in its middle word.
struct Pair {
  var tag = 0
  var child: Child
  var extra = 0
}

nonisolated(unsafe) var pairs: [Pair] = []
nonisolated(unsafe) var pairsRemoved: Child?

/// Two targets in arrays of 24-byte elements: the reference of the last element (index 3
/// of 4, at byte 32 + 3 * 24 + 8), and one whose element was appended and removed again, so
/// that its stale word sits one past the count (kept by a global besides).
@inline(never)
func strideArray() -> [UInt] {
  pairs.reserveCapacity(8)
  for _ in 0..<4 { pairs.append(Pair(child: Child())) }
  let removed = Child()
  pairsRemoved = removed
  pairs.append(Pair(child: removed))
  pairs.removeLast()
  return [address(of: pairs[3].child) ^ scramble, address(of: removed) ^ scramble]
}
