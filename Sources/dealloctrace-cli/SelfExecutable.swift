#if canImport(Glibc)
  import Glibc
#endif

/// The path of this executable, which launches the tools `--symbolize` runs under limits
/// (``BoundedChild``). From `/proc/self/exe`, not `argv[0]`, which a caller can set to
/// anything; `nil` where `/proc` is missing, and the tools then run with the deadline only.
let selfExecutable: String? = {
  var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
  let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
  guard count > 0 else { return nil }
  return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}()
