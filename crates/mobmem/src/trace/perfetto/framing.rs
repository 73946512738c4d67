//! How packets are framed: telling a packet stream from text by parsing it, and the
//! batches of packets a packet may hold deflated (`compressed_packets`, field 50).
//!
//! The tracing service writes `compressed_packets` when the trace config asks for
//! compression: a zlib stream (deflate level 6, with its header) of packets framed as
//! in the file. It never nests them, but a reader that re-frames traces may; batches
//! within batches are read down to [`MAX_COMPRESSED_DEPTH`].

use std::io::Read;

use prost::encoding::{decode_key, decode_varint, WireType};

use super::{walk, FtraceImporter, Reading, MAX_PACKET_BYTES};
use crate::trace::open::zstd_bound;
use crate::{Error, Position, Result};

/// Field of `TracePacket` holding a deflated batch of packets.
const COMPRESSED_PACKETS: u32 = 50;
/// Batches within batches read at most; deeper ones are malformed packets.
pub const MAX_COMPRESSED_DEPTH: usize = 4;
/// Most bytes one `compressed_packets` field may inflate to: a packet's own bound. The
/// service compresses what one read of its buffers returns, far less.
pub const MAX_INFLATED_BATCH: u64 = MAX_PACKET_BYTES;

/// Whether `head`, the first bytes of a (decompressed) file, parses as the start of a
/// packet stream: one or more frames of `Trace`'s field 1, each a well-formed
/// `TracePacket` as far as `head` holds it. Text does not parse so (a text line is not a
/// run of valid fields ending exactly where the next frame's tag stands), and a packet
/// of any content, known or not, does, however long it is. `complete`: `head` is the
/// whole input; then at least one frame must be whole (a short text can pass for the
/// start of one cut-off packet, a truncated trace keeps its whole frames).
pub fn is_packet_stream(head: &[u8], complete: bool) -> bool {
    let mut rest = head;
    let mut frames = 0;
    let mut whole_frames = 0;
    while !rest.is_empty() {
        let Ok((1, WireType::LengthDelimited)) = decode_key(&mut rest) else {
            return false;
        };
        let Ok(len) = decode_varint(&mut rest) else {
            // The length is cut off by the end of `head`, or not a varint.
            return frames > 0 && (!complete || whole_frames > 0);
        };
        if len > MAX_PACKET_BYTES {
            return false;
        }
        frames += 1;
        let whole = (len as usize) <= rest.len();
        let (packet, after) = rest.split_at((len as usize).min(rest.len()));
        if !fields_parse(packet, whole) {
            return false;
        }
        whole_frames += usize::from(whole);
        rest = after;
    }
    frames > 0 && (!complete || whole_frames > 0)
}

/// Whether `msg` is a run of protobuf fields; when not `whole`, the last field may be cut
/// off. Groups (wire types 3 and 4) count as not parsing: no Perfetto message has one.
fn fields_parse(mut msg: &[u8], whole: bool) -> bool {
    while !msg.is_empty() {
        let Ok((_, wire)) = decode_key(&mut msg) else {
            return !whole && msg.len() < 10;
        };
        let ok = match wire {
            WireType::Varint => match decode_varint(&mut msg) {
                Ok(_) => true,
                Err(_) => return !whole,
            },
            WireType::LengthDelimited => match decode_varint(&mut msg) {
                Ok(len) if (len as usize) <= msg.len() => {
                    msg = &msg[len as usize..];
                    true
                }
                Ok(_) | Err(_) => return !whole,
            },
            WireType::SixtyFourBit | WireType::ThirtyTwoBit => {
                let n = if wire == WireType::SixtyFourBit { 8 } else { 4 };
                if msg.len() < n {
                    return !whole;
                }
                msg = &msg[n..];
                true
            }
            WireType::StartGroup | WireType::EndGroup => false,
        };
        if !ok {
            return false;
        }
        if !whole && msg.is_empty() {
            return true;
        }
    }
    true
}

/// How much inflating the file's batches may still produce: [`zstd_bound`] of the bytes
/// read, so that a few KiB of crafted deflate cannot stand for gigabytes of packets.
#[derive(Debug, Default)]
pub(super) struct Inflated {
    /// Bytes produced by inflating, over the whole file.
    pub(super) total: u64,
}

impl Reading<'_> {
    /// Read one packet of the stream: its batches of deflated packets, each inner packet
    /// read in turn, or else the packet itself. `at` is the outer packet's byte in the
    /// file, which names every packet inside it too; `depth` counts the batches around
    /// it (0 for a packet of the file).
    pub(super) fn packet_or_batches(
        &mut self,
        packet: &[u8],
        at: u64,
        read_so_far: u64,
        inflated: &mut Inflated,
        importer: &mut FtraceImporter,
        depth: usize,
    ) -> Result<()> {
        let mut batches = walk::bytes(packet, COMPRESSED_PACKETS).peekable();
        if batches.peek().is_none() || walk::fields(packet).any(|f| f.is_err()) {
            return self.packet(packet, at, importer);
        }
        self.stats.packets += 1;
        if depth >= MAX_COMPRESSED_DEPTH {
            let expected = format!(
                "compressed_packets at most {MAX_COMPRESSED_DEPTH} deep (batches within batches)"
            );
            return self.fault(&expected, at, importer);
        }
        for batch in batches {
            self.stats.compressed_batches += 1;
            let bytes = match inflate(self.path, batch, at, read_so_far, inflated)? {
                Ok(bytes) => bytes,
                Err(why) => {
                    let expected = format!("compressed_packets that inflate ({why})");
                    self.fault(&expected, at, importer)?;
                    continue;
                }
            };
            self.stats.compressed_bytes += bytes.len() as u64;
            let mut rest = bytes.as_slice();
            while !rest.is_empty() {
                let inner = match next_frame(&mut rest) {
                    Ok(inner) => inner,
                    Err(why) => {
                        let expected = format!("compressed_packets framed as a Trace ({why})");
                        self.fault(&expected, at, importer)?;
                        break;
                    }
                };
                let Some(inner) = inner else { continue };
                self.packet_or_batches(inner, at, read_so_far, inflated, importer, depth + 1)?;
            }
        }
        Ok(())
    }
}

