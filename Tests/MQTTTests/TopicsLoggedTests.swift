@testable import JukeboxMQTT
import Testing

/// Retained commands are logged once per topic, for at most `TopicsLogged.limit` topics: a
/// broker can hand out retained messages under any number of them.
@Suite("Retained commands logged once a topic")
struct TopicsLoggedTests {
    @Test func eachTopicOnceUpToTheLimitThenFull() {
        let logged = TopicsLogged()
        for index in 0..<TopicsLogged.limit - 1 { #expect(logged.insert("topic\(index)") == .first) }
        #expect(logged.insert("topic0") == .seen, "under the limit, a topic seen before")
        #expect(logged.insert("last") == .first, "at the limit")
        #expect(logged.insert("last") == .seen)
        #expect(logged.insert("one more") == .full, "over it")
        #expect(logged.insert("one more") == .full, "still not remembered")
    }
}
