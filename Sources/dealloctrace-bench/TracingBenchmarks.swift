/// Figures for the recorder (filled in by the tracing work).
func tracingFigures(into figures: inout BenchFigures) {}
