// DeallocTraceTests: replaced by the real tests.
