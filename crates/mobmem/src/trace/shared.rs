//! Pieces shared by the format readers and writers.

use std::fs::File;
use std::io::{self, BufRead, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use crate::{Error, Position, Result};

/// Longest line the text readers take (`.lis`, ftrace text), in bytes with its line
/// break; the CSV reader has the same bound on a record (`csv::MAX_RECORD_BYTES`). A
/// longer line (a file that is not text of that format, `/dev/zero`) is an error naming
/// it, so that one line cannot take memory without bound.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Accesses that the lines of a text trace may expand to (a `.lis` line's block count, an
/// ftrace event's range of pages) without regard to the input's size.
///
/// Smaller in the fuzz driver (`cfg(fuzzing)`, set by cargo fuzz), where the same
/// checks then refuse an input at a few thousand accesses instead of expanding a million
/// for each: inputs run about 100 times faster and the bound's code paths are the same.
pub const EXPANSION_ALLOWANCE: u64 = if cfg!(fuzzing) { 1 << 12 } else { 1 << 20 };
/// Beyond [`EXPANSION_ALLOWANCE`], accesses that lines may expand to per byte of the input
/// read, as stored (compressed bytes for a zstd file): a trace of real requests expands to
/// a few per byte, a crafted line of huge counts to millions. So memory and time follow
/// the input's size. Smaller in the fuzz driver, as the allowance.
pub const EXPANSION_PER_BYTE: u64 = if cfg!(fuzzing) { 8 } else { 64 };

/// How many bytes of the input, as stored, have been read: the text's own count for a
/// plain file, the compressed bytes taken by the decoder for a zstd file (shared with
/// it). Expansion is bounded by stored bytes, so a small compressed file of huge
/// repeated counts cannot ask for more than a plain one of the same size.
#[derive(Debug, Clone, Default)]
pub(crate) struct StoredBytes(Option<std::sync::Arc<std::sync::atomic::AtomicU64>>);

impl StoredBytes {
    pub(crate) fn compressed(counter: std::sync::Arc<std::sync::atomic::AtomicU64>) -> Self {
        StoredBytes(Some(counter))
    }

    /// Stored bytes read, given `text_bytes` of (decompressed) text read.
    pub(crate) fn of(&self, text_bytes: u64) -> u64 {
        match &self.0 {
            Some(counter) => counter
                .load(std::sync::atomic::Ordering::Relaxed)
                .min(text_bytes),
            None => text_bytes,
        }
    }
}

/// How many accesses the lines read so far expanded to, against the bound of
/// [`EXPANSION_ALLOWANCE`] + [`EXPANSION_PER_BYTE`] per byte read.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Expansion {
    total: u64,
}

impl Expansion {
    /// Count `accesses` more, with `bytes` of text read so far (the current line
    /// included). `Err` carries the bound they would pass.
    pub(crate) fn take(&mut self, accesses: u64, bytes: u64) -> std::result::Result<(), u64> {
        let bound = EXPANSION_ALLOWANCE.saturating_add(bytes.saturating_mul(EXPANSION_PER_BYTE));
        let total = self.total.saturating_add(accesses);
        if total > bound {
            return Err(bound);
        }
        self.total = total;
        Ok(())
    }
}

/// What [`read_line`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineRead {
    /// The input has no more bytes; the buffer is empty.
    End,
    /// A whole line, with its line break unless it is the last line and has none.
    Line,
    /// No line break within the limit: the buffer holds the line's first bytes and the
    /// rest of the line is still unread.
    TooLong,
}

/// The little-endian `u32` of `bytes`, which MUST be 4 bytes long.
#[inline]
pub(crate) fn le_u32(bytes: &[u8]) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(bytes);
    u32::from_le_bytes(word)
}

/// The little-endian `u64` of `bytes`, which MUST be 8 bytes long.
#[inline]
pub(crate) fn le_u64(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(bytes);
    u64::from_le_bytes(word)
}

/// Where [`through_line`] stopped.
enum Stop {
    /// After a line break.
    LineBreak,
    /// At the end of the input.
    End,
    /// At the limit, with more input to come (or not yet known).
    Limit,
}

