import JukeboxCore
import Testing

/// The session's `esphome` section: its defaults, the key rule (the same as the web remote's
/// password: required unless only this machine can connect), and each field's refusal with
/// its line.
@Suite struct ESPHomeSettingsTests {
    static let key = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="

    func load(_ section: String, name: String? = nil) throws(SessionLoadError) -> Session {
        let named = name.map { #""name": "\#($0)","# } ?? ""
        let text = "{\(named)\n \"clips\": [ { \"file\": \"a.wav\" } ],\n \"esphome\": \(section)\n}"
        return try SessionLoader.parse(Array(text.utf8), path: "/srv/jukebox/Desk speaker.json")
    }

    func problems(_ section: String) -> [String] {
        do {
            _ = try load(section)
            return []
        } catch {
            return error.problems
        }
    }

    @Test func theDefaultsAreESPHomesPortAndTheSessionsName() throws {
        let settings = try #require(try load(#"{ "encryptionKey": "\#(Self.key)" }"#).esphome)
        #expect(settings.listen == "0.0.0.0:6053")
        #expect(settings.name == "Desk speaker")
        #expect(settings.nodeName == "desk-speaker")
        #expect(settings.encryptionKey == Array("0123456789abcdef0123456789abcdef".utf8))
    }

    @Test func aNameOf40IsTakenAnd41Refused() throws {
        let forty = String(repeating: "n", count: 40)
        #expect(try load(#"{ "listen": "127.0.0.1:6053", "name": "\#(forty.dropLast())" }"#).esphome?.name.count == 39)
        #expect(try load(#"{ "listen": "127.0.0.1:6053", "name": "\#(forty)" }"#).esphome?.name == forty)
        #expect(problems(#"{ "listen": "127.0.0.1:6053", "name": "\#(forty)n" }"#)
            == [#"/srv/jukebox/Desk speaker.json:3: esphome.name: "\#(forty)n" is not a name of 1 to 40 characters (what Home Assistant shows, such as "Desk speaker")"#])
        // A session's longer name is cut to 40 for the device.
        #expect(try load(#"{ "listen": "127.0.0.1:6053" }"#, name: forty + "xyz").esphome?.name == forty)
    }

    @Test func theKeyIsNeededUnlessOnlyThisMachineCanConnect() throws {
        #expect(problems("{}") == [
            "/srv/jukebox/Desk speaker.json:3: esphome.encryptionKey: missing: Home Assistant connects over the network, so it needs a key. Make one with `jukeboxd --new-esphome-key`, put it here and give it to Home Assistant when it asks (or listen on 127.0.0.1 only)",
        ])
        let loopback = try #require(try load(#"{ "listen": "127.0.0.1:0" }"#).esphome)
        #expect(loopback.encryptionKey == nil && loopback.port == 0)
        #expect(try load(#"{ "listen": "[::1]:6053" }"#).esphome?.isLoopback == true)
    }

    @Test func aKeyThatIsNot32BytesOfBase64IsRefused() {
        let words = "is not a key: it must be the base64 of 32 bytes, as `jukeboxd --new-esphome-key` prints"
        // 31 and 33 bytes, and not base64 at all.
        for key in ["MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZQ==", "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWZn", "not a key!"] {
            #expect(problems(#"{ "encryptionKey": "\#(key)" }"#) == ["/srv/jukebox/Desk speaker.json:3: esphome.encryptionKey: " + words], "\(key)")
        }
        #expect(problems(#"{ "encryptionKey": 5 }"#) == ["/srv/jukebox/Desk speaker.json:3: esphome.encryptionKey: 5 " + words])
    }

    @Test func aListenThatIsNotHostAndPortAndAnUnknownFieldAreRefused() {
        #expect(problems(#"{ "listen": "6053" }"#)
            == [#"/srv/jukebox/Desk speaker.json:3: esphome.listen: "6053" is not HOST:PORT (such as "0.0.0.0:6053", ESPHome's port)"#])
        #expect(problems(#"{ "listen": "127.0.0.1:6053", "port": 1 }"#).first?.contains("esphome.port") == true)
    }

    @Test func aNewKeyIsFreshAndReadsBack() throws {
        let (first, second) = (ESPHomeSettings.newKey(), ESPHomeSettings.newKey())
        #expect(first != second)
        #expect(first.count == 44 && first.hasSuffix("="))
        #expect(ESPHomeSettings.key(first)?.count == 32)
    }

    @Test func theNodeNameIsMadeOfLettersDigitsAndDashes() {
        #expect(ESPHomeSettings(host: "::1", encryptionKey: nil, name: "Küche / Radio 2").nodeName == "k-che-radio-2")
        #expect(ESPHomeSettings(host: "::1", encryptionKey: nil, name: "!!").nodeName == "jukeboxd")
        // ESPHome's 31 at most, without a dash at the end.
        let long = ESPHomeSettings(host: "::1", encryptionKey: nil, name: String(repeating: "a", count: 30) + " bcd").nodeName
        #expect(long == String(repeating: "a", count: 30))
    }
}
