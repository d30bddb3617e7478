import Foundation
import HTTPTestClient
import Programs
import Scratch
import Testing

extension RunEndToEnd {
    /// The stats page at `/` as a person sees it: rendered by headless Chromium from a real
    /// `serve`, its numbers compared with the test's own count of the logs.
    @Suite("the stats page, in headless Chromium", .sharedStatsPageStore)
    struct StatsPage {
        /// `1234567` → `1,234,567`: the page's exact integers, grouped by thousands.
        static func grouped(_ value: Int) -> String {
            let digits = Array(String(value.magnitude))
            var out = ""
            for (index, digit) in digits.enumerated() {
                if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
                out.append(digit)
            }
            return value < 0 ? "-" + out : out
        }

        /// The end every view of these tests names in its fragment: three days after `TestDay`
        /// began, so the page shows the same periods on any day the tests run.
        static let endHour = TestDay.firstHour + 72
        static let end = "end=\(Hours.text(endHour))"

        /// Logs of `TestDay` with a known truth, rebuilt by a batch run, served by `serve`, and a
        /// browser: one of each for every test of the suite (`StatsPageStore`), made by the first that
        /// asks. Each test's tabs close when it ends.
        static func withServedLogs(_ body: (Server, LogTruth, Browser, StatsPageStore.CreatorTruth) async throws -> Void) async throws {
            let store = try #require(StatsPageStore.current, "the suite's trait provides the shared store")
            let served = try await store.served()
            defer { try? served.browser.closeTabs() }
            try await body(served.server, served.truth, served.browser, served.creators)
        }

