// DeallocTestingTests: replaced by the real tests.
