/// Figures for the queue itself.
func queueFigures(into figures: inout BenchFigures) {}
