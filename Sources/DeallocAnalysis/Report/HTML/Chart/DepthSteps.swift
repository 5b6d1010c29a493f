/// A queue's depth series reduced to what a chart of a given width can show: one column per
/// pixel, holding the deepest point that falls in it and the depth it ends at.
///
/// Why the maximum: a queue's trouble is its peaks; averaging or sampling would hide a burst
/// that lasted a few microseconds. Why the last depth too: after a burst drains within one
/// column, the line must continue at what is left, not at the peak.
struct DepthSteps: Sendable, Equatable {
  struct Column: Sendable, Equatable {
    var x: Double
    var peak: Int
    var last: Int
  }

  /// Columns in increasing x, at most one per `columnWidth`.
  var columns: [Column]
  var columnWidth: Double

  init(_ points: [DepthPoint], scale: LinearScale, columnWidth: Double = 1) {
    var columns: [Column] = []
    columns.reserveCapacity(min(points.count, 2048))
    for point in points {
      let x = (scale.position(Double(point.t)) / columnWidth).rounded(.down) * columnWidth
      if let last = columns.last, last.x == x {
        columns[columns.count - 1].peak = max(last.peak, point.depth)
        columns[columns.count - 1].last = point.depth
      } else {
        columns.append(Column(x: x, peak: point.depth, last: point.depth))
      }
    }
    self.columns = columns
    self.columnWidth = columnWidth
  }

  /// An SVG path of the area under the step function, from `start` to `end` on the x axis,
  /// with depth mapped by `y`: each column rises to its peak, and leaves at its last depth.
  func areaPath(start: Double, end: Double, y: LinearScale) -> String {
    let baseline = SVGNumber.format(y.position(0))
    var path = "M\(SVGNumber.format(start)),\(baseline)"
    for column in columns {
      path += "H\(SVGNumber.format(column.x))V\(SVGNumber.format(y.position(Double(column.peak))))"
      if column.last != column.peak {
        path += "H\(SVGNumber.format(min(end, column.x + columnWidth)))"
        path += "V\(SVGNumber.format(y.position(Double(column.last))))"
      }
    }
    path += "H\(SVGNumber.format(end))V\(baseline)Z"
    return path
  }
}
