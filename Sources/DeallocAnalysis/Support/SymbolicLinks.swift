import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Follows the symbolic links a path ends in, for outputs written atomically.
///
/// Why: an atomic write renames a temporary file over the path, which replaces a link with
/// a regular file and leaves the file it pointed to as it was. Writing to the link's target
/// instead keeps the link. A dangling link's target is where the file is made.
enum SymbolicLinks {
  /// Why a path's links could not be followed.
  struct Failure: Error {
    var reason: String
  }

  /// The most links followed, as the kernel's own limit (`ELOOP`).
  static let maximumHops = 40

  /// `path` if it is not a symbolic link, else the path its chain of links ends at (a
  /// relative target is taken from the link's directory).
  static func target(of path: String) throws(Failure) -> String {
    var current = path
    for _ in 0..<maximumHops {
      var info = stat()
      guard lstat(current, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return current }
      var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
      let length = readlink(current, &buffer, buffer.count - 1)
      guard length >= 0 else {
        throw Failure(
          reason: "cannot read the link \(current): \(String(cString: strerror(errno)))")
      }
      let destination = String(
        decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
      if destination.hasPrefix("/") {
        current = destination
      } else {
        let directory = (current as NSString).deletingLastPathComponent
        current = directory.isEmpty ? destination : directory + "/" + destination
      }
    }
    throw Failure(reason: "more than \(maximumHops) symbolic links (a loop?)")
  }
}
