import DeallocQueue

var object: AnyObject? = [1, 2, 3] as AnyObject
DeallocQueue.shared.releaseInBackground(&object)
DeallocQueue.shared.drain()