/// Consume `input` up to and including its next line break, at most `limit` bytes,
/// handing each run of bytes taken to `keep`. Returns the bytes taken and where it
/// stopped.
fn through_line<R: BufRead + ?Sized>(
    input: &mut R,
    limit: usize,
    mut keep: impl FnMut(&[u8]),
) -> io::Result<(usize, Stop)> {
    let mut taken = 0;
    loop {
        let available = match input.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok((taken, Stop::End));
        }
        let room = &available[..available.len().min(limit - taken)];
        let (take, ended) = match memchr::memchr(b'\n', room) {
            Some(i) => (i + 1, true),
            None => (room.len(), false),
        };
        keep(&room[..take]);
        input.consume(take);
        taken += take;
        if ended {
            return Ok((taken, Stop::LineBreak));
        }
        if taken >= limit {
            return Ok((taken, Stop::Limit));
        }
    }
}

/// Read the next line of `input` into `buf` (cleared first), at most `max` bytes with its
/// line break, so that a line without end cannot take memory without bound.
pub(crate) fn read_line<R: BufRead + ?Sized>(
    input: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<LineRead> {
    buf.clear();
    let line = match through_line(input, max, |run| buf.extend_from_slice(run))? {
        (_, Stop::LineBreak) => LineRead::Line,
        (0, Stop::End) => LineRead::End,
        (_, Stop::End) => LineRead::Line,
        // A last line of exactly `max` bytes, without a line break, is whole.
        (_, Stop::Limit) => match through_line(input, 0, |_| {})? {
            (_, Stop::End) => LineRead::Line,
            _ => LineRead::TooLong,
        },
    };
    Ok(line)
}

/// Lines of an input read a block at a time and handed out in place, without a copy a
/// line: for the readers whose lines are short and many (column-mapped text traces).
/// Same lines as [`read_line`]: at most `max` bytes with the line break, a last line
/// without one included.
#[derive(Debug, Default)]
pub(crate) struct LineBlock {
    data: Vec<u8>,
    /// The unread bytes are `data[start..end]`.
    start: usize,
    end: usize,
    /// The current line, with its line break when it has one.
    line: (usize, usize),
    at_end: bool,
}

/// Bytes asked of the input a read: as a 256 KiB `BufReader` asks.
const BLOCK_READ_BYTES: usize = 1 << 18;

impl LineBlock {
    /// The line the last [`LineBlock::next`] found.
    #[inline]
    pub(crate) fn line(&self) -> &[u8] {
        &self.data[self.line.0..self.line.1]
    }

    /// Move to the next line of `input`, at most `max` bytes with its line break.
    #[inline]
    pub(crate) fn next(&mut self, input: &mut dyn Read, max: usize) -> io::Result<LineRead> {
        loop {
            let unread = &self.data[self.start..self.end];
            let room = &unread[..unread.len().min(max)];
            if let Some(i) = memchr::memchr(b'\n', room) {
                self.line = (self.start, self.start + i + 1);
                self.start += i + 1;
                return Ok(LineRead::Line);
            }
            if unread.len() > max {
                return Ok(LineRead::TooLong);
            }
            if self.at_end {
                if unread.is_empty() {
                    return Ok(LineRead::End);
                }
                self.line = (self.start, self.end);
                self.start = self.end;
                return Ok(LineRead::Line);
            }
            self.fill(input, max)?;
        }
    }

    /// Move the unread bytes to the front and read more after them (or find the end).
    #[cold]
    fn fill(&mut self, input: &mut dyn Read, max: usize) -> io::Result<()> {
        if self.data.is_empty() {
            // Room for a longest line and one byte more (to tell it is too long), plus a
            // read's worth.
            self.data = vec![0; max + 1 + BLOCK_READ_BYTES];
        }
        self.data.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        let stop = (self.end + BLOCK_READ_BYTES).min(self.data.len());
        loop {
            match input.read(&mut self.data[self.end..stop]) {
                Ok(0) => {
                    self.at_end = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// Pass over the rest of a line [`read_line`] found too long, up to and including its line
/// break, without keeping it. Returns the bytes passed over.
pub(crate) fn skip_line<R: BufRead + ?Sized>(input: &mut R) -> io::Result<u64> {
    let (skipped, _) = through_line(input, usize::MAX, |_| {})?;
    Ok(skipped as u64)
}

/// The error for a line longer than [`MAX_LINE_BYTES`]; `expected` says what a line holds.
pub(crate) fn line_too_long(path: &Path, line: u64, expected: &str) -> Error {
    Error::format(
        path,
        Position::Line(line),
        format!("a line longer than {MAX_LINE_BYTES} bytes, expected {expected}"),
    )
}

/// The error for an input that holds no events: every format reports an empty file (no
/// byte at all, after decompression) with it; `what` names the format expected.
pub(crate) fn empty_input(path: &Path, what: &str) -> Error {
    Error::format(
        path,
        Position::Byte(0),
        format!("empty file: it holds no events (expected {what})"),
    )
}

/// Read into `buf` until it is full or the input ends; returns the bytes read. Unlike
/// `read_exact`, a short count tells the caller exactly where the input stopped.
pub(crate) fn read_up_to(input: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match input.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// A file written under a temporary name next to its target (`NAME.partial`) and renamed
/// into place only by [`PartialFile::commit`], so that a crash or an error never leaves a
/// half-written file under the target's name. [`PartialFile::keep`] leaves it under the
/// temporary name; dropped without either, the temporary file is removed. Written
/// through [`Write`], buffered.
pub struct PartialFile {
    target: PathBuf,
    temp: PathBuf,
    out: Option<BufWriter<File>>,
}

impl PartialFile {
    /// Opens a fresh temporary file beside `target`, created exclusively: a link or an
    /// earlier cut-short output at `NAME.partial` is left alone and the next free name
    /// (`NAME.partial-2`, ...) is taken.
    pub fn create(target: &Path) -> Result<PartialFile> {
        let (temp, file) = crate::output::create_temp_file(target)?;
        Ok(PartialFile {
            target: target.to_path_buf(),
            temp,
            out: Some(BufWriter::with_capacity(1 << 20, file)),
        })
    }

    /// Where the data goes until the commit.
    pub fn temp_path(&self) -> &Path {
        &self.temp
    }

    pub fn target_path(&self) -> &Path {
        &self.target
    }

    /// The open file; only `commit` and `keep`, which consume `self`, close it.
    pub(crate) fn writer(&mut self) -> io::Result<&mut BufWriter<File>> {
        self.out
            .as_mut()
            .ok_or_else(|| io::Error::other("the file was already closed"))
    }

    /// Turns an I/O error on the temporary file into an error naming it.
    pub(crate) fn io_error(&self, e: io::Error) -> Error {
        Error::io(&self.temp, e)
    }

    /// Flush and rename into place. The target was named by the user as the output: a
    /// regular file there is replaced; a link, a folder or a special file is refused.
    pub fn commit(mut self) -> Result<()> {
        // Closed before the rename, which some systems refuse on an open file.
        self.close()?;
        crate::output::put_in_place(
            &self.temp,
            &self.target,
            crate::output::any_file,
            crate::output::Existing::Refuse,
        )?;
        // Renamed: there is nothing left for `drop` to clean up.
        self.temp = PathBuf::new();
        Ok(())
    }

    /// Flush and leave the data under the temporary name (an output cut short, kept to be
    /// looked at); returns that name.
    pub fn keep(mut self) -> Result<PathBuf> {
        self.close()?;
        // Kept: `drop` must not remove it.
        Ok(std::mem::take(&mut self.temp))
    }

    fn close(&mut self) -> Result<()> {
        if let Some(out) = self.out.take() {
            let file = out
                .into_inner()
                .map_err(|e| Error::io(&self.temp, e.into_error()))?;
            drop(file);
        }
        Ok(())
    }
}

impl Drop for PartialFile {
    fn drop(&mut self) {
        if !self.temp.as_os_str().is_empty() {
            drop(self.out.take());
            // Best effort: the file may already be gone, and drop cannot report errors.
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

impl Write for PartialFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer()?.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.writer()?.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer()?.flush()
    }
}

/// A decimal integer of digits only (no sign, fraction or exponent); `None` on overflow.
pub(crate) fn parse_u64(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    // Nineteen digits are below 10^19 < 2^64: no step can overflow, so the common case
    // skips the checked arithmetic.
    if digits.len() <= 19 {
        let mut value = 0u64;
        for &b in digits {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            value = value * 10 + u64::from(d);
        }
        return Some(value);
    }
    digits.iter().try_fold(0u64, |value, &b| {
        if b.is_ascii_digit() {
            value.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What is in `dir`, by name and contents.
    fn files(dir: &Path) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let path = e.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read_to_string(&path).unwrap())
            })
            .collect();
        out.sort();
        out
    }

    /// Lines of `text` read with at most `max` bytes each, as (kind, bytes) pairs.
    fn lines(text: &[u8], max: usize, chunk: usize) -> Vec<(LineRead, Vec<u8>)> {
        let mut input = io::BufReader::with_capacity(chunk, text);
        let mut out = Vec::new();
        let mut buf = Vec::new();
        loop {
            let read = read_line(&mut input, &mut buf, max).unwrap();
            if read == LineRead::End {
                return out;
            }
            out.push((read, buf.clone()));
            if read == LineRead::TooLong {
                skip_line(&mut input).unwrap();
            }
        }
    }

    #[test]
    fn lines_are_read_up_to_their_bound() {
        use LineRead::{Line, TooLong};
        let v = |s: &str| s.as_bytes().to_vec();
        for chunk in [1, 2, 3, 64] {
            assert_eq!(
                lines(b"ab\nabcd\nabcde\nx\nabcd", 5, chunk),
                vec![
                    (Line, v("ab\n")),
                    (Line, v("abcd\n")),
                    (TooLong, v("abcde")),
                    (Line, v("x\n")),
                    (Line, v("abcd")),
                ],
                "chunk {chunk}"
            );
            // A last line of exactly the bound, without a line break, is whole.
            assert_eq!(lines(b"abcde", 5, chunk), vec![(Line, v("abcde"))]);
            assert_eq!(lines(b"abcdef", 5, chunk), vec![(TooLong, v("abcde"))]);
            assert!(lines(b"", 5, chunk).is_empty());
        }
    }

    /// An input that hands out at most `step` bytes a read.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.step).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    proptest::proptest! {
        /// A block of lines hands out the lines `read_line` reads, up to the first line
        /// too long (where both stop), however the input's reads are cut.
        #[test]
        fn line_blocks_give_the_lines_read_line_gives(
            text in proptest::collection::vec(
                proptest::sample::select(vec![b'a', b'b', b'\n', b'\r', b',']), 0..300),
            max in 1usize..24,
            step in 1usize..40,
        ) {
            let mut expected = lines(&text, max, 7);
            if let Some(i) = expected.iter().position(|(read, _)| *read == LineRead::TooLong) {
                expected.truncate(i + 1);
                expected[i].1.clear();
            }
            let mut input = Trickle { data: &text, step };
            let mut block = LineBlock::default();
            let mut got = Vec::new();
            loop {
                match block.next(&mut input, max).unwrap() {
                    LineRead::End => break,
                    LineRead::TooLong => {
                        got.push((LineRead::TooLong, Vec::new()));
                        break;
                    }
                    LineRead::Line => got.push((LineRead::Line, block.line().to_vec())),
                }
            }
            proptest::prop_assert_eq!(got, expected);
        }
    }

    #[test]
    fn expansion_is_bounded_by_the_bytes_read() {
        let mut expansion = Expansion::default();
        assert_eq!(expansion.take(EXPANSION_ALLOWANCE, 0), Ok(()));
        assert_eq!(expansion.take(1, 0), Err(EXPANSION_ALLOWANCE));
        assert_eq!(expansion.take(EXPANSION_PER_BYTE, 1), Ok(()));
        assert_eq!(
            expansion.take(u64::MAX, 1),
            Err(EXPANSION_ALLOWANCE + EXPANSION_PER_BYTE)
        );
    }

    #[test]
    fn partial_file_commits_keeps_or_removes() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.txt");
        let pair = |name: &str, text: &str| (name.to_string(), text.to_string());

        let mut file = PartialFile::create(&target).unwrap();
        file.write_all(b"dropped").unwrap();
        drop(file);
        assert!(files(dir.path()).is_empty());

        let mut file = PartialFile::create(&target).unwrap();
        file.write_all(b"kept").unwrap();
        assert_eq!(file.keep().unwrap(), dir.path().join("out.txt.partial"));
        assert_eq!(files(dir.path()), vec![pair("out.txt.partial", "kept")]);

        // The kept output of an earlier run stays; the next free name is taken.
        let mut file = PartialFile::create(&target).unwrap();
        assert_eq!(file.temp_path(), dir.path().join("out.txt.partial-2"));
        file.write_all(b"whole").unwrap();
        file.commit().unwrap();
        assert_eq!(
            files(dir.path()),
            vec![pair("out.txt", "whole"), pair("out.txt.partial", "kept")]
        );
    }

    #[test]
    fn a_link_at_the_temporary_name_or_the_target_is_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let target = dir.path().join("out.txt");
        std::os::unix::fs::symlink(&victim, dir.path().join("out.txt.partial")).unwrap();
        let mut file = PartialFile::create(&target).unwrap();
        file.write_all(b"new").unwrap();
        file.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        std::os::unix::fs::symlink(&victim, dir.path().join("link.txt")).unwrap();
        let mut file = PartialFile::create(&dir.path().join("link.txt")).unwrap();
        file.write_all(b"new").unwrap();
        let e = file.commit().unwrap_err();
        assert!(e.to_string().contains("not mobmem's own"), "{e}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    }
}
