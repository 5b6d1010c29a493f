// swift-tools-version: 6.0
import PackageDescription

/// A package that depends on dealloctrace by path and leaks in its tests: the fixture of
/// the `swift package dealloctrace` end-to-end test, which copies it next to a folder named
/// `dealloctrace` (a path dependency's identity is its folder's name).
let package = Package(
  name: "LeakyPackage",
  dependencies: [.package(path: "../dealloctrace")],
  targets: [
    .testTarget(
      name: "LeakyTests",
      dependencies: [
        .product(name: "DeallocQueue", package: "dealloctrace"),
        // Linked, the recorder starts with the first queue when DEALLOCTRACE_LOG is set.
        .product(name: "DeallocTrace", package: "dealloctrace"),
      ]
    )
  ]
)
