import Foundation
import HTTPTestClient
import Testing

extension RunEndToEnd.StatsPage {
    /// "+12 % vs the previous 7 days", "new — none in the previous 7 days", "+5 vs …" against a
    /// negative net count: a total's change as the page writes it (docs/stats-page.md), written
    /// out here apart from the page's code; "" when neither period holds any.
    static func changeText(_ now: Int, _ before: Int, _ label: String) -> String {
        if before == 0 { return now == 0 ? "none in the previous \(label) either" : "new — none in the previous \(label)" }
        if before < 0 {
            let figure = now == before ? "±0" : (now > before ? "+" : "−") + grouped(abs(now - before))
            return "\(figure) vs the previous \(label)"
        }
        return "\(change(now, before)) vs the previous \(label)"
    }

    /// What a page's table shows, row by row, cell by cell (`selector` names the rows).
    static func rows(_ tab: Tab, _ selector: String) throws -> [[String]] {
        try tab.evaluate("[...document.querySelectorAll('\(selector)')].map(r => [...r.children].map(c => c.textContent))") as? [[String]] ?? []
    }

    /// Fetches every CSV link (`name` → href) from the reader and checks that it is the CSV
    /// answer of the JSON answer at the same address, value for value; returns the records.
    static func csvMatchesJSON(_ links: [String: String], server: Server) throws -> [String: [[String]]] {
        var tables: [String: [[String]]] = [:]
        for (name, href) in links where !href.isEmpty {
            let answer = try server.request(href)
            #expect(answer.status == 200 && answer.header("Content-Type") == "text/csv; charset=utf-8", "\(href)")
            #expect(answer.header("Content-Disposition")?.hasPrefix("attachment; filename=") == true, "\(href)")
            let csv = try CSVRecords.parse(answer.text)
            let json = try server.json(String(href.dropLast("&format=csv".count)))
            let items: [[String: Any]]
            if let counts = json["counts"] as? [String: [String: Any]] {
                // `counts`: one row per signal, in the API's order.
                items = ["plays", "downloads", "likes", "reposts", "comments"].map { (counts[$0] ?? [:]).merging(["signal": $0]) { a, _ in a } }
            } else {
                items = (json["points"] ?? json["values"] ?? json["tracks"] ?? json["creators"]) as? [[String: Any]] ?? []
            }
            let header = csv.first ?? []
            #expect(!header.isEmpty && csv.count == items.count + 1, "\(href)")
            let rows = items.map { item in
                header.map { key -> String in
                    switch item[key] {
                    case let text as String: return text
                    case is NSNull, nil: return ""
                    case let value: return key == "exact" ? String(describing: value as? Bool ?? false) : String(int64(value))
                    }
                }
            }
            #expect(Array(csv.dropFirst()) == rows, "\(href)")
            tables[name] = csv
        }
        return tables
    }

    /// The requests of each refresh the tab made so far, in order: each starts with `/v1/status`.
    static func refreshes(_ requests: [String], origin: String) -> [[String]] {
        var groups: [[String]] = []
        for url in requests where url.hasPrefix(origin + "/v1/") {
            let path = String(url.dropFirst(origin.count))
            if path == "/v1/status" || groups.isEmpty { groups.append([]) }
            groups[groups.count - 1].append(path)
        }
        return groups
    }

    @Test("a creator's view (#creator=ID) shows every signal's exact net total with its change against the previous period, its distinct listeners, countries and clients, each signal's timeline, and the top creators; every table and series links the reader's CSV of what it shows")
    func creatorsView() async throws {
        try await Self.withServedLogs { server, _, browser, creators in
            let origin = "http://127.0.0.1:\(server.port)"
            let tab = try browser.openTab(width: 1280, height: 900)
            // A week ending at noon a week after the logs' day holds their afternoon, the week
            // before it their morning (as in the track's comparisons).
            let end = TestDay.firstHour + 12 + 168
            let (week, weekBefore) = ((end - 168)..<end, (end - 336)..<(end - 168))
            // The busiest creator whose listeners of either week are few enough to be counted exactly.
            let creator = try #require(creators.creatorIDs.filter { id in
                (1...300).contains(creators.listeners(of: id, hours: week)) && (1...300).contains(creators.listeners(of: id, hours: weekBefore))
            }.max { creators.count("plays", of: $0, hours: week) < creators.count("plays", of: $1, hours: week) })
            let signals = ["plays", "downloads", "likes", "reposts", "comments"]
            let changes = signals.map { Self.changeText(creators.count($0, of: creator, hours: week), creators.count($0, of: creator, hours: weekBefore), "7 days") }
            let listenersChange = Self.changeText(creators.listeners(of: creator, hours: week), creators.listeners(of: creator, hours: weekBefore), "7 days")

