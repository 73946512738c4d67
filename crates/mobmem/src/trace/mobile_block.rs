//! Block I/O traces of real apps on a Pixel 6a (the public MobileBlockIOTraces of
//! "Space-efficient FTL for Mobile Storage via Tiny Neural Nets", SYSTOR 2024), read
//! only: `--format mobile-block`.
//!
//! A CSV file (often gzipped) with the header `proces,device,rw_flag,sector,size,timestamp`
//! (the first column is spelled so), then one block request a line:
//! - `proces`: `comm-tid` as the kernel's trace prints it (`<...>-21515` where the name
//!   was not known), or a name alone;
//! - `device`: the block device number; `rw_flag`: `R` or `W`;
//! - `sector`, `size`: start and length in 512-byte sectors;
//! - `timestamp`: seconds, with a fraction (rounded to nanoseconds).
//!
//! A request becomes one access per 4 KiB page it covers, from `sector*512/4096` through
//! `((sector+size)*512-1)/4096`, in file order: page `PageKey::file(device, page)`, a
//! write for `W`. Each distinct `proces` text is one process, its pid the tid (0 for a
//! name alone) and its name the comm (empty for `<...>`). Times are nanoseconds after the
//! first request, kept from going backwards (a request stamped before the one above it
//! takes that one's time).
//!
//! Limits: a line of at most [`MAX_LINE_BYTES`](super::MAX_LINE_BYTES), at most
//! [`MAX_SECTORS_PER_REQUEST`] sectors a request, and the pages of the whole file bounded
//! by its size as for `.lis` ([`EXPANSION_ALLOWANCE`](super::EXPANSION_ALLOWANCE) plus
//! [`EXPANSION_PER_BYTE`](super::EXPANSION_PER_BYTE) a byte, as stored).

use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use hashbrown::HashMap;

use super::shared::{
    empty_input, line_too_long, parse_u64, read_line, Expansion, LineRead, StoredBytes,
    EXPANSION_ALLOWANCE, EXPANSION_PER_BYTE, MAX_LINE_BYTES,
};
use super::{Event, EventSource, Interner, PageKey, ProcId, Tables};
use crate::{Error, Position, Result};

/// The header line of the layout.
pub const HEADER: &str = "proces,device,rw_flag,sector,size,timestamp";
/// Most sectors one request may cover: 2^21 (1 GiB). The kernel splits block requests far
/// smaller (a few MiB at most).
pub const MAX_SECTORS_PER_REQUEST: u64 = 1 << 21;

/// Most digits after a timestamp's point (a float printed in full has about 17).
const MAX_FRACTION_DIGITS: usize = 32;
const SECTOR_BYTES: u64 = 512;
const PAGE_BYTES: u64 = 4096;
const EXPECTED_LINE: &str =
    "`proces,device,rw_flag,sector,size,timestamp` (R or W; integers but the time)";

pub struct Reader {
    path: PathBuf,
    input: BufReader<Box<dyn Read + Send>>,
    line: Vec<u8>,
    /// 1-based number of the current line.
    line_number: u64,
    interner: Interner,
    /// The process of each `proces` text seen.
    processes: HashMap<Vec<u8>, ProcId, foldhash::fast::FixedState>,
    /// The current request's pages not yet returned.
    device: u64,
    next_page: u64,
    pages_left: u64,
    write: bool,
    proc: ProcId,
    time_ns: u64,
    /// Time of the first request, ns.
    first_ns: Option<u64>,
    bytes_read: u64,
    accesses: Expansion,
    stored: StoredBytes,
}

impl Reader {
    /// Check the header line; requests are read by `read_batch`.
    pub(crate) fn with_stored(
        path: &Path,
        input: Box<dyn Read + Send>,
        stored: StoredBytes,
    ) -> Result<Self> {
        let mut reader = Reader {
            path: path.to_path_buf(),
            input: BufReader::with_capacity(1 << 18, input),
            line: Vec::new(),
            line_number: 0,
            interner: Interner::new(),
            processes: HashMap::default(),
            device: 0,
            next_page: 0,
            pages_left: 0,
            write: false,
            proc: 0,
            time_ns: 0,
            first_ns: None,
            bytes_read: 0,
            accesses: Expansion::default(),
            stored,
        };
        if !reader.read_next()? {
            return Err(empty_input(path, "a Pixel 6a block trace (mobile-block)"));
        }
        if trim(&reader.line) != HEADER.as_bytes() {
            return Err(reader.malformed(&format!("expected the header line `{HEADER}`")));
        }
        Ok(reader)
    }

    /// The next line into `self.line`; `false` at the end.
    fn read_next(&mut self) -> Result<bool> {
        match read_line(&mut self.input, &mut self.line, MAX_LINE_BYTES)
            .map_err(|e| Error::io(&self.path, e))?
        {
            LineRead::End => Ok(false),
            LineRead::TooLong => Err(line_too_long(
                &self.path,
                self.line_number + 1,
                EXPECTED_LINE,
            )),
            LineRead::Line => {
                self.line_number += 1;
                self.bytes_read += self.line.len() as u64;
                Ok(true)
            }
        }
    }

