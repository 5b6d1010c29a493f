// EndToEndTests: replaced by the real tests.
