import CounterpointCore
import CounterStore
import Foundation
import HTTPTestClient
import Testing

/// The routes of SPEC §11 for a track's and a creator's signals, over HTTP: `counts` with its
/// split, `signal=` on timelines and waveforms, rankings of tracks and of creators, CSV twins, and
/// 400s naming a bad `signal` or creator id. The rows are written by hand with every signal,
/// retractions as negative hours; the expected answers are worked out below from those rows, not
/// by the reader's code.
@Suite("A track's every signal over HTTP", .onTestThreads)
struct SignalAnswerTests {
    /// The standard data, then a batch run over [−24, 10) holding track 6 alone (hours 2 and 3),
    /// and realtime rows of track 6 in hours 3 (covered, never read) and 30 (uncovered). With
    /// dimension counts: hour 2's 4 plays, 3 in bucket 10 and 2 from DE, and a comment in bucket
    /// 50 and a deletion in 60 (0 comments); hour 3's 2 comments, 1 in bucket 50 and 2 in 99 (so
    /// a deletion without position); hour 30's comment in bucket 50.
    static func stores(_ batch: any BatchWriter, _ realtime: any RealtimeWriter) throws {
        try standardStores(batch, realtime)
        func blob(plays: [(bucket: Int, count: Int64)] = [], countries: [(value: DimensionValue, count: Int64)] = [],
                  comments: [(bucket: Int, count: Int64)], byTrack: [Signal: [(track: Int64, count: Int64)]] = [:]) -> [UInt8] {
            var out: [UInt8] = []
            DimensionEncoding.encode(waveform: plays, countries: countries, clients: [], commentsWaveform: comments, byTrack: byTrack,
                                     into: &out)
            return out
        }
        try batch.replace(range: hours(-24, 10), run: standardRun(hours(-24, 10), reasons: [:])) {
            var two = SignalCounts(plays: 4)
            two.likes = 3
            two.downloads = 1
            try $0.write(trackID: 6, hour: hour(2), counts: two,
                         dimensions: blob(plays: [(10, 3)], countries: [(DimensionValue("DE")!, 2)], comments: [(50, 1), (60, -1)]))
            var three = SignalCounts()
            three.likes = -1
            three.comments = 2
            try $0.write(trackID: 6, hour: hour(3), counts: three, dimensions: blob(comments: [(50, 1), (99, 2)]))
            // Creator 7 named by track 6's events and others'; creator 8 by fewer.
            var seven = SignalCounts(plays: 9)
            seven.likes = 2
            // Its counts by track: hour 2 holds track 6's 4 plays, 3 likes and a download and
            // track 9's 5 plays and −1 like; hour 3 track 6's −1 like and 2 comments.
            try $0.write(.creator(7), hour: hour(2), counts: seven,
                         dimensions: blob(comments: [], byTrack: [.plays: [(6, 4), (9, 5)], .downloads: [(6, 1)], .likes: [(6, 3), (9, -1)]]))
            try $0.write(.creator(7), hour: hour(3), counts: three, dimensions: blob(comments: [], byTrack: [.likes: [(6, -1)], .comments: [(6, 2)]]))
            try $0.write(.creator(8), hour: hour(2), counts: SignalCounts(plays: 3))
        }
        var covered = SignalCounts(plays: 100)
        covered.likes = 100
        var late = SignalCounts(plays: 1)
        late.likes = -2
        late.comments = 1
        late.reposts = 5
        // Tracks' and creators' rows in one flush.
        _ = try realtime.apply(
            [CounterRows.realtime([CountRow(id: 6, hour: hour(3), counts: covered), CountRow(id: 6, hour: hour(30), counts: late)],
                                  dimensions: [EncodedRow(id: 6, hour: hour(3), encoded: blob(comments: [(0, 100)])),
                                               EncodedRow(id: 6, hour: hour(30), encoded: blob(comments: [(50, 1)]))]),
             CounterRows.realtime([CountRow(id: 7, hour: hour(3), counts: covered), CountRow(id: 7, hour: hour(30), counts: late),
                                   CountRow(id: 8, hour: hour(31), counts: SignalCounts(plays: 20))], of: .creator)],
            progress: [PartitionProgress(topic: "plays", partition: 0, startOffset: 100, nextOffset: 101, highWatermark: 130)],
            flushedAt: standardFlushedAt)
    }