            try tab.navigate("\(origin)/#creator=\(creator)&period=7d&step=hour&end=\(Hours.text(end))")
            try await tab.wait(until: """
                document.getElementById('subject-title').textContent === 'Creator \(creator)' && document.querySelectorAll('#chart-marks rect.mark').length === 168 && document.getElementById('total-change').textContent === '\(changes[0])' && document.getElementById('listeners-change').textContent === '\(listenersChange)'
                """, "creator \(creator)'s week")
            let plays = creators.count("plays", of: creator, hours: week)
            #expect(try tab.text("#total") == Self.grouped(plays))
            #expect(try tab.text("#batch-plays") == Self.grouped(plays))
            #expect(try tab.text("#realtime-plays") == "0")
            #expect(try tab.text("#subject-note") == "")
            for (index, signal) in signals.enumerated().dropFirst() {
                #expect(try tab.text("#sig-\(signal)") == Self.grouped(creators.count(signal, of: creator, hours: week)), "\(signal)")
                #expect(try tab.text("#sig-\(signal)-change") == changes[index], "\(signal)")
            }
            #expect(try tab.text("#listeners") == Self.grouped(creators.listeners(of: creator, hours: week)))
            #expect(try tab.text("#listeners-note")?.hasPrefix("exact") == true)
            let marks = try tab.evaluate("[...document.querySelectorAll('#chart-marks rect.mark')].map(m => +m.dataset.count)") as? [Int] ?? []
            #expect(marks == week.map { creators.count("plays", of: creator, hours: $0..<$0 + 1) })
            for field in ["country", "client"] {
                let values = creators.breakdown(field, of: creator, hours: week)
                let note = try tab.text(field == "country" ? "#countries-note" : "#clients-note")
                #expect(note == "\(values.count) values · \(Self.grouped(plays)) plays", "\(field)")
            }
            // A creator has no waveform; its tracks show instead.
            #expect(try tab.evaluate("document.getElementById('waveform').hidden && !document.getElementById('tracks').hidden") as? Bool == true)
            let top = creators.top(hours: week, limit: 10)
            #expect(try Self.rows(tab, "#top-rows tr").filter { $0[1] != "" }.map { [$0[1], $0[2]] } == top.map { ["Creator \($0.creator)", Self.grouped($0.plays)] })

