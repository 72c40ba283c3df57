@testable import JukeboxCore
@testable import JukeboxHTTP
import Testing

/// The day plans' calendars in `/metrics`: each one's age and failures, labelled by name; a
/// calendar not read yet since the start has no age. Each alert of the session: on or not.
@Suite("Metrics text")
struct MetricsTextTests {
    @Test func eachCalendarsAgeAndFailuresAreLabelledByName() {
        var metrics = JukeboxMetrics(outcomes: [:], missed: 0, queueLength: 0, deviceUp: true, lastPlayStarted: nil, stateWrites: nil, clients: 0)
        let without = MetricsText.text(metrics, process: MetricsText.Process())
        #expect(!without.contains("jukeboxd_calendar"), "nothing of calendars without them")
        metrics.calendars = [("school", 3600.4, 0), ("district", nil, 3)]
        let text = MetricsText.text(metrics, process: MetricsText.Process())
        #expect(text.contains("# TYPE jukeboxd_calendar_age_seconds gauge\njukeboxd_calendar_age_seconds{calendar=\"school\"} 3600\n# HELP jukeboxd_calendar_failures_total"))
        #expect(text.contains("# TYPE jukeboxd_calendar_failures_total counter\njukeboxd_calendar_failures_total{calendar=\"school\"} 0\njukeboxd_calendar_failures_total{calendar=\"district\"} 3\n"))
    }

    @Test func eachAlertIsOneOrZero() {
        var metrics = JukeboxMetrics(outcomes: [:], missed: 0, queueLength: 0, deviceUp: true, lastPlayStarted: nil, stateWrites: nil, clients: 0)
        #expect(!MetricsText.text(metrics, process: MetricsText.Process()).contains("jukeboxd_alert"), "nothing of alerts without them")
        metrics.alerts = [("lockdown", true), ("evacuate", false)]
        let text = MetricsText.text(metrics, process: MetricsText.Process())
        #expect(text.contains("# TYPE jukeboxd_alert_active gauge\njukeboxd_alert_active{alert=\"lockdown\"} 1\njukeboxd_alert_active{alert=\"evacuate\"} 0\n"), "\(text)")
    }
}
