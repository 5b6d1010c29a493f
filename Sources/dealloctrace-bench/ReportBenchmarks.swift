/// Figures for the log reader and analyser (filled in by the report work).
func reportFigures(into figures: inout BenchFigures) {}
