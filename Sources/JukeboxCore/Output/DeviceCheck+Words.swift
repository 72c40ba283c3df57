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

    /// Names longer than this get no guess: nobody mistypes a name that long, and comparing
    /// one (a session file may hold a name of megabytes) would cost its length times each name's.
    static let maxGuessedNameLength = 64

    static func hint(for device: String, known: [String]) -> String {
        guard !known.isEmpty else {
            return "ALSA lists no device that plays here (`aplay -L` is empty): is the card plugged in and its driver loaded?"
        }
        let distances = device.count <= maxGuessedNameLength ? known.map { ($0, editDistance($0, device)) } : []
        let closest = distances.min { $0.1 < $1.1 }
        let guess = closest.flatMap { $0.1 <= max(2, device.count / 4) ? "did you mean \($0.0)? " : nil } ?? ""
        let shown = known.prefix(listed).joined(separator: ", ")
        let more = known.count > listed ? " and \(known.count - listed) more (`aplay -L` lists them all)" : ""
        return guess + "the devices here are \(shown)\(more); a USB device may not be plugged in yet"
    }
}