    struct CountsAnswer: Decodable {
        struct Split: Decodable, Equatable { var total: Int64; var batch: Int64; var realtime: Int64 }
        var trackId: Int64
        var counts: [String: Split]
    }

    struct SignalTimeline: Decodable {
        var signal: String?
        var points: [[String: StringOrNumber]]
    }

    enum StringOrNumber: Decodable, Equatable {
        case string(String), number(Int64)
        init(from decoder: Decoder) throws {
            let value = try decoder.singleValueContainer()
            if let number = try? value.decode(Int64.self) { self = .number(number) } else { self = .string(try value.decode(String.self)) }
        }
    }

    @Test("counts gives every signal's total with its batch and realtime parts, as JSON and as CSV")
    func countsWithSplit() throws {
        try ReaderFixture.with(.sqlite, stores: Self.stores) { reader in
            let answer = try reader.json("/v1/tracks/6/counts", as: CountsAnswer.self)
            typealias Split = CountsAnswer.Split
            #expect(answer.trackId == 6)
            #expect(answer.counts == [
                "plays": Split(total: 5, batch: 4, realtime: 1),
                "downloads": Split(total: 1, batch: 1, realtime: 0),
                "likes": Split(total: 0, batch: 2, realtime: -2),
                "reposts": Split(total: 5, batch: 0, realtime: 5),
                "comments": Split(total: 3, batch: 2, realtime: 1),
            ])
            // A range of the covered hour 3 alone: its negative likes, and nothing of realtime.
            let three = try reader.json("/v1/tracks/6/counts?from=\(time(3))&to=\(time(4))", as: CountsAnswer.self)
            #expect(three.counts["likes"] == Split(total: -1, batch: -1, realtime: 0))

