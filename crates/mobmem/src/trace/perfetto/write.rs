//! Writing Perfetto traces: tracks (processes, threads, counters, plain tracks), slices,
//! instant events and counter values, as the `TrackEvent` protocol carries them, in a
//! file ui.perfetto.dev and `trace_processor` open.
//!
//! The messages below are the write side of the schema, as prost messages. Field
//! numbers and types are Perfetto's wire format, read from the descriptors of
//! `perfetto_trace_pb2` in the `perfetto` Python package 0.59.1
//! (`protos/perfetto/trace/trace_packet.proto`, `track_event/track_descriptor.proto`,
//! `track_event/process_descriptor.proto`, `track_event/thread_descriptor.proto`,
//! `track_event/counter_descriptor.proto`, `track_event/track_event.proto`); the table
//! in docs/perfetto-wire.md ("Writing a trace") lists them.
//!
//! Every packet is on one sequence (`trusted_packet_sequence_id` 1, the first packet
//! clearing its incremental state); nothing is interned, so each event names its track
//! by uuid and carries its name. Events are written in time order, an end before a
//! begin at the same time (a slice that ends where the next begins on its track), and
//! in the order they were given among equals: the same calls make the same bytes.

use prost::Message;

/// `Trace`: the file is this message, `repeated TracePacket packet = 1`.
#[derive(Clone, PartialEq, Message)]
pub struct Trace {
    #[prost(message, repeated, tag = "1")]
    pub packet: Vec<TracePacket>,
}

/// The fields of `TracePacket` written here.
#[derive(Clone, PartialEq, Message)]
pub struct TracePacket {
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    #[prost(message, optional, tag = "11")]
    pub track_event: Option<TrackEvent>,
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    /// `SequenceFlags`: [`SEQ_INCREMENTAL_STATE_CLEARED`] on a sequence's first packet.
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    #[prost(message, optional, tag = "60")]
    pub track_descriptor: Option<TrackDescriptor>,
}

/// `TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED`.
pub const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;

/// The fields of `TrackDescriptor` written here.
#[derive(Clone, PartialEq, Message)]
pub struct TrackDescriptor {
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(message, optional, tag = "3")]
    pub process: Option<ProcessDescriptor>,
    #[prost(message, optional, tag = "4")]
    pub thread: Option<ThreadDescriptor>,
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: Option<u64>,
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
    #[prost(string, optional, tag = "14")]
    pub description: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ProcessDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(string, optional, tag = "6")]
    pub process_name: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ThreadDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(int64, optional, tag = "2")]
    pub tid: Option<i64>,
    #[prost(string, optional, tag = "5")]
    pub thread_name: Option<String>,
}

/// The fields of `CounterDescriptor` written here: the unit's name as free text.
#[derive(Clone, PartialEq, Message)]
pub struct CounterDescriptor {
    #[prost(string, optional, tag = "6")]
    pub unit_name: Option<String>,
}

/// The fields of `TrackEvent` written here.
#[derive(Clone, PartialEq, Message)]
pub struct TrackEvent {
    /// `TrackEvent.Type` ([`EventType`]).
    #[prost(int32, optional, tag = "9")]
    pub r#type: Option<i32>,
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    #[prost(string, optional, tag = "23")]
    pub name: Option<String>,
    #[prost(double, optional, tag = "44")]
    pub double_counter_value: Option<f64>,
}

/// `TrackEvent.Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum EventType {
    SliceBegin = 1,
    SliceEnd = 2,
    Instant = 3,
    Counter = 4,
}

/// A track of a trace being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Track(u64);

impl Track {
    pub fn uuid(self) -> u64 {
        self.0
    }
}

/// One event waiting for the time sort.
#[derive(Debug, Clone)]
struct Pending {
    at: u64,
    /// Ends first, then instants and counters, then begins.
    rank: u8,
    event: TrackEvent,
}

/// A trace being written: tracks are declared first (their descriptors lead the file),
/// events in any order; [`TraceWriter::finish`] sorts the events by time and encodes.
#[derive(Debug, Clone, Default)]
pub struct TraceWriter {
    tracks: Vec<TrackDescriptor>,
    events: Vec<Pending>,
}

const SEQUENCE: u32 = 1;

impl TraceWriter {
    pub fn new() -> Self {
        Self::default()
    }