    /// Read and parse the next request; `false` at the end of the input.
    fn next_request(&mut self) -> Result<bool> {
        loop {
            if !self.read_next()? {
                return Ok(false);
            }
            if !trim(&self.line).is_empty() {
                break;
            }
        }
        let line = std::mem::take(&mut self.line);
        let parsed = self.parse(trim(&line));
        self.line = line;
        parsed.map(|()| true)
    }

    fn parse(&mut self, line: &[u8]) -> Result<()> {
        // Split into six fields without allocating: this runs once a request.
        let mut fields = [&b""[..]; 6];
        let mut count = 0;
        for field in line.split(|&b| b == b',') {
            if let Some(slot) = fields.get_mut(count) {
                *slot = field;
            }
            count += 1;
        }
        if count != 6 {
            return Err(self.malformed(&format!("{count} fields, expected 6: {EXPECTED_LINE}")));
        }
        let [proces, device, rw, sector, size, time] = fields;
        let number = |what: &str, digits: &[u8]| {
            parse_u64(digits).ok_or_else(|| {
                format!(
                    "`{what}` is `{}`, expected a non-negative integer",
                    String::from_utf8_lossy(digits)
                )
            })
        };
        let (device, sector, size) = match (
            number("device", device),
            number("sector", sector),
            number("size", size),
        ) {
            (Ok(d), Ok(s), Ok(n)) => (d, s, n),
            (Err(e), ..) | (_, Err(e), _) | (.., Err(e)) => return Err(self.malformed(&e)),
        };
        let write = match rw {
            b"R" => false,
            b"W" => true,
            other => {
                return Err(self.malformed(&format!(
                    "`rw_flag` is `{}`, expected R or W",
                    String::from_utf8_lossy(other)
                )))
            }
        };
        let Some(time_ns) = seconds_to_ns(time) else {
            return Err(self.malformed(&format!(
                "`timestamp` is `{}`, expected seconds (digits, a point and at most {MAX_FRACTION_DIGITS} decimals)",
                String::from_utf8_lossy(time)
            )));
        };
        if size > MAX_SECTORS_PER_REQUEST {
            return Err(self.malformed(&format!(
                "`size` is {size} sectors, expected at most {MAX_SECTORS_PER_REQUEST}"
            )));
        }
        // Bytes sector*512 .. (sector+size)*512 - 1, in whole pages.
        let bytes = sector
            .checked_add(size)
            .and_then(|end| end.checked_mul(SECTOR_BYTES))
            .map(|end| (sector * SECTOR_BYTES, end));
        let Some((start, end)) = bytes else {
            return Err(self.malformed("`sector` + `size` passes 64-bit bytes"));
        };
        let (first, end) = if size == 0 {
            (0, 0)
        } else {
            (start / PAGE_BYTES, (end - 1) / PAGE_BYTES + 1)
        };
        let pages = end - first;
        let stored = self.stored.of(self.bytes_read);
        if let Err(bound) = self.accesses.take(pages, stored) {
            return Err(self.malformed(&format!(
                "this request takes the file past {bound} page accesses, the most its first \
                 {stored} bytes (as stored) may ask for ({EXPANSION_ALLOWANCE} plus \
                 {EXPANSION_PER_BYTE} a byte): expected the requests of a real trace"
            )));
        }
        self.proc = self.process(proces)?;
        let first_ns = *self.first_ns.get_or_insert(time_ns);
        self.time_ns = self.time_ns.max(time_ns.saturating_sub(first_ns));
        self.device = device;
        self.next_page = first;
        self.pages_left = pages;
        self.write = write;
        Ok(())
    }

    /// The process of a `proces` field: `comm-tid`, or a name alone.
    fn process(&mut self, proces: &[u8]) -> Result<ProcId> {
        if let Some(&id) = self.processes.get(proces) {
            return Ok(id);
        }
        let text = String::from_utf8_lossy(proces);
        let (comm, tid) = match text.rsplit_once('-') {
            Some((comm, tid)) if !tid.is_empty() && tid.bytes().all(|b| b.is_ascii_digit()) => {
                (comm, tid.parse::<u32>().ok())
            }
            _ => (&*text, None),
        };
        let tid = tid.unwrap_or(0);
        let name = if comm == "<...>" { "" } else { comm };
        let id = self
            .interner
            .start_process(tid, name)
            .ok_or_else(|| self.malformed("more processes than the trace format's ids"))?;
        self.processes.insert(proces.to_vec(), id);
        Ok(id)
    }

    #[cold]
    fn malformed(&self, message: &str) -> Error {
        Error::format(&self.path, Position::Line(self.line_number), message)
    }
}

