import Archive
import Reader
import Realtime

extension LiveStatus {
    /// What the consumer and the archiver report, in the reader's terms.
    init(_ realtime: RealtimeStatus, archive: ArchiveStatus) {
        self.init(
            eventsPerSecond: realtime.eventsPerSecond, rejections: realtime.rejections,
            offsetGaps: realtime.offsetGaps,
            fencedFlushes: realtime.fencedFlushes,
            archive: ArchiveNote(openHours: archive.openHours, lastClosedHour: archive.lastClosedHour,
                                 eventsArchived: archive.eventsArchived, lateEvents: archive.lateEvents,
                                 invalidMessages: archive.invalidMessages,
                                 offsetGapSkippedMessages: archive.gapSkippedMessages))
    }
}