            let response = try reader.get("/v1/tracks/6/counts?format=csv")
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "text/csv; charset=utf-8")
            #expect(response.header("Content-Disposition") == #"attachment; filename="track-6-counts-all-time.csv""#)
            #expect(response.text == "signal,total,batch,realtime\r\nplays,5,4,1\r\ndownloads,1,1,0\r\nlikes,0,2,-2\r\n"
                + "reposts,5,0,5\r\ncomments,3,2,1\r\n")
            // A track with no events answers zeros, not 404.
            let none = try reader.json("/v1/tracks/77/counts", as: CountsAnswer.self)
            #expect(none.counts.count == 5 && none.counts.values.allSatisfy { $0 == Split(total: 0, batch: 0, realtime: 0) })
        }
    }

    @Test("a timeline of a signal names it in the answer and in each point, as JSON and as CSV")
    func signalTimeline() throws {
        try ReaderFixture.with(.sqlite, stores: Self.stores) { reader in
            let range = "from=\(time(2))&to=\(time(4))"
            let likes = try reader.json("/v1/tracks/6/timeline?\(range)&signal=likes", as: SignalTimeline.self)
            #expect(likes.signal == "likes")
            #expect(likes.points == [
                ["start": .string(time(2)), "likes": .number(3), "source": .string("batch")],
                ["start": .string(time(3)), "likes": .number(-1), "source": .string("batch")],
            ])
            let csv = try reader.get("/v1/tracks/6/timeline?\(range)&signal=likes&format=csv")
            #expect(csv.text == "start,likes,source\r\n\(time(2)),3,batch\r\n\(time(3)),-1,batch\r\n")
            #expect(csv.header("Content-Disposition")?.contains("track-6-likes-by-hour-") == true)
            // By day, over the covered day and the realtime one.
            let days = try reader.json("/v1/tracks/6/timeline?from=\(time(0))&to=\(time(48))&step=day&signal=reposts",
                                       as: SignalTimeline.self)
            #expect(days.points.map { $0["reposts"] } == [.number(0), .number(5)])
            // Without `signal`, the timeline of plays as before (not naming a signal); with
            // `signal=plays`, the same points, the signal named.
            let plays = try reader.json("/v1/tracks/6/timeline?\(range)", as: SignalTimeline.self)
            #expect(plays.signal == nil && plays.points.map { $0["plays"] } == [.number(4), .number(0)])
            let named = try reader.json("/v1/tracks/6/timeline?\(range)&signal=plays", as: SignalTimeline.self)
            #expect(named.signal == "plays" && named.points == plays.points)
        }
    }

    struct RankingAnswer: Decodable {
        var signal: String?
        var tracks: [[String: Int64]]
    }

    @Test("the ranking by a signal lists the tracks whose net count is positive, its members named after the signal")
    func rankingBySignal() throws {
        try ReaderFixture.with(.sqlite, stores: Self.stores) { reader in
            // Track 6 nets 0 likes (2 batch, −2 realtime): no track is ranked by likes.
            let likes = try reader.json("/v1/top?signal=likes", as: RankingAnswer.self)
            #expect(likes.signal == "likes" && likes.tracks.isEmpty)
            let reposts = try reader.json("/v1/top?signal=reposts", as: RankingAnswer.self)
            #expect(reposts.tracks == [["track_id": 6, "reposts": 5, "batch_reposts": 0, "realtime_reposts": 5]])
            let comments = try reader.get("/v1/top?signal=comments&format=csv")
            #expect(comments.text == "track_id,comments,batch_comments,realtime_comments\r\n6,3,2,1\r\n")
            #expect(comments.header("Content-Disposition") == #"attachment; filename="top-tracks-comments-all-time.csv""#)
            // Plays as before, naming no signal unless asked. (This data's batch run over [−24, 10)
            // holds track 6 alone, so track 1 has its 13 uncovered realtime plays and track 4 its 8.)
            let plays = try reader.json("/v1/top?limit=2", as: RankingAnswer.self)
            #expect(plays.signal == nil && plays.tracks.map { $0["track_id"] } == [1, 4])
            #expect(try reader.json("/v1/top?limit=2&signal=plays", as: RankingAnswer.self).signal == "plays")
            #expect(plays.tracks.map { $0["plays"] } == [13, 8])
        }
    }

    struct CreatorCounts: Decodable {
        var creatorId: Int64
        var counts: [String: CountsAnswer.Split]
    }

    struct CreatorRanking: Decodable {
        var signal: String?
        var creators: [[String: Int64]]
    }

    @Test("a creator's routes answer as a track's with creator_id, and creators rank by any signal, as JSON and as CSV")
    func creatorRoutes() throws {
        try ReaderFixture.with(.sqlite, stores: Self.stores) { reader in
            typealias Split = CountsAnswer.Split
            let seven = try reader.json("/v1/creators/7/counts", as: CreatorCounts.self)
            #expect(seven.creatorId == 7)
            #expect(seven.counts["plays"] == Split(total: 10, batch: 9, realtime: 1))
            #expect(seven.counts["likes"] == Split(total: -1, batch: 1, realtime: -2))
            #expect(seven.counts["comments"] == Split(total: 3, batch: 2, realtime: 1))
            let csv = try reader.get("/v1/creators/7/counts?format=csv")
            #expect(csv.header("Content-Disposition") == #"attachment; filename="creator-7-counts-all-time.csv""#)
            #expect(csv.text == "signal,total,batch,realtime\r\nplays,10,9,1\r\ndownloads,0,0,0\r\nlikes,-1,1,-2\r\n"
                + "reposts,5,0,5\r\ncomments,3,2,1\r\n")
            #expect(try reader.get("/v1/creators/7/plays").text.hasPrefix(#"{"creator_id":7,"plays":10,"batch_plays":9,"realtime_plays":1,"#))

            let range = "from=\(time(2))&to=\(time(4))"
            let likes = try reader.json("/v1/creators/7/timeline?\(range)&signal=likes", as: SignalTimeline.self)
            #expect(likes.signal == "likes" && likes.points.map { $0["likes"] } == [.number(2), .number(-1)])
            #expect(try reader.get("/v1/creators/7/timeline?\(range)&format=csv").text
                == "start,plays,source\r\n\(time(2)),9,batch\r\n\(time(3)),0,batch\r\n")

            // Creator 7's tracks over the covered hours [2, 4): by plays, track 9 (5) then 6 (4);
            // by likes, track 6 alone (3 − 1), track 9's −1 left out.
            let tracks = try reader.get("/v1/creators/7/tracks?\(range)")
            #expect(tracks.text.hasPrefix(#"{"creator_id":7,"signal":"plays","tracks":[{"track_id":9,"plays":5,"downloads":0,"likes":-1,"reposts":0,"comments":0},{"track_id":6,"plays":4,"downloads":1,"likes":2,"reposts":0,"comments":2}],"freshness":"#), "\(tracks.text)")
            let byLikes = try reader.get("/v1/creators/7/tracks?\(range)&signal=likes&format=csv")
            #expect(byLikes.text == "track_id,plays,downloads,likes,reposts,comments\r\n6,4,1,2,0,2\r\n")
            #expect(byLikes.header("Content-Disposition")?.contains("creator-7-tracks-by-likes-") == true)
            #expect(try reader.get("/v1/creators/7/tracks?\(range)&limit=1").text.contains(#""tracks":[{"track_id":9,"#))
            #expect(try reader.get("/v1/creators/77/tracks").text.contains(#""tracks":[]"#))
            #expect(try reader.get("/v1/creators/7/tracks?limit=0").status == 400)
            #expect(try reader.get("/v1/tracks/7/tracks").status == 404)

            // Creator 8: 3 batch plays, 20 uncovered realtime plays; creator 7: 10.
            let top = try reader.json("/v1/creators/top", as: CreatorRanking.self)
            #expect(top.signal == nil)
            #expect(top.creators == [["creator_id": 8, "plays": 23, "batch_plays": 3, "realtime_plays": 20],
                                     ["creator_id": 7, "plays": 10, "batch_plays": 9, "realtime_plays": 1]])
            let reposts = try reader.get("/v1/creators/top?signal=reposts&format=csv")
            #expect(reposts.text == "creator_id,reposts,batch_reposts,realtime_reposts\r\n7,5,0,5\r\n")
            #expect(reposts.header("Content-Disposition") == #"attachment; filename="top-creators-reposts-all-time.csv""#)
            // Creators are not tracks: track 7 has no rows, and /v1/top lists tracks only.
            #expect(try reader.json("/v1/tracks/7/counts", as: CountsAnswer.self).counts["plays"] == Split(total: 0, batch: 0, realtime: 0))
            #expect(try reader.json("/v1/top?signal=reposts", as: RankingAnswer.self).tracks.map { $0["track_id"] } == [6])

            // A creator without events answers zeros; a bad creator id is a 400 naming it; a
            // creator has no waveform route.
            let none = try reader.json("/v1/creators/77/counts", as: CreatorCounts.self)
            #expect(none.counts.values.allSatisfy { $0 == Split(total: 0, batch: 0, realtime: 0) })
            for target in ["/v1/creators/0/counts", "/v1/creators/x/plays", "/v1/creators/99999999999999999999/timeline"] {
                let bad = try reader.get(target)
                #expect(bad.status == 400 && bad.text.contains(#""code":"invalid_creator_id""#), "\(target): \(bad.text)")
            }
            #expect(try reader.get("/v1/creators/7/waveform").status == 404)
            #expect(try reader.get("/v1/creators/top?signal=hearts").text.contains("invalid_signal"))
        }
    }

    @Test("an unknown signal, and counts given a parameter it does not take, are 400s naming them")
    func badSignal() throws {
        try ReaderFixture.with(.sqlite, stores: Self.stores) { reader in
            for target in ["/v1/tracks/6/timeline?signal=hearts", "/v1/top?signal=hearts"] {
                let bad = try reader.get(target)
                #expect(bad.status == 400)
                #expect(bad.text.contains(#""code":"invalid_signal""#) && bad.text.contains("hearts"))
            }
            let unknown = try reader.get("/v1/tracks/6/counts?step=day")
            #expect(unknown.status == 400 && unknown.text.contains("unknown_parameter"))
            let badFormat = try reader.get("/v1/tracks/6/counts?format=xml")
            #expect(badFormat.status == 400 && badFormat.text.contains("invalid_format"))
        }
    }

    struct WaveformAnswer: Decodable {
        var trackId: Int64
        var signal: String?
        var buckets: [Int64]
        var plays: Int64?
        var playsWithoutPosition: Int64?
        var comments: Int64?
        var commentsWithoutPosition: Int64?
    }

    /// 100 buckets, zero but for `entries`.
    static func buckets(_ entries: [Int: Int64]) -> [Int64] {
        (0..<100).map { entries[$0] ?? 0 }
    }

    @Test("the comments' waveform reads comments and comments_without_position and names its signal; without it, the plays' as before")
    func commentsWaveform() throws {
        try ReaderFixture.with(.sqlite, stores: Self.stores) { reader in
            // All time: batch hours 2 and 3, realtime hour 30 (hour 3's realtime row is covered).
            let all = try reader.json("/v1/tracks/6/waveform?signal=comments", as: WaveformAnswer.self)
            #expect(all.trackId == 6 && all.signal == "comments")
            #expect(all.buckets == Self.buckets([50: 3, 60: -1, 99: 2]))
            #expect(all.comments == 3 && all.commentsWithoutPosition == -1)
            #expect(all.plays == nil && all.playsWithoutPosition == nil)
            let three = try reader.json("/v1/tracks/6/waveform?signal=comments&from=\(time(3))&to=\(time(4))", as: WaveformAnswer.self)
            #expect(three.buckets == Self.buckets([50: 1, 99: 2]) && three.comments == 2 && three.commentsWithoutPosition == -1)
            let late = try reader.json("/v1/tracks/6/waveform?signal=comments&from=\(time(30))&to=\(time(31))", as: WaveformAnswer.self)
            #expect(late.buckets == Self.buckets([50: 1]) && late.comments == 1 && late.commentsWithoutPosition == 0)
            let none = try reader.json("/v1/tracks/77/waveform?signal=comments", as: WaveformAnswer.self)
            #expect(none.buckets == Self.buckets([:]) && none.comments == 0 && none.commentsWithoutPosition == 0)

            // Without `signal`: the plays' answer, its members and their order as before comments had a waveform.
            let plays = try reader.get("/v1/tracks/6/waveform")
            #expect(plays.status == 200)
            #expect(plays.text.hasPrefix(#"{"track_id":6,"buckets":[0,0,0,0,0,0,0,0,0,0,3,0,"#))
            #expect(plays.text.contains(#"],"plays":5,"plays_without_position":2,"freshness":{"#))
            let object = try #require(try JSONSerialization.jsonObject(with: Data(plays.text.utf8)) as? [String: Any])
            #expect(Set(object.keys) == ["track_id", "buckets", "plays", "plays_without_position", "freshness"])
            // `signal=plays`: the same answer, naming the signal after the track.
            let named = try reader.get("/v1/tracks/6/waveform?signal=plays")
            #expect(named.text == plays.text.replacingOccurrences(of: #"{"track_id":6,"#, with: #"{"track_id":6,"signal":"plays","#))
            // The breakdowns read the same blobs, comments and all, as before.
            let countries = try reader.get("/v1/tracks/6/breakdown?by=country&format=csv")
            #expect(countries.text == "value,plays\r\nDE,2\r\n,3\r\n")
        }
    }

    @Test("a waveform of a signal without positions, or of an unknown one, is a 400 invalid_signal naming it")
    func waveformOfOtherSignals() throws {
        try ReaderFixture.with(.sqlite, stores: Self.stores) { reader in
            for signal in ["likes", "downloads", "bogus", "Comments", ""] {
                let bad = try reader.get("/v1/tracks/6/waveform?signal=\(signal)")
                #expect(bad.status == 400, "\(signal)")
                let error = try bad.decode(ErrorAnswer.self).error
                #expect(error.code == "invalid_signal", "\(signal)")
                #expect(error.message.contains("'\(signal)'") && error.message.contains("'plays' or 'comments'"), "\(error.message)")
            }
            let likes = try reader.get("/v1/tracks/6/waveform?signal=likes")
            #expect(likes.text.contains("likes have no place on the waveform"))
            let csv = try reader.get("/v1/tracks/6/waveform?signal=comments&format=csv")
            #expect(csv.status == 400 && csv.text.contains("unknown_parameter"))
        }
    }
}