    fn add_track(&mut self, mut descriptor: TrackDescriptor) -> Track {
        // uuids from 1, in the order tracks are declared: deterministic.
        let uuid = self.tracks.len() as u64 + 1;
        descriptor.uuid = Some(uuid);
        self.tracks.push(descriptor);
        Track(uuid)
    }

    /// A plain track, under `parent` if given (a process's track, or another plain one);
    /// `description` is shown with it.
    pub fn track(&mut self, name: &str, parent: Option<Track>, description: Option<&str>) -> Track {
        self.add_track(TrackDescriptor {
            name: Some(name.to_string()),
            parent_uuid: parent.map(Track::uuid),
            description: description.map(str::to_string),
            ..Default::default()
        })
    }

    /// A process's track: the tracks of its threads and its own counters go under it.
    pub fn process(&mut self, pid: i32, name: &str) -> Track {
        self.add_track(TrackDescriptor {
            process: Some(ProcessDescriptor {
                pid: Some(pid),
                process_name: Some(name.to_string()),
            }),
            ..Default::default()
        })
    }

    /// A thread's track, in process `pid`'s group.
    pub fn thread(&mut self, pid: i32, tid: i64, name: &str) -> Track {
        self.add_track(TrackDescriptor {
            thread: Some(ThreadDescriptor {
                pid: Some(pid),
                tid: Some(tid),
                thread_name: Some(name.to_string()),
            }),
            ..Default::default()
        })
    }

    /// A counter track of values in `unit` (free text: "MiB", "%"), under `parent` if
    /// given.
    pub fn counter(&mut self, name: &str, unit: &str, parent: Option<Track>) -> Track {
        self.add_track(TrackDescriptor {
            name: Some(name.to_string()),
            parent_uuid: parent.map(Track::uuid),
            counter: Some(CounterDescriptor {
                unit_name: Some(unit.to_string()),
            }),
            ..Default::default()
        })
    }

    fn push(
        &mut self,
        at: u64,
        kind: EventType,
        track: Track,
        name: Option<&str>,
        value: Option<f64>,
    ) {
        let rank = match kind {
            EventType::SliceEnd => 0,
            EventType::Instant | EventType::Counter => 1,
            EventType::SliceBegin => 2,
        };
        self.events.push(Pending {
            at,
            rank,
            event: TrackEvent {
                r#type: Some(kind as i32),
                track_uuid: Some(track.uuid()),
                name: name.map(str::to_string),
                double_counter_value: value,
            },
        });
    }

    /// A slice named `name` on `track` from `start` to `end`, ns. Slices on one track
    /// must nest or follow one another. One of no length is left out: its begin and end
    /// at one time could not be told apart from a slice that ends where another begins.
    pub fn slice(&mut self, track: Track, name: &str, start: u64, end: u64) {
        if end <= start {
            return;
        }
        self.push(start, EventType::SliceBegin, track, Some(name), None);
        self.push(end, EventType::SliceEnd, track, None, None);
    }

    /// An instant event named `name` on `track` at `at`, ns.
    pub fn instant(&mut self, track: Track, name: &str, at: u64) {
        self.push(at, EventType::Instant, track, Some(name), None);
    }

    /// Counter `track` takes `value` at `at`, ns.
    pub fn counter_value(&mut self, track: Track, at: u64, value: f64) {
        self.push(at, EventType::Counter, track, None, Some(value));
    }

    /// The trace: the track descriptors in the order declared, then the events in time
    /// order.
    pub fn finish(mut self) -> Vec<u8> {
        self.events.sort_by_key(|e| (e.at, e.rank));
        let mut packets = Vec::with_capacity(self.tracks.len() + self.events.len());
        for descriptor in self.tracks {
            packets.push(TracePacket {
                track_descriptor: Some(descriptor),
                ..packet()
            });
        }
        for e in self.events {
            packets.push(TracePacket {
                timestamp: Some(e.at),
                track_event: Some(e.event),
                ..packet()
            });
        }
        if let Some(first) = packets.first_mut() {
            first.sequence_flags = Some(SEQ_INCREMENTAL_STATE_CLEARED);
        }
        Trace { packet: packets }.encode_to_vec()
    }
}