        @Test("without a creator or a track in the fragment the page opens on the top creator of the period with its exact plays and the top creators; #track=ID shows that track's exact total, hour by hour; from 127.0.0.1 only and without script errors")
        func pageShowsExactNumbers() async throws {
            try await Self.withServedLogs { server, truth, browser, creators in
                let origin = "http://127.0.0.1:\(server.port)"
                let tab = try browser.openTab(width: 1280, height: 900)

                // No subject in the fragment: the top creators, and the top creator's total.
                try tab.navigate("\(origin)/#period=all&step=day&\(Self.end)")
                try await tab.wait(until: "document.querySelector('#top-rows tr:first-child button:not([hidden])') && document.getElementById('total').textContent !== '—'",
                                   "the top list and a total")
                let expectedTop = creators.top(hours: Int64.min..<Int64.max, limit: 10)
                let shownTop = try tab.evaluate("[...document.querySelectorAll('#top-rows tr')].map(r => [r.children[1].textContent, r.children[2].textContent])") as? [[String]] ?? []
                #expect(shownTop == expectedTop.map { ["Creator \($0.creator)", Self.grouped($0.plays)] })
                #expect(try tab.text("#top-title") == "Top creators")
                #expect(try tab.text("#subject-title") == "Creator \(expectedTop[0].creator)")
                #expect(try tab.text("#subject-note") == "— the top creator of the period; type an id or pick one below")
                #expect(try tab.text("#total") == Self.grouped(expectedTop[0].plays))
                #expect(expectedTop[0].plays >= 1_000, "the top creator's plays need a thousands separator to test it")
                // All time in days: from the first covered day to the end, one mark each.
                let days = try tab.evaluate("[...document.querySelectorAll('#chart-marks rect.mark')].map(m => +m.dataset.count)") as? [Int] ?? []
                #expect(Int64(days.count) == (Self.endHour - TestDay.firstHour) / 24, "\(days.count) day marks")
                #expect(try tab.text("#range-label") == "until \(Hours.text(Self.endHour).prefix(10)) 00:00 UTC")
                #expect(days.first == expectedTop[0].plays && days.dropFirst().allSatisfy { $0 == 0 })

                // A track from the fragment, loaded afresh: its exact total and one mark per hour.
                let track = truth.top(hours: Int64.min..<Int64.max, limit: 40)[27].track
                try tab.navigate("about:blank")
                try tab.navigate("\(origin)/#track=\(track)&period=all&step=hour&\(Self.end)")
                try await tab.wait(until: "document.getElementById('subject-title').textContent === 'Track \(track)' && document.getElementById('total').textContent !== '—' && document.querySelectorAll('#chart-marks rect.mark').length > 24",
                                   "track \(track)")
                #expect(try tab.text("#total") == Self.grouped(truth.plays(of: track)))
                #expect(try tab.text("#batch-plays") == Self.grouped(truth.plays(of: track)))
                #expect(try tab.text("#realtime-plays") == "0")
                #expect(try tab.text("#freshness")?.hasPrefix("exact until 2026-11-21 00:00 UTC") == true)
                let marks = try tab.evaluate("[...document.querySelectorAll('#chart-marks rect.mark')].map(m => [m.dataset.start, +m.dataset.count, m.dataset.source])") as? [[Any]] ?? []
                #expect(Int64(marks.count) == Self.endHour - TestDay.firstHour, "\(marks.count) hour marks")
                var mismatches: [String] = []
                for (index, mark) in marks.enumerated() {
                    let hour = TestDay.firstHour + Int64(index)
                    let start = mark.first as? String ?? ""
                    let plays = mark.dropFirst().first as? Int ?? -1
                    let source = mark.last as? String ?? ""
                    let expectedSource = TestDay.hours.contains(hour) ? "batch" : "realtime"
                    if start != Hours.text(hour) || plays != truth.plays[track]?[hour] ?? 0 || source != expectedSource {
                        mismatches.append("\(start) \(plays) \(source), expected \(Hours.text(hour)) \(truth.plays[track]?[hour] ?? 0) \(expectedSource)")
                    }
                }
                #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")

                // By keyboard: the chart takes focus and reads out the exact value of each hour.
                let firstHourText = try tab.evaluate("""
                    (() => { const c = document.getElementById('chart'); c.focus();
                      c.dispatchEvent(new KeyboardEvent('keydown', { key: 'Home', bubbles: true }));
                      return document.getElementById('chart-readout').textContent })()
                    """) as? String
                #expect(firstHourText == "2026-11-20 00:00–01:00 UTC: \(Self.grouped(truth.plays[track]?[TestDay.firstHour] ?? 0)) plays, from batch")

                // The dimensions: rendered when the reader answers them, "not available" while it answers 404.
                try checkDimensions(tab, server: server, track: track, truth: truth)
                try await checkListeners(tab, track: track, truth: truth)

                // Picking a track in the top list shows it and puts it in the fragment.
                let second = truth.top(hours: Int64.min..<Int64.max, limit: 2)[1]
                _ = try tab.evaluate("document.querySelector('#top-rows tr:nth-child(2) button').click()")
                try await tab.wait(until: "location.hash === '#track=\(second.track)&period=all&step=hour&\(Self.end)' && document.getElementById('subject-title').textContent === 'Track \(second.track)' && document.getElementById('total').textContent === '\(Self.grouped(second.plays))'",
                                   "track \(second.track) picked in the top list")

                // "Up to now" drops the fragment's end: the period ends with the current hour again.
                _ = try tab.evaluate("document.getElementById('now').click()")
                try await tab.wait(until: "location.hash === '#track=\(second.track)&period=all&step=hour' && document.getElementById('now').hidden && document.getElementById('range-label').textContent === 'of all time'",
                                   "the period up to now")

                let activity = try tab.activity()
                #expect(activity.requests.count > 10)
                expectOwnOriginOnlyAndNoErrors(activity, origin: origin)
            }
        }

