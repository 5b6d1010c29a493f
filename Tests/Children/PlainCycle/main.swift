// A plain Swift program that imports no module of this package: the child of the
// `dealloctrace run` tests. `cycle` leaks a two-object cycle, `clean` lets the same pair
// go, `exit-code N` leaks nothing and exits with N, `feed [SCREENS]` is the benchmark's
// workload (PlainFeed).

#if canImport(Glibc)
  import Glibc
#endif

/// One end of the cycle.
final class Apartment {
  var tenant: Tenant?
  let number = 7
}

/// The other end.
final class Tenant {
  var home: Apartment?
  let name = "Tenant"
}

/// Makes the pair; with `linked` each holds the other, so neither is ever freed.
@inline(never)
func makePair(linked: Bool) {
  let apartment = Apartment()
  let tenant = Tenant()
  apartment.tenant = tenant
  if linked { tenant.home = apartment }
}

let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "cycle":
  makePair(linked: true)
case "clean":
  makePair(linked: false)
case "feed":
  PlainFeed(screens: Int(arguments.dropFirst().first ?? "") ?? 20).run()
case "exit-code":
  exit(Int32(arguments.dropFirst().first ?? "0") ?? 0)
default:
  print("usage: PlainCycle cycle|clean|exit-code N|feed [SCREENS]")
  exit(2)
}