fn packet() -> TracePacket {
    TracePacket {
        trusted_packet_sequence_id: Some(SEQUENCE),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_decodes_back_to_its_tracks_and_events_in_time_order() {
        let mut w = TraceWriter::new();
        let app = w.process(1234, "com.example.app");
        let ui = w.thread(1234, 1234, "com.example.app");
        let free = w.counter("free memory", "MiB", None);
        let launches = w.track("launches", Some(app), Some("a note"));
        // Given out of order: the second slice first, then the first ending where it
        // begins; a slice of no length is left out.
        w.slice(ui, "cpu 6", 50, 80);
        w.slice(ui, "flash read", 10, 50);
        w.slice(ui, "nothing", 90, 90);
        w.instant(launches, "launch", 10);
        w.counter_value(free, 0, 512.5);
        let bytes = w.finish();
        let trace = Trace::decode(bytes.as_slice()).unwrap();
        let p = &trace.packet;
        assert_eq!(p.len(), 4 + 6);
        assert!(p.iter().all(|p| p.trusted_packet_sequence_id == Some(1)));
        assert_eq!(p[0].sequence_flags, Some(SEQ_INCREMENTAL_STATE_CLEARED));
        assert!(p[1..].iter().all(|p| p.sequence_flags.is_none()));
        let d: Vec<&TrackDescriptor> = p[..4]
            .iter()
            .map(|p| p.track_descriptor.as_ref().unwrap())
            .collect();
        assert_eq!(
            d.iter().map(|d| d.uuid.unwrap()).collect::<Vec<_>>(),
            [1, 2, 3, 4]
        );
        let process = d[0].process.as_ref().unwrap();
        assert_eq!(
            (process.pid, process.process_name.as_deref()),
            (Some(1234), Some("com.example.app"))
        );
        let thread = d[1].thread.as_ref().unwrap();
        assert_eq!((thread.pid, thread.tid), (Some(1234), Some(1234)));
        assert_eq!(
            d[2].counter.as_ref().unwrap().unit_name.as_deref(),
            Some("MiB")
        );
        assert_eq!(
            (d[3].parent_uuid, d[3].description.as_deref()),
            (Some(1), Some("a note"))
        );
        type Row<'a> = (u64, i32, u64, Option<&'a str>, Option<f64>);
        let events: Vec<Row> = p[4..]
            .iter()
            .map(|p| {
                let e = p.track_event.as_ref().unwrap();
                (
                    p.timestamp.unwrap(),
                    e.r#type.unwrap(),
                    e.track_uuid.unwrap(),
                    e.name.as_deref(),
                    e.double_counter_value,
                )
            })
            .collect();
        assert_eq!(
            events,
            vec![
                (0, 4, 3, None, Some(512.5)),
                (10, 3, 4, Some("launch"), None),
                (10, 1, 2, Some("flash read"), None),
                (50, 2, 2, None, None),
                (50, 1, 2, Some("cpu 6"), None),
                (80, 2, 2, None, None),
            ]
        );
    }

    #[test]
    fn the_field_numbers_are_perfettos() {
        // Bytes by hand from the schema's numbers (prost writes fields by number):
        // packet field 1 (0x0a), then in the packet timestamp 8 (varint, 0x40),
        // sequence id 10 (0x50), track_event 11 (0x5a); in the event type 9 (0x48),
        // track_uuid 11 (0x58).
        let packet = TracePacket {
            timestamp: Some(5),
            track_event: Some(TrackEvent {
                r#type: Some(EventType::SliceEnd as i32),
                track_uuid: Some(7),
                ..Default::default()
            }),
            trusted_packet_sequence_id: Some(1),
            ..Default::default()
        };
        let bytes = Trace {
            packet: vec![packet],
        }
        .encode_to_vec();
        assert_eq!(
            bytes,
            [0x0a, 10, 0x40, 5, 0x50, 1, 0x5a, 4, 0x48, 2, 0x58, 7]
        );
        // track_descriptor 60: tag (60 << 3) | 2 = 482, varint e2 03.
        let d = TracePacket {
            track_descriptor: Some(TrackDescriptor {
                uuid: Some(1),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(d.encode_to_vec(), [0xe2, 0x03, 2, 0x08, 1]);
    }

    #[test]
    fn the_same_calls_make_the_same_bytes() {
        let make = || {
            let mut w = TraceWriter::new();
            let t = w.thread(1, 1, "t");
            for i in 0..100u64 {
                w.slice(t, "s", i * 10, i * 10 + 10);
                w.instant(t, "i", i * 10);
            }
            w.finish()
        };
        assert_eq!(make(), make());
    }
}