        @Test("a track's view shows every signal's exact net total, and each signal's timeline on its tab (in the fragment, negative buckets below zero), with its CSV")
        func trackSignals() async throws {
            try await Self.withServedLogs { server, truth, browser, _ in
                let origin = "http://127.0.0.1:\(server.port)"
                let tab = try browser.openTab(width: 1280, height: 900)
                let all = Int64.min..<Int64.max
                // The track with the most likes: the logs hold every type (the generator's mix).
                let track = try #require(truth.signals.keys.max { truth.count("likes", of: $0, hours: all) < truth.count("likes", of: $1, hours: all) })
                #expect(truth.count("likes", of: track, hours: all) >= 5, "the logs hold likes")
                try tab.navigate("\(origin)/#track=\(track)&period=all&step=day&\(Self.end)")
                try await tab.wait(until: "document.getElementById('subject-title').textContent === 'Track \(track)' && document.getElementById('sig-likes').textContent !== '—'",
                                   "track \(track)'s signals")
                #expect(try tab.text("#total") == Self.grouped(truth.plays(of: track)))
                for signal in ["downloads", "likes", "reposts", "comments"] {
                    #expect(try tab.text("#sig-\(signal)") == Self.grouped(truth.count(signal, of: track, hours: all)), "\(signal)")
                }

                // The likes tab: in the fragment, and the day marks are the net likes of each day.
                _ = try tab.evaluate("document.querySelector('#signal-tabs button[data-signal=likes]').click()")
                try await tab.wait(until: "location.hash === '#track=\(track)&period=all&step=day&signal=likes&\(Self.end)' && document.getElementById('timeline-title').textContent === 'Timeline of likes'",
                                   "the likes tab")
                let days = try tab.evaluate("[...document.querySelectorAll('#chart-marks rect.mark')].map(m => +m.dataset.count)") as? [Int] ?? []
                let expected = (0..<(Self.endHour - TestDay.firstHour) / 24).map { day in
                    truth.count("likes", of: track, hours: TestDay.firstHour + 24 * day..<TestDay.firstHour + 24 * day + 24)
                }
                #expect(days == expected)
                #expect(try tab.evaluate("document.querySelector('#signal-tabs button[data-signal=likes]').getAttribute('aria-pressed')") as? String == "true")
                let href = try tab.evaluate("document.getElementById('timeline-csv').getAttribute('href')") as? String ?? ""
                #expect(href.contains("&signal=likes") && href.hasSuffix("&format=csv"), "\(href)")
                let csv = try CSVRecords.parse(try server.request(href).text)
                #expect(csv.first == ["start", "likes", "source"] && csv.dropFirst().map { Int($0[1]) ?? .min } == expected)

                // A track whose likes net negative in a day draws that bar below the zero line.
                let negative = truth.signals.keys.sorted().first { candidate in
                    (0..<3 as Range<Int64>).contains { day in
                        truth.count("likes", of: candidate, hours: TestDay.firstHour + 24 * day..<TestDay.firstHour + 24 * day + 24) < 0
                    }
                }
                if let negative {
                    try tab.navigate("\(origin)/#track=\(negative)&period=all&step=day&signal=likes&\(Self.end)")
                    try await tab.wait(until: "document.getElementById('subject-title').textContent === 'Track \(negative)' && [...document.querySelectorAll('#chart-marks rect.mark')].some(m => +m.dataset.count < 0)",
                                       "a negative day of track \(negative)")
                    let below = try tab.evaluate("""
                        (() => { const marks = [...document.querySelectorAll('#chart-marks rect.mark')];
                          const neg = marks.find(m => +m.dataset.count < 0), zero = marks.find(m => +m.dataset.count === 0) || neg;
                          return +neg.getAttribute('y') >= +zero.getAttribute('y') - 0.01 })()
                        """) as? Bool
                    #expect(below == true, "the negative bar starts at the zero line and goes down")
                }
                // A track's refresh asks 10 requests (2 more for the previous period when the view changes).
                let activity = try tab.activity()
                let sizes = Self.refreshes(activity.requests, origin: origin).map(\.count)
                #expect(sizes.contains(10) && sizes.allSatisfy { [2, 10, 12].contains($0) }, "\(sizes)")
                expectOwnOriginOnlyAndNoErrors(activity, origin: origin)
            }
        }

        /// "+12 %", "−3 %", "±0 %": the change from `before` to `now` as the page writes it,
        /// rounded half away from zero to a whole percent, computed here apart from the page's code.
        static func change(_ now: Int, _ before: Int) -> String {
            let percent = Double(100 * (now - before)) / Double(before)
            let rounded = Int(abs(percent).rounded(.toNearestOrAwayFromZero))
            return (rounded == 0 ? "±" : percent > 0 ? "+" : "−") + grouped(rounded) + " %"
        }

