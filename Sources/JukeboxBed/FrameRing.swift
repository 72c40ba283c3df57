/// Interleaved float frames in a fixed amount of memory, oldest first: what the pipe brought
/// in and the mixer has not taken yet, or what the player wrote and the mixer has not mixed.
struct FrameRing {
    let channels: Int
    let capacity: Int
    private var storage: [Float]
    /// The sample index of the oldest frame, and how many samples are held.
    private var head = 0
    private var held = 0

    init(capacityFrames: Int, channels: Int) {
        self.channels = max(channels, 1)
        self.capacity = max(capacityFrames, 1)
        storage = [Float](repeating: 0, count: self.capacity * self.channels)
    }

    var frames: Int { held / channels }
    var room: Int { capacity - frames }

    /// Appends as many whole frames of `samples` as there is room for; returns how many.
    @discardableResult
    mutating func append(_ samples: ArraySlice<Float>) -> Int {
        let count = min(samples.count / channels, room) * channels
        guard count > 0 else { return 0 }
        var tail = (head + held) % storage.count
        var index = samples.startIndex
        var left = count
        storage.withUnsafeMutableBufferPointer { store in
            while left > 0 {
                let run = min(left, store.count - tail)
                for offset in 0..<run { store[tail + offset] = samples[index + offset] }
                index += run
                left -= run
                tail = (tail + run) % store.count
            }
        }
        held += count
        return count / channels
    }

    /// Takes up to `frames` of the oldest frames and adds them, scaled by `gain`, into
    /// `output` from sample `offset`; returns how many frames were taken.
    @discardableResult
    mutating func take(_ frames: Int, addingInto output: inout [Float], at offset: Int = 0, gain: Float = 1) -> Int {
        let taken = min(frames, self.frames)
        var left = taken * channels
        var index = offset
        storage.withUnsafeBufferPointer { store in
            output.withUnsafeMutableBufferPointer { out in
                while left > 0 {
                    let run = min(left, store.count - head)
                    for position in 0..<run { out[index + position] += store[head + position] * gain }
                    index += run
                    left -= run
                    head = (head + run) % store.count
                }
            }
        }
        held -= taken * channels
        return taken
    }

    /// Drops up to `frames` of the newest frames (a rewind); returns how many.
    @discardableResult
    mutating func dropNewest(_ frames: Int) -> Int {
        let dropped = max(0, min(frames, self.frames))
        held -= dropped * channels
        return dropped
    }

    /// Drops everything; returns how many frames that was.
    @discardableResult
    mutating func removeAll() -> Int {
        let dropped = frames
        head = 0
        held = 0
        return dropped
    }
}
