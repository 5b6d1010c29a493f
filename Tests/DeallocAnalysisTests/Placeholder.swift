// DeallocAnalysisTests: replaced by the real tests.