        @Test("the period picker puts period= in the fragment and shows the period's exact plays and listeners, each with its change against the previous period of the same length (\"new\" when that held none); every table and series links the reader's CSV answer of what it shows")
        func periodsComparisonsAndCSV() async throws {
            try await Self.withServedLogs { server, truth, browser, _ in
                let origin = "http://127.0.0.1:\(server.port)"
                let tab = try browser.openTab(width: 1280, height: 900)
                // A track with a few hundred listeners, so that every listener count is exact.
                let track = truth.top(hours: Int64.min..<Int64.max, limit: 40)[27].track
                // Periods ending at noon a week after the logs' day: a week holds the afternoon,
                // the week before it the morning.
                let end = TestDay.firstHour + 12 + 168
                let endText = Hours.text(end)
                let (week, weekBefore) = ((end - 168)..<end, (end - 336)..<(end - 168))

                // No period in the fragment: 28 days, which hold every play; the 28 days before hold none.
                try tab.navigate("\(origin)/#track=\(track)&end=\(endText)")
                try await tab.wait(until: "document.getElementById('total-change').textContent !== '' && document.getElementById('listeners-change').textContent !== ''",
                                   "the 28 days' changes")
                #expect(try tab.evaluate("document.querySelector('#periods [aria-pressed=true]').dataset.period") as? String == "28d")
                #expect(try tab.text("#total") == Self.grouped(truth.plays(of: track)))
                #expect(try tab.text("#range-label") == "in the 28 days to \(endText.prefix(10)) 12:00 UTC")
                #expect(try tab.text("#total-change") == "new — none in the previous 28 days")
                #expect(try tab.text("#listeners-change") == "new — none in the previous 28 days")

                // 7 d: the afternoon's plays and listeners, and their change from the morning's.
                let (plays, playsBefore) = (truth.plays(of: track, hours: week), truth.plays(of: track, hours: weekBefore))
                let (listeners, listenersBefore) = (truth.listeners(of: track, hours: week), truth.listeners(of: track, hours: weekBefore))
                try #require(plays > 0 && playsBefore > 0 && listenersBefore > 0 && listeners <= 320)
                let playsChange = "\(Self.change(plays, playsBefore)) vs the previous 7 days"
                let listenersChange = "\(Self.change(listeners, listenersBefore)) vs the previous 7 days"
                _ = try tab.evaluate("document.querySelector('#periods [data-period=\"7d\"]').click()")
                try await tab.wait(until: """
                    location.hash === '#track=\(track)&period=7d&step=hour&end=\(endText)' && document.querySelectorAll('#chart-marks rect.mark').length === 168 && document.getElementById('total-change').textContent === '\(playsChange)' && document.getElementById('listeners-change').textContent === '\(listenersChange)'
                    """, "the week's numbers and their changes")
                #expect(try tab.text("#total") == Self.grouped(plays))
                #expect(try tab.text("#listeners") == Self.grouped(listeners))
                #expect(try tab.text("#listeners-note")?.hasPrefix("exact") == true)
                let marks = try tab.evaluate("[...document.querySelectorAll('#chart-marks rect.mark')].map(m => +m.dataset.count)") as? [Int] ?? []
                #expect(marks == week.map { truth.plays[track]?[$0] ?? 0 })

                // Every table and series: a download link to the same answer as CSV, on this origin.
                let range = "from=\(Hours.text(week.lowerBound))&to=\(endText)"
                let links = try tab.evaluate("""
                    Object.fromEntries(['timeline', 'top', 'countries', 'clients', 'listeners'].map(k => { const a = document.getElementById(k + '-csv');
                      return [k, a.hidden || !a.hasAttribute('download') ? '' : a.getAttribute('href')] }))
                    """) as? [String: String] ?? [:]
                #expect(links["timeline"] == "/v1/tracks/\(track)/timeline?\(range)&step=hour&format=csv")
                #expect(links["top"] == "/v1/top?limit=10&\(range)&format=csv")
                #expect(links["countries"] == "/v1/tracks/\(track)/breakdown?by=country&\(range)&format=csv")
                #expect(links["clients"] == "/v1/tracks/\(track)/breakdown?by=client&\(range)&format=csv")
                #expect(links["listeners"] == "/v1/tracks/\(track)/listeners/timeline?\(range)&step=day&format=csv")
                // The same values as the JSON answer at the same address.
                let tables = try Self.csvMatchesJSON(links.filter { $0.value.hasSuffix("&format=csv") }, server: server)
                // … and what the page shows of it.
                #expect(tables["timeline"]?.dropFirst().map { Int($0[1]) ?? -1 } == marks)
                let top = try tab.evaluate("[...document.querySelectorAll('#top-rows tr')].filter(r => r.children[1].textContent).map(r => [r.children[1].textContent, r.children[2].textContent])") as? [[String]] ?? []
                #expect(tables["top"]?.dropFirst().map { ["Track \($0[0])", Self.grouped(Int($0[1]) ?? -1)] } == top)
                let days = try tab.evaluate("[...document.querySelectorAll('#listeners-list li')].map(r => [r.children[0].textContent, r.children[2].firstChild.textContent])") as? [[String]] ?? []
                #expect(tables["listeners"]?.dropFirst().reversed().map { [String($0[0].prefix(10)), Self.grouped(Int($0[1]) ?? -1)] } == days)
                #expect(tables["countries"]?.dropFirst().reduce(0) { $0 + (Int($1[1]) ?? 0) } == plays)

                // 12 months: from the same hour a year before, by day; the year before holds no plays.
                _ = try tab.evaluate("document.querySelector('#periods [data-period=\"12m\"]').click()")
                let yearStart = Hours.index(2025, 11, 27, hour: 12)
                #expect(Hours.text(end) == "2026-11-27T12:00:00Z")
                try await tab.wait(until: """
                    location.hash === '#track=\(track)&period=12m&step=day&end=\(endText)' && document.getElementById('timeline-csv').getAttribute('href') === '/v1/tracks/\(track)/timeline?from=\(Hours.text(yearStart))&to=\(endText)&step=day&format=csv' && document.getElementById('total-change').textContent === 'new — none in the previous 12 months'
                    """, "the 12 months")
                #expect(try tab.text("#total") == Self.grouped(truth.plays(of: track)))

                // At 360 px the changes and links fit.
                try tab.resize(width: 360, height: 740, mobile: true)
                try await Task.sleep(for: .milliseconds(300))
                #expect(try tab.evaluate("document.documentElement.scrollWidth") as? Int == 360)
                #expect(try Self.overflowing(tab) == [], "elements past the right edge")

                // A fragment from before the periods (range=30d) opens 28 days and is written anew.
                try tab.navigate("about:blank")
                try tab.navigate("\(origin)/#track=\(track)&range=30d&step=day&end=\(endText)")
                try await tab.wait(until: "location.hash === '#track=\(track)&period=28d&step=day&end=\(endText)' && document.getElementById('total').textContent === '\(Self.grouped(truth.plays(of: track)))'",
                                   "the old fragment as 28 days")

                let activity = try tab.activity()
                expectOwnOriginOnlyAndNoErrors(activity, origin: origin)
            }
        }

