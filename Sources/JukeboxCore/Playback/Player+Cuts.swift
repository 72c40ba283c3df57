/// Cutting a clip short without a click, and keeping an idle device fed with silence.
extension Player {
    /// Audio left queued ahead of the hardware when a cut takes back the rest: enough that
    /// the fade joins on before the device runs dry, small enough that a skip is prompt.
    static let cutGuard: Duration = .milliseconds(10)

    /// Ends the current clip at the earliest point the device still allows, with a fade-out
    /// of `fadeFrames`. Returns the clip frame the listener stopped hearing at, which is
    /// where a pause resumes. Without a fade, or on a device that cannot rewind, the buffered
    /// audio is dropped instead (an immediate, possibly audible, cut).
    func cutShort(
        _ decoded: any DecodedClip, at written: Int, gain: Double, fadeFrames: Int
    ) async -> Int {
        let taken = fadeFrames > 0
            ? await sink.rewind(upTo: written, keeping: decoded.format.frames(in: Self.cutGuard)) : 0
        // Nothing can be taken back or dropped (a pipe to a server): the fade follows on.
        let fadesAfter = taken == 0 && fadeFrames > 0 && !sink.canDiscard
        guard taken > 0 || fadesAfter else { return max(0, written - (await sink.cancel())) }
        let position = written - taken
        // Nothing of this clip has been heard: what is still queued before it (the previous
        // clip's tail) ends on its own, so there is nothing to fade.
        guard position > 0 else { return 0 }
        do {
            try await decoded.seek(toFrame: position)
            guard var block = try await decoded.read(maxFrames: fadeFrames) else { return position }
            SampleMath.scale(&block, by: gain * level)
            SampleMath.ramp(&block, from: 1, to: 0)
            try await sink.write(block)
            return position + block.frames
        } catch {
            // The clip is being stopped anyway; a device fault shows up on the next write.
            logger.debug("fade-out on \(sink.deviceName) not written: \(error)")
            return position
        }
    }

    /// Takes back what the device holds of this clip but has not played yet (all but
    /// `cutGuard`), for a volume change to be written over it, and returns the clip frame to
    /// go on from: `written` when the device cannot take anything back.
    func retake(_ decoded: any DecodedClip, at written: Int) async throws -> Int {
        // Also clears the interrupt that told the stream of the change.
        let taken = await sink.rewind(upTo: written, keeping: decoded.format.frames(in: Self.cutGuard))
        guard taken > 0 else { return written }
        try await decoded.seek(toFrame: written - taken)
        return written - taken
    }

    /// Starts writing silence to the open device (`keepDeviceOpen: always`).
    func startSilence() {
        guard options.keepDeviceOpen == .always, silenceFeeder == nil, let format = openFormat else { return }
        let block = AudioBuffer.silence(format, frames: Self.blockFrames(format, duration: sink.blockDuration))
        drained = false
        let sink = sink
        silenceFeeder = Task { [weak self] in
            while !Task.isCancelled {
                do {
                    try await sink.write(block)
                } catch {
                    await self?.silenceFailed(error)
                    return
                }
            }
        }
    }

    /// Stops the silence and, unless shutting down, takes back what is queued of it so the
    /// next clip starts at once rather than after up to a buffer's worth of silence.
    func stopSilence(discardingBuffered: Bool = true) async {
        guard let feeder = silenceFeeder else { return }
        silenceFeeder = nil
        feeder.cancel()
        // Its last write must land before anything else is written, or it would end up
        // between two blocks of the clip.
        await feeder.value
        guard discardingBuffered, let format = openFormat else { return }
        if await sink.rewind(upTo: .max, keeping: format.frames(in: Self.cutGuard)) == 0 {
            await sink.cancel()
        }
    }

    private func silenceFailed(_ error: any Error) async {
        guard silenceFeeder != nil else { return }
        silenceFeeder = nil
        logger.warning("\(error); the device is reopened for the next clip")
        await closeDevice()
    }
}