/// The next packet of a Trace's bytes (None for a field other than 1, skipped), or why
/// the bytes are not one.
fn next_frame<'a>(rest: &mut &'a [u8]) -> std::result::Result<Option<&'a [u8]>, String> {
    let (number, wire) = decode_key(rest).map_err(|e| e.to_string())?;
    if wire != WireType::LengthDelimited {
        return Err(format!("field {number} is not length-delimited"));
    }
    let len = decode_varint(rest).map_err(|e| e.to_string())?;
    let len = usize::try_from(len)
        .ok()
        .filter(|&l| l <= rest.len())
        .ok_or_else(|| format!("a packet claims {len} bytes, {} are left", rest.len()))?;
    let (packet, after) = rest.split_at(len);
    *rest = after;
    Ok((number == 1).then_some(packet))
}

/// Inflate one batch: the bytes, or why they are not a zlib stream (a fault of this
/// packet). An error, ending the import, when the bytes would pass [`MAX_INFLATED_BATCH`]
/// or the file's budget.
fn inflate(
    path: &std::path::Path,
    batch: &[u8],
    at: u64,
    read_so_far: u64,
    inflated: &mut Inflated,
) -> Result<std::result::Result<Vec<u8>, String>> {
    let budget = zstd_bound(read_so_far).saturating_sub(inflated.total);
    let limit = MAX_INFLATED_BATCH.min(budget);
    let mut out = Vec::new();
    let mut decoder = flate2::read::ZlibDecoder::new(batch).take(limit.saturating_add(1));
    if let Err(e) = decoder.read_to_end(&mut out) {
        return Ok(Err(e.to_string()));
    }
    inflated.total += out.len() as u64;
    if out.len() as u64 > limit {
        let which = if limit == MAX_INFLATED_BATCH {
            format!("more than a batch may hold ({MAX_INFLATED_BATCH} bytes)")
        } else {
            format!(
                "more than {limit} bytes, which with the batches before passes what \
                 {read_so_far} bytes of trace may stand for"
            )
        };
        return Err(Error::format(
            path,
            Position::Byte(at),
            format!("the compressed_packets of this packet inflate to {which}"),
        ));
    }
    Ok(Ok(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(packet: &[u8]) -> Vec<u8> {
        let mut out = vec![0x0a];
        prost::encoding::encode_varint(packet.len() as u64, &mut out);
        out.extend_from_slice(packet);
        out
    }

    #[test]
    fn packet_streams_are_told_from_text_by_parsing() {
        // Text, also text that starts with a line break (0x0a, the frame's tag).
        for text in [
            &b"# tracer: nop\n#\n# entries-in-buffer/entries-written: 15/22   #P:2\n"[..],
            b"\n# tracer: nop\n#\n#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n",
            b"          <idle>-0     [000] d..2.   100.000100: sched_switch: prev_comm=swapper",
            b"",
        ] {
            assert!(
                !is_packet_stream(text, true),
                "{:?}",
                String::from_utf8_lossy(text)
            );
        }
        // A packet of a timestamp (field 8) and a nested unknown field, whole, then cut
        // anywhere.
        let mut nested = vec![0x9a, 0x01, 3, 0x0a, 1, b'x'];
        nested.extend_from_slice(&[0x40, 0x80, 0x01]);
        let stream = [frame(&nested), frame(&[0x40, 7])].concat();
        // (From the tag and a length on: one byte 0x0a alone says nothing.)
        for end in 2..=stream.len() {
            assert!(is_packet_stream(&stream[..end], false), "cut at {end}");
        }
        // As a whole input, only with its first frame whole.
        let first = frame(&nested).len();
        for end in 1..=stream.len() {
            assert_eq!(
                is_packet_stream(&stream[..end], true),
                end >= first,
                "cut at {end}"
            );
        }
        // A group, or a tag that is not field 1's, is not a packet stream.
        assert!(!is_packet_stream(&frame(&[0x0b, 0x0c]), false));
        assert!(!is_packet_stream(&[0x12, 2, 0x40, 1], false));
    }

    #[test]
    fn frames_of_a_batch_are_read_in_order_and_other_fields_skipped() {
        let bytes = [frame(&[0x40, 1]), vec![0x12, 1, 0], frame(&[0x40, 2])].concat();
        let mut rest = bytes.as_slice();
        let mut seen = Vec::new();
        while !rest.is_empty() {
            seen.push(next_frame(&mut rest).unwrap());
        }
        assert_eq!(seen, vec![Some(&[0x40, 1][..]), None, Some(&[0x40, 2][..])]);
        let mut cut = &frame(&[0x40, 1])[..3];
        assert!(next_frame(&mut cut)
            .unwrap_err()
            .contains("claims 2 bytes, 1 are left"));
    }
}
