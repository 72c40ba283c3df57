// `alerts`: named alerts a person starts and ends, each a sound repeated until it is ended.
extension SessionReader {
    mutating func alerts(_ value: JSONValue, clips: [Clip]) -> [AlertSettings] {
        let example = #"{"lockdown": {"clip": "lockdown", "every": "30s", "end": "all-clear"}}"#
        guard case .object(let fields) = value, !fields.isEmpty, fields.count <= AlertSettings.maxAlerts else {
            if case .object(let fields) = value, fields.count > AlertSettings.maxAlerts {
                problem("alerts", "has \(fields.count) alerts, more than the \(AlertSettings.maxAlerts) a session may have")
            } else {
                problem("alerts", "\(value.shortDescription) is not 1 to \(AlertSettings.maxAlerts) named alerts, such as \(example)")
            }
            return []
        }
        let ids = clips.map(\.id)
        func clipID(_ value: JSONValue, at field: String, what: String) -> String? {
            switch value {
            case .string(let id) where ids.contains(id): return id
            case .string(let id): problem(field, "\"\(id)\" is not a clip of this session (its ids: \(Self.listed(ids)))")
            default: problem(field, "\(value.shortDescription) is not a clip's id (\(what))")
            }
            return nil
        }
        var alerts: [AlertSettings] = []
        for name in ordered(fields, at: "alerts") {
            let field = "alerts.\(name)"
            if let trouble = Self.nameProblem(name, of: "an alert", limit: AlertSettings.maxNameLength, example: "lockdown") {
                problem(field, trouble)
                continue
            }
            guard name.lowercased() != Jukebox.alertOff else {
                problem(field, "\"\(name)\" cannot be an alert's name: `jukebox alert off` ends the alert that is on; call it something else, such as \"shutdown\"")
                continue
            }
            guard let alert = object(fields[name]!, at: field, allowed: AlertSettings.keys) else { continue }
            var sound: AlertSettings.Sound?
            switch (alert["clip"], alert["say"]) {
            case (let clip?, nil):
                sound = clipID(clip, at: "\(field).clip", what: "the sound the alert repeats").map { .clip($0) }
            case (nil, let say?):
                if case .string(let text) = say {
                    switch SpeechText.check(text) {
                    case .success(let checked): sound = .say(checked)
                    case .failure(let trouble): problem("\(field).say", trouble.description)
                    }
                } else {
                    problem("\(field).say", "\(say.shortDescription) is not the text to speak")
                }
            case (_?, _?): problem(field, "has both \"clip\" and \"say\": give one, the sound the alert repeats")
            case (nil, nil): problem(field, "needs \"clip\" (the id of the clip it repeats) or \"say\" (text to speak)")
            }
            var every = AlertSettings.defaultEvery
            if let value = alert["every"], let length = duration(value, at: "\(field).every") {
                let range = AlertSettings.everyRange
                if range.contains(length) { every = length } else {
                    problem("\(field).every", "\(value.shortDescription) is not from \(DurationText.format(range.lowerBound)) (back to back) to \(DurationText.format(range.upperBound)): the silence between repeats")
                }
            }
            let end = alert["end"].flatMap { clipID($0, at: "\(field).end", what: "the clip played once when the alert ends") }
            var level = 1.0
            if let value = alert["level"], let number = number(value, at: "\(field).level") {
                if (0...1).contains(number) { level = number } else {
                    problem("\(field).level", "\(value.shortDescription) is out of range (0 to 1: the alert's level as a part of full scale)")
                }
            }
            if let sound { alerts.append(AlertSettings(name: name, sound: sound, every: every, end: end, level: level)) }
        }
        return alerts
    }
}
