import DeallocWire

/// Why a queue releases a batch: the one enum the queue, the recorder's writer and the
/// reader share (``DeallocWire/DrainReason``).
package typealias DrainReason = DeallocWire.DrainReason