        /// The track's distinct listeners beside its plays, exact (a few hundred at most), and per
        /// day, the latest first; the top track's, in the thousands, marked as an estimate.
        func checkListeners(_ tab: Tab, track: Int64, truth: LogTruth) async throws {
            try await tab.wait(until: "document.getElementById('listeners').textContent !== '—'", "the listeners of track \(track)")
            let exact = truth.listeners(of: track)
            #expect(exact > 0 && exact <= 320, "track \(track) has \(exact) listeners; the test needs an exact answer")
            #expect(try tab.text("#listeners") == Self.grouped(exact))
            #expect(try tab.text("#listeners-note")?.hasPrefix("exact") == true)
            let days = try tab.evaluate("[...document.querySelectorAll('#listeners-list li')].map(r => [r.children[0].textContent, r.children[2].firstChild.textContent])") as? [[String]] ?? []
            let firstDay = TestDay.firstHour / 24
            // Day text (as the page writes it) → the track's listeners that day.
            let byDay = Dictionary(uniqueKeysWithValues: (firstDay..<firstDay + 60).map {
                (String(Hours.text($0 * 24).prefix(10)), Self.grouped(truth.listeners(of: track, day: $0)))
            })
            let expected = days.map { [$0[0], byDay[$0[0]] ?? "no such day"] }
            #expect(!days.isEmpty && days == expected, "\(days)")
            #expect(days.contains { $0[0] == String(Hours.text(firstDay * 24).prefix(10)) }, "\(days)")
        }

        func checkDimensions(_ tab: Tab, server: Server, track: Int64, truth: LogTruth) throws {
            if try server.request("/v1/tracks/\(track)/waveform").status == 404 {
                #expect(try tab.text("#heat-readout")?.hasPrefix("Not available") == true)
            } else {
                let cells = try tab.evaluate("[...document.querySelectorAll('#heat-cells rect')].map(c => +c.dataset.plays)") as? [Int] ?? []
                #expect(cells.count == 100)
                #expect(try tab.text("#waveform-note")?.hasPrefix(Self.grouped(truth.plays(of: track)) + " plays") == true)
            }
            for (dimension, list) in [("country", "countries"), ("client", "clients")] {
                if try server.request("/v1/tracks/\(track)/breakdown?by=\(dimension)").status == 404 {
                    #expect(try tab.text("#\(list)-list")?.hasPrefix("Not available") == true)
                } else {
                    #expect(try tab.text("#\(list)-note")?.hasSuffix(" values · \(Self.grouped(truth.plays(of: track))) plays") == true)
                }
            }
        }

        /// What on the page reaches past the right edge of the screen (ids or classes).
        static func overflowing(_ tab: Tab) throws -> [String]? {
            try tab.evaluate("""
                [...document.querySelectorAll('body *')].filter(e => e.getClientRects().length && e.getBoundingClientRect().right > innerWidth + 0.5 && getComputedStyle(e).visibility !== 'hidden').map(e => e.id || e.className || e.tagName)
                """) as? [String]
        }

