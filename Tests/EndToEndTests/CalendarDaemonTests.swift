import Foundation
import JukeboxTestSupport
import Testing

/// Day plans with the built daemon and `jukebox`: a calendar fetched from Python's http.server
/// chooses today's plan; a plan set by hand and the calendar's last good copy both outlive a
/// restart without the server.
@Suite("Day plans with the daemon", .serialized, .timeLimit(.minutes(1)))
struct CalendarDaemonTests: DaemonSuite {
    let folder: TemporaryDirectory
    var socket: String { folder.file("c.sock") }
    var arguments: [String] { [folder.file("s.json"), "--socket", socket, "--state", folder.file("state.json"), "--device", "null"] }

    init() throws {
        folder = try TemporaryDirectory()
        try folder.write("bell.wav", WAVFile.bytes(Array(repeating: 0.2, count: 800), encoding: .s16, rate: 8000, channels: 1))
    }

    /// This machine's local date `days` from now, as `YYYYMMDD` and `YYYY-MM-DD`.
    static func localDate(_ days: Int = 0) -> (compact: String, dashed: String) {
        var seconds = time(nil) + time_t(days * 86_400)
        var fields = tm()
        localtime_r(&seconds, &fields)
        func two(_ value: Int32) -> String { (value < 10 ? "0" : "") + "\(value)" }
        let (year, month, day) = ("\(fields.tm_year + 1900)", two(fields.tm_mon + 1), two(fields.tm_mday))
        return (year + month + day, "\(year)-\(month)-\(day)")
    }

    static let server = #"""
        import http.server, functools, sys
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        print("ready %d" % server.server_address[1], file=sys.stderr, flush=True)
        server.serve_forever()
        """#

    @Test func aFetchedCalendarChoosesTodaysPlanAndAPlanByHandOutlivesARestart() async throws {
        let today = Self.localDate(), tomorrow = Self.localDate(1)
        try FileManager.default.createDirectory(atPath: folder.file("web"), withIntermediateDirectories: true)
        try folder.write("web/school.ics", text: "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:1\r\nDTSTART;VALUE=DATE:\(today.compact)\r\nSUMMARY:No School\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
        let script = try folder.write("server.py", text: Self.server)
        let server = ServerProcess("/usr/bin/python3", [script, folder.file("web")]) { $0.hasPrefix("ready ") }
        try await server.start()
        let port = await server.log.lines.first { $0.hasPrefix("ready ") }!.dropFirst(6)
        try folder.write("s.json", text: """
            { "interval": { "min": "1h", "max": "1h" },
              "plans": { "regular": [ { "at": "23:59", "clip": "bell" } ], "none": [] },
              "days": [ { "plan": "regular" } ],
              "calendars": [ { "name": "school", "source": "http://127.0.0.1:\(port)/school.ics", "plans": { "No school": "none" } } ],
              "clips": [ { "file": "bell.wav" } ] }
            """)
        _ = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
            #expect(await log.waitFor("calendar school: read, 1 occurrence of events choosing plans"))
            let shown = try await jukebox("plan", "--days", "2")
            #expect(shown.status == 0)
            #expect(shown.stdout.contains("\(today.dashed)  none     (calendar school: No school)"), "\(shown.stdout)")
            #expect(shown.stdout.contains("\(tomorrow.dashed)  regular  (days rule 1 (every day))"), "\(shown.stdout)")
            #expect(shown.stdout.contains("calendar school: read"), "\(shown.stdout)")
            let status = try await jukebox("status")
            #expect(status.stdout.contains("plan:      none today (calendar school: No school)"), "\(status.stdout)")
            let set = try await jukebox("plan", "set", "tomorrow", "none", "--json")
            #expect(set.status == 0 && set.stdout.contains(#""plan":"none","times":[],"why":"set by hand ("#), "\(set.stdout)\(set.stderr)")
            let past = try await jukebox("plan", "set", "2000-01-01", "none")
            #expect(past.status != 0 && past.stderr.contains("2000-01-01 is in the past"), "\(past.stderr)")
            let unknown = try await jukebox("plan", "set", "today", "holiday")
            #expect(unknown.status != 0 && unknown.stderr.contains("\"holiday\" is not one of the session's plans (regular, none)"), "\(unknown.stderr)")
        }
        await server.stop()
        // Without the server: the copy kept, and the plan set by hand.
        let (_, lines, _) = try await DaemonProcess.withDaemon(arguments, ready: "control socket listening") { log in
            let shown = try await jukebox("plan", "--days", "2")
            #expect(shown.stdout.contains("\(today.dashed)  none  (calendar school: No school)"), "\(shown.stdout)")
            #expect(shown.stdout.contains("\(tomorrow.dashed)  none  (set by hand ("), "\(shown.stdout)")
            #expect(await log.waitFor("calendar school: http://127.0.0.1:\(port)/school.ics: the server could not be reached"))
        }
        #expect(lines.contains { $0.contains("calendar school: the copy kept at \(folder.file("state.calendars/school.ics")) is used") }, "\(lines)")
    }

    /// `--check` reads a calendar file as the daemon does, and warns (exit 0) when it cannot:
    /// the start would go on with the last good copy.
    @Test func checkReadsACalendarFileAndWarnsWhenItCannot() async throws {
        try folder.write("s.json", text: """
            { "plans": { "regular": [], "none": [] }, "days": [ { "plan": "regular" } ],
              "calendars": [ { "name": "term", "source": "term.ics", "plans": { "No school": "none" } },
                             { "name": "web", "source": "https://calendar.example/school.ics", "plans": { "No school": "none" } } ],
              "clips": [ { "file": "bell.wav" } ] }
            """)
        let today = Self.localDate()
        try folder.write("term.ics", text: "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:1\r\nDTSTART;VALUE=DATE:\(today.compact)\r\nSUMMARY:No school\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
        let good = try await DaemonProcess.run([folder.file("s.json"), "--check", "--device", "null", "--state", folder.file("state.json")])
        #expect(good.status == 0)
        #expect(good.stdout.contains("calendar term: \(folder.file("term.ics")): 1 occurrence of events choosing plans in the coming 400 days"), "\(good.stdout)")
        #expect(good.stdout.contains("calendar web: https://calendar.example/school.ics is fetched when jukeboxd runs, and every 6h"), "\(good.stdout)")
        try folder.write("term.ics", text: "<html>Sign in</html>")
        let broken = try await DaemonProcess.run([folder.file("s.json"), "--check", "--device", "null", "--state", folder.file("state.json")])
        #expect(broken.status == 0)
        #expect(broken.stdout.contains("calendar term: warning: \(folder.file("term.ics")) is not an iCalendar file"), "\(broken.stdout)")
    }
}
