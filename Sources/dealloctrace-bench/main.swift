// dealloctrace-bench: prints one JSON object of figures, each with the floor or peer it is
// compared with, measured in the same run. Build with `-c release`.

var figures = BenchFigures()
queueFigures(into: &figures)
tracingFigures(into: &figures)
reportFigures(into: &figures)
print(figures.json())
