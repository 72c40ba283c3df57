import Logging
import ServiceLifecycle

// The durability rule: a change that must survive a restart is answered only once it is on disk.
extension Jukebox {
    /// The one place `StateChange.mustBeDurable` is applied: a change that must be
    /// durable is marked once it is in memory, and acknowledged after `waitUntilDurable`.
    func acknowledge<Value: Sendable>(_ value: Value, _ command: StateChange) async -> Acknowledged<Value> {
        guard command.mustBeDurable, let writer else { return Acknowledged(value, durableMark: nil) }
        return Acknowledged(value, durableMark: await writer.markChange())
    }

    /// Returns once the change is on disk. Concurrent commands share one write (group
    /// commit), so a front end may carry out several before waiting for the first.
    public nonisolated func waitUntilDurable<Value>(_ acknowledged: Acknowledged<Value>) async throws(JukeboxError) {
        guard let mark = acknowledged.durableMark, let writer else { return }
        do {
            try await writer.save(through: mark)
        } catch {
            logger.error("\(error)")
            throw .stateNotSaved(reason: "\(error)")
        }
    }

    /// Returns once what is in memory now is on disk, through the same writes as the answers
    /// to commands: for the parts of the core that must not go on before (a first start after
    /// a restart, the levels a lowering will put back, a volume step, the plays MQTT tells
    /// of). Throws when the state cannot be saved.
    nonisolated func saveNow() async throws(JukeboxError) {
        guard let writer else { return }
        try await waitUntilDurable(Acknowledged((), durableMark: await writer.markChange()))
    }

    /// `saveNow`, with a failure logged (by `waitUntilDurable`) rather than thrown: for a
    /// part that goes on either way.
    nonisolated func saveNowOrLog() async {
        try? await saveNow()
    }

    /// Carries out a command and waits until it is durable: for front ends that answer one
    /// request at a time.
    public nonisolated func durable<Value>(_ acknowledged: Acknowledged<Value>) async throws(JukeboxError) -> Value {
        try await waitUntilDurable(acknowledged)
        return acknowledged.value
    }
}
