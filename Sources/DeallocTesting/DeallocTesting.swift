/// Leak assertions for test suites that know about `DeallocQueue`.
public enum DeallocTesting {}