        /// "20 November 2026": the day of an hour index, written out here apart from the page's code.
        static func dayText(_ hourIndex: Int64) -> String {
            let months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
            let parts = Hours.text(hourIndex).prefix(10).split(separator: "-").compactMap { Int($0) }
            return "\(parts[2]) \(months[parts[1] - 1]) \(parts[0])"
        }

        @Test("at 360 px wide nothing on the page reaches past the screen's edge, so it never scrolls sideways; opened on a period after every play, it names the day of the latest plays and shows that day's top creator in one click")
        func narrowScreenDoesNotScrollSideways() async throws {
            try await Self.withServedLogs { server, truth, browser, creators in
                let tab = try browser.openTab(width: 360, height: 740, mobile: true)
                let origin = "http://127.0.0.1:\(server.port)"

                // The default period (28 days) to an end 60 days after the logs' day: it holds no plays.
                let latestHour = try #require(truth.plays.values.flatMap { $0.filter { $0.value > 0 }.keys }.max())
                let emptyEnd = TestDay.firstHour + 60 * 24
                try #require(latestHour < emptyEnd - 2 * 672, "the logs' plays must lie before the period and the one before it")
                let latest = try server.json("/v1/status")["latest_counts"] as? [String: String]
                #expect(latest == ["hour": Hours.text(latestHour), "source": "batch"])
                try tab.navigate("\(origin)/#end=\(Hours.text(emptyEnd))")
                try await tab.wait(until: "!document.getElementById('latest').hidden", "the day of the latest plays")
                let day = Self.dayText(latestHour)
                #expect(try tab.text("#subject-title") == "No plays in the 28 days to \(Hours.text(emptyEnd).prefix(10)) 00:00 UTC")
                #expect(try tab.text("#latest-text") == "The latest plays are on \(day).")
                #expect(try tab.text("#latest-go") == "Show \(day)")
                #expect(try tab.evaluate("document.documentElement.scrollWidth") as? Int == 360)
                #expect(try Self.overflowing(tab) == [], "elements past the right edge, with no plays in the period")

                // One click: the period ends with that day, and shows its top creator and that day's plays exactly.
                let dayEnd = (latestHour / 24 + 1) * 24
                let dayTop = creators.top(hours: (dayEnd - 24)..<dayEnd, limit: 1)[0]
                let periodTop = creators.top(hours: (dayEnd - 672)..<dayEnd, limit: 1)[0]
                #expect(periodTop.creator == dayTop.creator && periodTop.plays == dayTop.plays, "the 28 days to that day's end hold only that day's plays")
                _ = try tab.evaluate("document.getElementById('latest-go').click()")
                try await tab.wait(until: "location.hash === '#period=28d&step=day&end=\(Hours.text(dayEnd))' && document.getElementById('subject-title').textContent === 'Creator \(dayTop.creator)' && document.getElementById('total').textContent !== '0'",
                                   "the top creator of \(day)")
                #expect(try tab.text("#total") == Self.grouped(dayTop.plays))
                #expect(try tab.text("#top-rows tr:first-child td.n") == Self.grouped(dayTop.plays))
                #expect(try tab.evaluate("document.getElementById('latest').hidden && !document.getElementById('now').hidden && document.activeElement.id === 'summary'") as? Bool == true)

                let track = truth.top(hours: Int64.min..<Int64.max, limit: 1)[0].track
                try tab.navigate("\(origin)/#track=\(track)&period=7d&step=hour&\(Self.end)")
                try await tab.wait(until: "document.getElementById('total').textContent !== '—' && document.querySelectorAll('#chart-marks rect.mark').length === 168",
                                   "a week of hours")
                #expect(try tab.evaluate("window.innerWidth") as? Int == 360)
                #expect(try tab.evaluate("document.documentElement.scrollWidth") as? Int == 360)
                #expect(try Self.overflowing(tab) == [], "elements past the right edge")

                // A creator's view, its tracks table one block per track.
                try tab.navigate("\(origin)/#creator=\(dayTop.creator)&period=all&step=day&\(Self.end)")
                try await tab.wait(until: "document.getElementById('subject-title').textContent === 'Creator \(dayTop.creator)' && document.querySelectorAll('#tracks-rows tr').length > 0",
                                   "creator \(dayTop.creator)'s tracks")
                #expect(try tab.evaluate("document.documentElement.scrollWidth") as? Int == 360)
                #expect(try Self.overflowing(tab) == [], "elements past the right edge of a creator's view")
                let errors = try tab.activity().errors
                #expect(errors.isEmpty, "\(errors)")
            }
        }

