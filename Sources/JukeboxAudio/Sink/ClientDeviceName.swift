/// A device name a client (the socket, the page, MQTT) asks the sound test to open. ALSA
/// parses a PCM name as configuration: `file:'|CMD'` runs CMD through a shell, `file:PATH`
/// writes PATH, and `plug:`, `tee:` and inline definitions reach them from any name. So a
/// client's name is taken only in the forms that name a card, or as ALSA lists it; the sink
/// then follows its definition (`AlsaSink.clientDeviceProblem`). The session file, which
/// only its owner writes, may name any device.
public enum ClientDeviceName {
    /// The longest name taken from a client.
    public static let maxLength = 256

    /// The plain forms that name a card and nothing else: `default`, `sysdefault`, either
    /// with `:CARD` or `:CARD=CARD`, and `hw:`/`plughw:` with a card, then optionally a
    /// device and a subdevice, by position (`hw:1,0`) or by key (`hw:CARD=Device,DEV=0`).
    /// Nothing quoted, no braces, no other keys: none of these can carry a path or a command.
    public static func isPlainCardName(_ name: String) -> Bool {
        if name == "default" || name == "sysdefault" { return true }
        guard let colon = name.firstIndex(of: ":") else { return false }
        let family = name[..<colon]
        let arguments = name[name.index(after: colon)...].split(separator: ",", omittingEmptySubsequences: false)
        switch family {
        case "default", "sysdefault":
            guard arguments.count == 1 else { return false }
            return isCard(value(of: arguments[0], key: "CARD"))
        case "hw", "plughw":
            guard (1...3).contains(arguments.count) else { return false }
            let keys = ["CARD", "DEV", "SUBDEV"]
            for (index, argument) in arguments.enumerated() {
                let given = value(of: argument, key: keys[index])
                guard index == 0 ? isCard(given) : isNumber(given) else { return false }
            }
            // Either every argument by key or none: ALSA reads a mix by position.
            let keyed = arguments.filter { $0.contains("=") }.count
            return keyed == 0 || keyed == arguments.count
        default:
            return false
        }
    }

    /// `KEY=value` or `value`; nil for another key.
    private static func value(of argument: Substring, key: String) -> Substring? {
        guard let equals = argument.firstIndex(of: "=") else { return argument }
        return argument[..<equals] == key ? argument[argument.index(after: equals)...] : nil
    }

    /// A card's index or its id (`aplay -l` shows both): letters, digits, `_` and `-`.
    private static func isCard(_ text: Substring?) -> Bool {
        guard let text, !text.isEmpty, text.utf8.count <= 32 else { return false }
        return text.unicodeScalars.allSatisfy { ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || $0 == "_" || $0 == "-" }
    }

    private static func isNumber(_ text: Substring?) -> Bool {
        guard let text, !text.isEmpty, text.count <= 3 else { return false }
        return text.allSatisfy { ("0"..."9").contains($0) }
    }

    /// The configuration types that write a file or run a program: ALSA's `file` PCM (which
    /// `tee` is an alias of) and the names other builds give it. A definition reaching one is
    /// refused, as is any `lib` key (a plugin loaded from a path).
    public static let refusedTypes: Set<String> = ["file", "tee", "pipe", "exec"]
}