/// Nanoseconds of a decimal number of seconds (`653406.907265`), rounded to the
/// nanosecond: the files hold times printed from floats (`48750.608267999996`).
fn seconds_to_ns(text: &[u8]) -> Option<u64> {
    let (whole, fraction) = match text.iter().position(|&b| b == b'.') {
        Some(dot) => (&text[..dot], &text[dot + 1..]),
        None => (text, &b""[..]),
    };
    if fraction.len() > MAX_FRACTION_DIGITS || !fraction.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut ns = parse_u64(whole)?.checked_mul(1_000_000_000)?;
    let mut scale = 100_000_000;
    for &digit in fraction.iter().take(9) {
        ns = ns.checked_add(u64::from(digit - b'0') * scale)?;
        scale /= 10;
    }
    if fraction.get(9).is_some_and(|&d| d >= b'5') {
        ns = ns.checked_add(1)?;
    }
    Some(ns)
}

fn trim(bytes: &[u8]) -> &[u8] {
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    &bytes[..end]
}

impl EventSource for Reader {
    fn read_batch(&mut self, buf: &mut Vec<Event>, max: usize) -> Result<bool> {
        buf.clear();
        let max = max.max(1);
        while buf.len() < max {
            if self.pages_left == 0 {
                if self.next_request()? {
                    continue;
                }
                break;
            }
            let key = PageKey::file(self.device, self.next_page);
            let Some(page) = self.interner.page(key) else {
                return Err(self.malformed("more distinct pages than the 2^32 - 1 page ids"));
            };
            buf.push(Event::access(
                self.time_ns,
                self.proc,
                page,
                self.write,
                false,
            ));
            self.next_page += 1;
            self.pages_left -= 1;
        }
        if buf.is_empty() && self.interner.tables().pages.is_empty() {
            return Err(Error::format(
                &self.path,
                Position::Line(self.line_number),
                format!("no request covers a page: the file holds no events (expected {EXPECTED_LINE} lines after the header)"),
            ));
        }
        Ok(!buf.is_empty())
    }

    /// The tables of the requests read so far.
    fn tables(&mut self) -> Result<Tables> {
        Ok(self.interner.tables().clone())
    }

    /// Nothing follows the requests, whose reading checked the whole input.
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<(Vec<Event>, Tables)> {
        let mut r = Reader::with_stored(
            Path::new("t.csv"),
            Box::new(std::io::Cursor::new(text.as_bytes().to_vec())),
            StoredBytes::default(),
        )?;
        let mut events = Vec::new();
        let mut batch = Vec::new();
        while r.read_batch(&mut batch, 3)? {
            events.extend_from_slice(&batch);
        }
        Ok((events, r.tables()?))
    }

    /// Worked by hand: sector 7, 2 sectors is bytes 3584..4607, pages 0 and 1; sector 8,
    /// 8 sectors is page 1 alone; 16 sectors from sector 16 are pages 2 and 3.
    #[test]
    fn requests_expand_into_the_pages_they_cover() {
        let (events, tables) = read(
            "proces,device,rw_flag,sector,size,timestamp\n\
             loop40-2757,5,R,7,2,100.5\n\
             <...>-21515,5,W,8,8,100.0000000014999\n\
             PoolThread,6,R,16,16,101.0000000005\n",
        )
        .unwrap();
        let got: Vec<(u64, u32, PageKey, bool)> = events
            .iter()
            .map(|e| {
                (
                    e.time_ns(),
                    e.proc(),
                    tables.pages[e.page() as usize],
                    e.is_write(),
                )
            })
            .collect();
        let f = PageKey::file;
        assert_eq!(
            got,
            vec![
                (0, 0, f(5, 0), false),
                (0, 0, f(5, 1), false),
                // Stamped before the line above: that line's time.
                (0, 1, f(5, 1), true),
                (500_000_001, 2, f(6, 2), false),
                (500_000_001, 2, f(6, 3), false),
            ]
        );
        let procs: Vec<(u32, &str)> = tables
            .processes
            .iter()
            .map(|p| (p.pid, p.name.as_str()))
            .collect();
        assert_eq!(
            procs,
            vec![(2757, "loop40"), (21515, ""), (0, "PoolThread")]
        );
    }

    #[test]
    fn bad_lines_name_the_line_and_what_was_expected() {
        let header = "proces,device,rw_flag,sector,size,timestamp\n";
        for (body, expected) in [
            (
                "a-1,5,X,7,2,1.0\n",
                "line 2: `rw_flag` is `X`, expected R or W",
            ),
            ("a-1,5,R,-7,2,1.0\n", "line 2: `sector` is `-7`"),
            ("a-1,5,R,7,2\n", "line 2: 5 fields, expected 6"),
            ("a-1,5,R,7,2,1.5e3\n", "expected seconds (digits"),
            ("a-1,5,R,7,99999999,1\n", "expected at most 2097152"),
            ("a-1,5,R,36028797018963968,1,1\n", "passes 64-bit bytes"),
            ("a-1,5,R,7,0,1\n", "no request covers a page"),
        ] {
            let message = read(&format!("{header}{body}")).unwrap_err().to_string();
            assert!(message.contains(expected), "{body:?}: {message}");
        }
        let message = read("time_ns,pid\n").unwrap_err().to_string();
        assert!(
            message.contains("line 1: expected the header line"),
            "{message}"
        );
        assert!(read("").unwrap_err().to_string().contains("empty"));
    }
}