        @Test("on a store that holds no plays the page says \"No plays counted yet\" and offers no day to go to")
        func emptyStoreSaysNothingCounted() async throws {
            try await withTemporaryDirectory { scratch in
                let browser = try Browser(scratch: scratch)
                defer { browser.quit() }
                try await withServer(dataDirectory: scratch.appendingPathComponent("data"), scratch: scratch) { server in
                    #expect(try server.json("/v1/status")["latest_counts"] is NSNull)
                    let tab = try browser.openTab(width: 1024, height: 800)
                    try tab.navigate("http://127.0.0.1:\(server.port)/")
                    try await tab.wait(until: "document.getElementById('subject-title').textContent === 'No plays counted yet'", "the empty store's title")
                    #expect(try tab.evaluate("document.getElementById('latest').hidden") as? Bool == true)
                    #expect(try tab.text("#total") == "0")
                    let errors = try tab.activity().errors
                    #expect(errors.isEmpty, "\(errors)")
                }
            }
        }

        @Test("where no event names a creator the page opens on the top track; when the reader stops, the page keeps its last numbers and says it could not update them")
        func stoppedReaderKeepsNumbersAndShowsNotice() async throws {
            try await withTemporaryDirectory { scratch in
                let logs = scratch.appendingPathComponent("logs")
                let data = scratch.appendingPathComponent("data")
                try await runCounterpointJSON([
                    "generate", "--logs", logs.path, "--events", "5000", "--tracks", "50", "--creators", "0",
                    "--hours", "24", "--start", TestDay.start, "--seed", "910", "--json",
                ], scratch: scratch)
                let truth = try LogTruth(logs: logs)
                try await Steps.batch(logs: logs, data: data, scratch: scratch)
                let browser = try Browser(scratch: scratch)
                defer { browser.quit() }
                let server = try await Server.start(dataDirectory: data, scratch: scratch)
                do {
                    let best = truth.top(hours: Int64.min..<Int64.max, limit: 1)[0]
                    let tab = try browser.openTab(width: 1024, height: 800)
                    try tab.navigate("http://127.0.0.1:\(server.port)/#period=all&step=day")
                    try await tab.wait(until: "document.getElementById('total').textContent === '\(Self.grouped(best.plays))'", "the top track's total")
                    #expect(try tab.text("#subject-title") == "Track \(best.track)")
                    #expect(try tab.text("#subject-note") == "— the top track of the period; type an id or pick one below")
                    #expect(try tab.text("#top-title") == "Top tracks")
                    #expect(try tab.evaluate("document.getElementById('notice').classList.contains('show')") as? Bool == false)
                    let before = try tab.evaluate("document.querySelector('main').innerText") as? String

                    try await server.stop()
                    try await tab.wait(until: "document.getElementById('notice').classList.contains('show')", timeout: .seconds(15),
                                       "the notice after the reader stopped")
                    #expect(try tab.text("#notice")?.hasPrefix("Not updated: the reader cannot be reached") == true)
                    #expect(try tab.text("#total") == Self.grouped(best.plays))
                    #expect(try tab.text("#top-rows tr:first-child td.n") == Self.grouped(best.plays))
                    let after = try tab.evaluate("document.querySelector('main').innerText") as? String
                    // Only the clock of the status card may have moved: every number stays.
                    let stripped = { (text: String?) in text?.replacingOccurrences(of: #"as of \d\d:\d\d:\d\d UTC"#, with: "", options: .regularExpression) }
                    #expect(stripped(after) == stripped(before))
                    let errors = try tab.activity().errors
                    #expect(errors.isEmpty, "\(errors)")
                } catch {
                    await server.command.killIfRunning()
                    throw error
                }
                await server.command.killIfRunning()
            }
        }

        /// Where `scripts/screenshots` wants the README's pictures; unset, they stay in the scratch folder.
        static let screenshotFolder = ProcessInfo.processInfo.environment["STATS_PAGE_SCREENSHOTS"]

        @Test("`run --demo` opens on a creator whose numbers come from both layers, with its tracks, and full-page PNGs of it at 1280 and 360 px stay small")
        func demoScreenshots() async throws {
            try await withTemporaryDirectory { scratch in
                let run = try Executable.start([
                    "run", "--demo", "--demo-events", "100000", "--demo-rate", "200",
                    "--data-dir", scratch.appendingPathComponent("data").path, "--listen", "127.0.0.1:0",
                ], scratch: scratch)
                let browser = try Browser(scratch: scratch)
                defer { browser.quit() }
                do {
                    let (_, port) = try await RunMergeTests.addresses(of: run)
                    let server = Server(command: run, port: port)
                    let shots: [(name: String, width: Int, mobile: Bool)] = [("stats-page.png", 1280, false), ("stats-page-360.png", 360, true)]
                    for shot in shots {
                        let tab = try browser.openTab(width: shot.width, height: 900, mobile: shot.mobile)
                        try tab.navigate("http://127.0.0.1:\(port)/#period=7d&step=hour")
                        // The top creator, both layers answered: history rebuilt by the batch, live plays flushed by the consumer.
                        try await tab.wait(until: """
                            document.getElementById('subject-title').textContent.startsWith('Creator ') && document.querySelectorAll('#tracks-rows tr').length > 0 && document.querySelectorAll('#chart-marks rect.m-batch').length > 24 && +document.getElementById('realtime-plays').textContent.replace(/,/g, '') > 0 && !document.getElementById('st-flush').textContent.startsWith('no')
                            """, timeout: .seconds(60), "both layers")
                        #expect(try tab.evaluate("document.documentElement.scrollWidth") as? Int == shot.width)
                        let height = try tab.evaluate("document.documentElement.scrollHeight") as? Int ?? 900
                        try tab.resize(width: shot.width, height: height, mobile: shot.mobile)
                        try await Task.sleep(for: .milliseconds(300))  // one frame after the resize redraws the chart
                        let png = try tab.screenshot()
                        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a PNG")
                        #expect(png.count < 400_000, "\(shot.name): \(png.count) bytes")
                        let folder = Self.screenshotFolder.map { URL(fileURLWithPath: $0) } ?? scratch
                        try png.write(to: folder.appendingPathComponent(shot.name))
                        let activity = try tab.activity()
                        #expect(activity.requests.allSatisfy { $0.hasPrefix("http://127.0.0.1:\(port)/") })
                        #expect(activity.errors.isEmpty, "\(activity.errors)")
                    }
                    try await server.stop()
                } catch {
                    await run.killIfRunning()
                    throw error
                }
            }
        }
    }
}

/// The suite's one generated store: logs of `TestDay` (30,000 events over 300 tracks and their
/// 30 creators, every signal), their truth counted by the test (`LogTruth`, `CreatorTruth`),
/// a batch run, one `serve` and one browser. Made by the first test that asks (a test that
/// needs none, such as the screenshots, costs nothing), ended when the suite ends.
/// The suite runs one test at a time (`RunEndToEnd` is serialized), so no lock guards it.
final class StatsPageStore: @unchecked Sendable {
    @TaskLocal static var current: StatsPageStore?

