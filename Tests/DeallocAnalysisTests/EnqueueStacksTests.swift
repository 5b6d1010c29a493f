import DeallocLog
import Testing

/// The one resolution of an enqueue's stack, shared by `explain` and the leak assertions.
@Suite struct EnqueueStacksTests {
  private let enqueueFrame = Frame(
    ip: 1, symbol: "DeallocQueue.DeallocQueue.enqueue(AnyObject) -> ()")
  private let release = Frame(ip: 2, symbol: "swift_release")
  private let close = Frame(ip: 3, symbol: "Feed.FeedScreen.close() -> ()")
  private let main = Frame(ip: 4, symbol: "main")

  private func enqueue(stack: Int64?) -> EnqueueRecord {
    EnqueueRecord(time: 1, id: 1, object: Address(0xa0), type: "T", queue: "q", stack: stack)
  }

  @Test func anEnqueueTakesTheFramesOfItsStackID() {
    var stacks = EnqueueStacks()
    stacks.record(StackRecord(id: 1, frames: [enqueueFrame, close]))
    stacks.record(StackRecord(id: 2, frames: [main]))
    #expect(stacks.frames(of: enqueue(stack: 1)) == [enqueueFrame, close])
    #expect(stacks.frames(of: enqueue(stack: 2)) == [main])
  }

  @Test func anEnqueueWithoutAStackOrWithAnUnreadOneHasNoFrames() {
    var stacks = EnqueueStacks()
    stacks.record(StackRecord(id: 1, frames: [close]))
    #expect(stacks.frames(of: enqueue(stack: nil)).isEmpty)
    #expect(stacks.frames(of: enqueue(stack: 7)).isEmpty)
  }

  @Test func aNewSessionForgetsTheStacksOfTheLastOne() {
    var stacks = EnqueueStacks()
    stacks.record(StackRecord(id: 1, frames: [close]))
    stacks.removeAll()
    #expect(stacks.frames(of: enqueue(stack: 1)).isEmpty)
    stacks.record(StackRecord(id: 1, frames: [main]))
    #expect(stacks.frames(of: enqueue(stack: 1)) == [main])
  }

  @Test func programFramesLeaveOutTheQueueAndTheRuntime() {
    var stacks = EnqueueStacks()
    stacks.record(StackRecord(id: 1, frames: [release, enqueueFrame, close, main]))
    #expect(stacks.programFrames(of: enqueue(stack: 1)) == [close, main])
  }
}
