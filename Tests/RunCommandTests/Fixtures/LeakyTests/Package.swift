// swift-tools-version: 6.0
import PackageDescription

// A package that knows nothing of dealloctrace and leaks in its XCTest target: the fixture of
// `dealloctrace run -- swift test` (RunSwiftTestTests).
let package = Package(
  name: "LeakyTests",
  targets: [
    .target(name: "Leaky"),
    .testTarget(name: "LeakyTests", dependencies: ["Leaky"]),
  ]
)
