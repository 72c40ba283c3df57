// What a device check found, in words: a name that is not there is answered with the name
// meant, when one is close, and the devices there are, in place of "check with aplay -L".
extension DeviceCheck {
    /// The problem in one line; nil when the device opened.
    public var message: String? {
        guard let problem else { return nil }
        guard problem.code == .notFound else { return problem.description }
        return "audio device \"\(problem.device)\" is not there (\(Self.hint(for: problem.device, known: known)))"
    }

    /// How many of the devices there are a message lists; `aplay -L` lists them all.
    static let listed = 12

    static func hint(for device: String, known: [String]) -> String {
        guard !known.isEmpty else {
            return "ALSA lists no device that plays here (`aplay -L` is empty): is the card plugged in and its driver loaded?"
        }
        let closest = known.min { editDistance($0, device) < editDistance($1, device) }
        let guess = closest.flatMap { editDistance($0, device) <= max(2, device.count / 4) ? "did you mean \($0)? " : nil } ?? ""
        let shown = known.prefix(listed).joined(separator: ", ")
        let more = known.count > listed ? " and \(known.count - listed) more (`aplay -L` lists them all)" : ""
        return guess + "the devices here are \(shown)\(more); a USB device may not be plugged in yet"
    }
}