            // Every table and series links the reader's CSV of its own request, equal to its JSON and to the truth.
            let range = "from=\(Hours.text(week.lowerBound))&to=\(Hours.text(end))"
            let base = "/v1/creators/\(creator)"
            let ids = ["counts", "timeline", "tracks", "countries", "clients", "listeners", "top"]
            let links = try tab.evaluate("""
                Object.fromEntries(\(ids).map(k => { const a = document.getElementById(k + '-csv');
                  return [k, a.hidden || !a.hasAttribute('download') ? '' : a.getAttribute('href')] }))
                """) as? [String: String] ?? [:]
            #expect(links == [
                "counts": "\(base)/counts?\(range)&format=csv",
                "timeline": "\(base)/timeline?\(range)&step=hour&format=csv",
                "tracks": "\(base)/tracks?signal=plays&limit=20&\(range)&format=csv",
                "countries": "\(base)/breakdown?by=country&\(range)&format=csv",
                "clients": "\(base)/breakdown?by=client&\(range)&format=csv",
                "listeners": "\(base)/listeners/timeline?\(range)&step=day&format=csv",
                "top": "/v1/creators/top?limit=10&\(range)&format=csv",
            ])
            let tables = try Self.csvMatchesJSON(links, server: server)
            #expect(tables["counts"]?.dropFirst().map { [$0[0], $0[1]] } == signals.map { [$0, String(creators.count($0, of: creator, hours: week))] })
            #expect(tables["timeline"]?.dropFirst().map { Int($0[1]) ?? .min } == marks)
            #expect(tables["countries"]?.dropFirst().map { [$0[0], $0[1]] } == creators.breakdown("country", of: creator, hours: week).map { [$0.value ?? "", String($0.plays)] })
            #expect(tables["clients"]?.dropFirst().map { [$0[0], $0[1]] } == creators.breakdown("client", of: creator, hours: week).map { [$0.value ?? "", String($0.plays)] })
            #expect(tables["top"]?.dropFirst().map { [$0[0], $0[1]] } == top.map { [String($0.creator), String($0.plays)] })
            let ranked = creators.tracks(of: creator, hours: week, rankedBy: "plays", limit: 20)
            #expect(tables["tracks"]?.dropFirst().map { $0 } == ranked.map { row in [String(row.track)] + signals.map { String(row.counts[$0] ?? 0) } })

            // The likes tab: in the fragment, each hour's net likes of the creator.
            _ = try tab.evaluate("document.querySelector('#signal-tabs button[data-signal=likes]').click()")
            try await tab.wait(until: "location.hash === '#creator=\(creator)&period=7d&step=hour&signal=likes&end=\(Hours.text(end))' && document.getElementById('timeline-title').textContent === 'Timeline of likes'",
                               "the likes tab")
            let likes = try tab.evaluate("[...document.querySelectorAll('#chart-marks rect.mark')].map(m => +m.dataset.count)") as? [Int] ?? []
            #expect(likes == week.map { creators.count("likes", of: creator, hours: $0..<$0 + 1) })

            // A refresh asks 9 requests, whatever the number of signals; 2 more for the previous
            // period when the view changes (or a minute has passed). A refresh cut short by a
            // click asked its first 2.
            let activity = try tab.activity()
            let sizes = Self.refreshes(activity.requests, origin: origin).map(\.count)
            #expect(sizes.contains(9) && sizes.allSatisfy { [2, 9, 11].contains($0) }, "\(sizes)")
            expectOwnOriginOnlyAndNoErrors(activity, origin: origin)
        }
    }

    @Test("a creator's tracks table shows each track's every signal exactly, sorts by any column (kept in the fragment), and a click or Enter on a row opens the track, with its waveforms of plays and comments and a link back to the creator")
    func creatorsTracksTable() async throws {
        try await Self.withServedLogs { server, truth, browser, creators in
            let origin = "http://127.0.0.1:\(server.port)"
            let tab = try browser.openTab(width: 1280, height: 900)
            let all = Int64.min..<Int64.max
            let signals = ["plays", "downloads", "likes", "reposts", "comments"]
            // The creator with the most tracks: more than the table's 20 rows.
            let creator = try #require(creators.creatorIDs.max { creators.tracks(of: $0, hours: all, rankedBy: "plays", limit: 1_000).count < creators.tracks(of: $1, hours: all, rankedBy: "plays", limit: 1_000).count })
            #expect(creators.tracks(of: creator, hours: all, rankedBy: "plays", limit: 1_000).count > 20)
            let hash = { (sort: String) in "#creator=\(creator)&period=all&step=day\(sort)&\(Self.end)" }
            try tab.navigate("\(origin)/\(hash(""))")
            try await tab.wait(until: "document.getElementById('subject-title').textContent === 'Creator \(creator)' && document.querySelectorAll('#tracks-rows tr').length === 20",
                               "creator \(creator)'s tracks")

            // Each column: its button in the fragment; the rows, the creator's 20 tracks ranked by its signal (plays for the track
            // column), in the column's order (ties: the lower id first), each with every signal's net count.
            let steps: [(column: String, fragment: String, ascending: Bool)] = [
                ("plays", "", false), ("downloads", "&sort=downloads", false), ("likes", "&sort=likes", false),
                ("reposts", "&sort=reposts", false), ("comments", "&sort=comments", false), ("comments", "&sort=comments&order=asc", true),
                ("track", "&sort=track", true), ("track", "&sort=track&order=desc", false),
            ]
            for step in steps {
                if step.fragment != "" {
                    _ = try tab.evaluate("document.querySelector('#tracks thead button[data-sort=\(step.column)]').click()")
                }
                let signal = step.column == "track" ? "plays" : step.column
                var expected = creators.tracks(of: creator, hours: all, rankedBy: signal, limit: 20)
                let key = { (row: (track: Int64, counts: [String: Int])) in step.column == "track" ? Int(row.track) : row.counts[signal] ?? 0 }
                expected.sort { a, b in key(a) != key(b) ? (key(a) < key(b)) == step.ascending : a.track < b.track }
                let cells = expected.map { row in ["Track \(row.track)"] + signals.map { Self.grouped(row.counts[$0] ?? 0) } }
                let first = cells.first?.first ?? ""
                try await tab.wait(until: "location.hash === '\(hash(step.fragment))' && document.querySelector('#tracks-rows tr td:nth-child(2)').textContent === '\(first)' && document.getElementById('tracks-csv').getAttribute('href').includes('signal=\(signal)&')",
                                   "the tracks sorted by \(step.column)")
                #expect(try Self.rows(tab, "#tracks-rows tr").map { Array($0.dropFirst()) } == cells, "sorted by \(step.column)\(step.ascending ? ", ascending" : "")")
                let sorted = try tab.evaluate("[...document.querySelectorAll('#tracks th[aria-sort]')].map(th => [th.dataset.sort, th.getAttribute('aria-sort')])") as? [[String]]
                #expect(sorted == [[step.column, step.ascending ? "ascending" : "descending"]])
            }

            // A click on a row (not on its button) opens that track; the fragment keeps the creator for the way back.
            let rows = try Self.rows(tab, "#tracks-rows tr")
            let track = try #require(Int64(rows[1][1].dropFirst("Track ".count)))
            _ = try tab.evaluate("document.querySelector('#tracks-rows tr:nth-child(2) td:nth-child(4)').click()")
            let trackHash = "#creator=\(creator)&track=\(track)&period=all&step=day&sort=track&order=desc&\(Self.end)"
            try await tab.wait(until: "location.hash === '\(trackHash)' && document.getElementById('subject-title').textContent === 'Track \(track)' && document.querySelectorAll('#comment-heat-cells rect').length === 100",
                               "track \(track) from the table")
            #expect(try tab.text("#total") == Self.grouped(truth.plays(of: track)))
            #expect(try tab.evaluate("document.getElementById('tracks').hidden && !document.getElementById('waveform').hidden") as? Bool == true)
            // Where its comments sit: the net comments of each bucket, and those without a position.
            var buckets = [Int](repeating: 0, count: 100)
            for (_, hour) in truth.commentBuckets[track] ?? [:] { for (bucket, count) in hour { buckets[bucket] += count } }
            let comments = truth.count("comments", of: track, hours: all)
            #expect(try tab.evaluate("[...document.querySelectorAll('#comment-heat-cells rect')].map(c => +c.dataset.comments)") as? [Int] == buckets)
            #expect(try tab.text("#comment-heat-note") == "\(Self.grouped(comments)) comments · \(Self.grouped(comments - buckets.reduce(0, +))) without a position")
            #expect(try tab.evaluate("document.querySelectorAll('#heat-cells rect').length") as? Int == 100)

            // The link back to the creator, then by keyboard: Enter on a row's button opens its track.
            #expect(try tab.text("#back") == "← creator \(creator)")
            _ = try tab.evaluate("document.getElementById('back').click()")
            try await tab.wait(until: "location.hash === '\(hash("&sort=track&order=desc"))' && document.getElementById('subject-title').textContent === 'Creator \(creator)' && document.querySelectorAll('#tracks-rows tr').length === 20",
                               "back to creator \(creator)")
            let firstTrack = try #require(Int64(rows[0][1].dropFirst("Track ".count)))
            _ = try tab.evaluate("document.querySelector('#tracks-rows tr:first-child button').focus()")
            try tab.press()
            try await tab.wait(until: "location.hash === '#creator=\(creator)&track=\(firstTrack)&period=all&step=day&sort=track&order=desc&\(Self.end)' && document.getElementById('subject-title').textContent === 'Track \(firstTrack)'",
                               "track \(firstTrack) by Enter")
            // A track from the top list, or typed in, has no creator to go back to.
            _ = try tab.evaluate("document.querySelector('#top-rows tr:first-child button').click()")
            try await tab.wait(until: "location.hash.startsWith('#track=') && document.getElementById('back').hidden", "a track without its creator")

            let activity = try tab.activity()
            expectOwnOriginOnlyAndNoErrors(activity, origin: origin)
        }
    }
}