    struct Served {
        let server: Server
        let truth: LogTruth
        let creators: CreatorTruth
        let browser: Browser
    }

    let scratch: URL
    private var made: Served?

    init(scratch: URL) { self.scratch = scratch }

    func served() async throws -> Served {
        if let made { return made }
        let logs = scratch.appendingPathComponent("logs")
        let data = scratch.appendingPathComponent("data")
        try await Steps.generate(into: logs, scratch: scratch, events: 30_000, tracks: 300, seed: 909,
                                 duplicates: 0.02, malformed: 0.01)
        let truth = try LogTruth(logs: logs)
        let creators = try CreatorTruth(logs: logs)
        try await Steps.batch(logs: logs, data: data, scratch: scratch)
        let browser = try Browser(scratch: scratch)
        do {
            let server = try await Server.start(dataDirectory: data, scratch: scratch)
            made = Served(server: server, truth: truth, creators: creators, browser: browser)
            return made!
        } catch {
            browser.quit()
            throw error
        }
    }

    /// Stops `serve` (it must exit 0, as `withServer` expects) and the browser.
    func end() async throws {
        guard let made else { return }
        self.made = nil
        made.browser.quit()
        try await made.server.stop()
    }

    /// Gives the suite its `StatsPageStore` in a scratch folder, and ends it after the last test.
    struct Scope: SuiteTrait, TestScoping {
        var isRecursive: Bool { false }

        func provideScope(for test: Test, testCase: Test.Case?,
                          performing function: @Sendable () async throws -> Void) async throws {
            try await withTemporaryDirectory { scratch in
                let store = StatsPageStore(scratch: scratch)
                do {
                    try await StatsPageStore.$current.withValue(store) { try await function() }
                } catch {
                    try? await store.end()
                    throw error
                }
                try await store.end()
            }
        }
    }
}

extension Trait where Self == StatsPageStore.Scope {
    /// One `StatsPageStore` for the suite's tests.
    static var sharedStatsPageStore: Self { StatsPageStore.Scope() }
}
