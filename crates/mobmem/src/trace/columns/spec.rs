//! The column spec of a text trace: which column holds what, in the key=value words of
//! libCacheSim's `-t` trace parameters where libCacheSim has a word for it (`time-col`,
//! `obj-id-col`, `obj-size-col`, `delimiter`, `has-header`, `obj-id-is-num`), and in
//! words of the same shape for what a block trace adds (`offset-col`, `length-col`,
//! `op-col`, `pid-col`, `process-col`, `device-col`, `keep-col`).
//!
//! The presets are spec texts too ([`PRESETS`]), so a preset and a hand-written spec are
//! read by the same code, and a preset with keys after it (`--format msr --columns
//! has-header=true`) is the preset with those keys changed.

use std::fmt;

use crate::{Error, Result};

/// A column: its 1-based number, or its name in the header line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Column {
    Number(usize),
    Name(String),
}

impl fmt::Display for Column {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Column::Number(n) => write!(f, "{n}"),
            Column::Name(name) => f.write_str(name),
        }
    }
}

/// What separates the fields of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delimiter {
    /// One byte; two in a row make an empty field.
    Byte(u8),
    /// Runs of spaces and tabs; leading ones are ignored.
    Whitespace,
}

/// The unit of a time column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    Ns,
    Us,
    Ms,
    S,
    /// Windows FILETIME: 100 ns ticks (the MSR Cambridge traces).
    Filetime,
}

impl TimeUnit {
    const ALL: [(&'static str, TimeUnit); 5] = [
        ("ns", TimeUnit::Ns),
        ("us", TimeUnit::Us),
        ("ms", TimeUnit::Ms),
        ("s", TimeUnit::S),
        ("filetime", TimeUnit::Filetime),
    ];

    /// Nanoseconds in one unit.
    pub fn ns(self) -> u64 {
        match self {
            TimeUnit::Ns => 1,
            TimeUnit::Us => 1_000,
            TimeUnit::Ms => 1_000_000,
            TimeUnit::S => 1_000_000_000,
            TimeUnit::Filetime => 100,
        }
    }

    fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, u)| *u == self)
            .map_or("", |(n, _)| n)
    }
}

/// How the operation column says read or write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpForm {
    /// The value is one of these spellings (any other is an error).
    Spellings {
        reads: Vec<String>,
        writes: Vec<String>,
    },
    /// The kernel's RWBS letters (blktrace): a `W` makes a write, else an `R` a read; a
    /// request with neither (a flush `F`, a discard `D`, `N`) moves no data and is
    /// passed over.
    Rwbs,
}

/// How the process column names a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessForm {
    /// A name (surrounding `[` `]` removed, as blkparse prints it).
    Name,
    /// `comm-tid` as the kernel's trace prints a task (`<...>` for an unknown comm).
    CommTid,
}

/// Where a line's data lives: an object and its size, or a block range of a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    /// One access of one object a line.
    Object {
        id: Column,
        /// Ids are decimal integers (`true`), or any text, each distinct text one object.
        id_is_num: bool,
        /// Bytes of the object, for byte capacities.
        size: Option<Column>,
    },
    /// One access per 4 KiB page the range covers.
    Block {
        offset: Column,
        /// Bytes in one unit of the offset.
        offset_unit: u64,
        /// The length; without it a request is one unit long.
        length: Option<Column>,
        /// Bytes in one unit of the length (the offset's unit unless given).
        length_unit: Option<u64>,
    },
}

/// A parsed column spec. Built by [`ColumnSpec::parse`] (or from a preset); checked for
/// completeness when a reader resolves it against a file's header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnSpec {
    /// The preset it started from, if any.
    pub preset: Option<&'static str>,
    /// The keys as written after the preset (or alone), for messages and Display.
    pub text: String,
    pub delimiter: Delimiter,
    pub has_header: bool,
    /// Lines starting with this byte (after leading blanks) are passed over.
    pub comment: Option<u8>,
    pub time: Option<Column>,
    pub time_unit: TimeUnit,
    pub address: Option<Address>,
    pub op: Option<Column>,
    pub op_form: OpForm,
    pub pid: Option<Column>,
    pub process: Option<Column>,
    pub process_form: ProcessForm,
    pub device: Option<Column>,
    /// Only lines whose `keep` column holds one of `keep_values` are read; the others
    /// (and lines too short to have the column) are passed over.
    pub keep: Option<Column>,
    pub keep_values: Vec<String>,
}

/// The layouts mobmem knows by name, each a spec text (see `docs/trace-formats.md`).
pub const PRESETS: [(&str, &str, &str); 5] = [
    (
        "mobile-block",
        "Pixel 6a block I/O (MobileBlockIOTraces, SYSTOR 2024): proces,device,rw_flag,sector,size,timestamp",
        "delimiter=,, has-header=true, process-col=proces, process-form=comm-tid, \
         device-col=device, op-col=rw_flag, read=R, write=W, offset-col=sector, \
         offset-unit=sector, length-col=size, time-col=timestamp, time-unit=s",
    ),
    (
        "msr",
        "MSR Cambridge block traces (SNIA IOTTA): Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime",
        "delimiter=,, has-header=false, time-col=1, time-unit=filetime, process-col=2, \
         device-col=3, op-col=4, read=Read, write=Write, offset-col=5, offset-unit=byte, \
         length-col=6",
    ),
    (
        "blkparse",
        "blkparse's default text output, its Q (queued) lines: dev cpu seq time pid action rwbs sector + count [process]",
        "delimiter=whitespace, has-header=false, device-col=1, time-col=4, time-unit=s, \
         pid-col=5, keep-col=6, keep=Q, op-col=7, op-form=rwbs, offset-col=8, \
         offset-unit=sector, length-col=10, process-col=11",
    ),
    (
        "libcachesim-csv",
        "libCacheSim's example CSV (data/cloudPhysicsIO.csv): version,time,op,size,lbn",
        "delimiter=,, has-header=true, time-col=2, time-unit=us, obj-id-col=5, obj-size-col=4",
    ),
    (
        "libcachesim-txt",
        "libCacheSim's example text trace (data/cloudPhysicsIO.txt): one object id a line",
        "delimiter=whitespace, has-header=false, obj-id-col=1",
    ),
];

/// The keys a spec takes, for messages.
const KEYS: &str = "delimiter, has-header, comment, time-col, time-unit, obj-id-col, \
    obj-id-is-num, obj-size-col, offset-col, offset-unit, length-col, length-unit, op-col, \
    read, write, op-form, pid-col, process-col, process-form, device-col, keep-col, keep";

impl ColumnSpec {
    /// The spec before any key: comma-separated, no header, no columns.
    pub fn empty(delimiter: Delimiter) -> Self {
        ColumnSpec {
            preset: None,
            text: String::new(),
            delimiter,
            has_header: false,
            comment: None,
            time: None,
            time_unit: TimeUnit::Ns,
            address: None,
            op: None,
            op_form: OpForm::Spellings {
                reads: ["R", "r", "Read", "read", "READ"]
                    .map(String::from)
                    .to_vec(),
                writes: ["W", "w", "Write", "write", "WRITE"]
                    .map(String::from)
                    .to_vec(),
            },
            pid: None,
            process: None,
            process_form: ProcessForm::Name,
            device: None,
            keep: None,
            keep_values: Vec::new(),
        }
    }

    /// The spec `--format csv` (comma-separated) or `txt` (blank-separated) starts from.
    pub fn base(name: &'static str) -> Self {
        let delimiter = if name == "txt" {
            Delimiter::Whitespace
        } else {
            Delimiter::Byte(b',')
        };
        ColumnSpec {
            preset: Some(name),
            ..Self::empty(delimiter)
        }
    }

    /// A preset by name.
    pub fn preset(name: &str) -> Option<Self> {
        let (name, _, text) = PRESETS.iter().find(|(n, ..)| *n == name)?;
        let mut spec = Self::empty(Delimiter::Byte(b','));
        spec.apply(text)
            .unwrap_or_else(|e| unreachable!("preset {name} does not parse: {e}"));
        spec.preset = Some(name);
        Some(spec)
    }

    /// `text`'s keys on top of `base` (an empty spec, or a preset).
    pub fn parse(base: ColumnSpec, text: &str) -> Result<Self> {
        let mut spec = base;
        spec.apply(text)?;
        spec.text = text.trim().to_string();
        Ok(spec)
    }

    fn apply(&mut self, text: &str) -> Result<()> {
        for (key, value) in pairs(text)? {
            self.set(&key, &value)
                .map_err(|message| spec_error(text, &format!("`{key}={value}`: {message}")))?;
        }
        Ok(())
    }

    fn set(&mut self, key: &str, value: &str) -> std::result::Result<(), String> {
        let column = || column(value);
        match key {
            "delimiter" => self.delimiter = delimiter(value)?,
            "has-header" | "header" => self.has_header = boolean(value)?,
            "comment" => {
                self.comment = match value.as_bytes() {
                    [] => None,
                    [b] if b.is_ascii_graphic() => Some(*b),
                    _ => return Err("expected one printable character".into()),
                }
            }
            "time-col" | "time-field" => self.time = Some(column()?),
            "time-unit" => {
                self.time_unit = TimeUnit::ALL
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(value))
                    .map(|(_, u)| *u)
                    .ok_or("expected ns, us, ms, s or filetime")?
            }
            "obj-id-col" | "obj-id-field" => {
                let (id_is_num, size) = match self.address.take() {
                    Some(Address::Object {
                        id_is_num, size, ..
                    }) => (id_is_num, size),
                    _ => (true, None),
                };
                self.address = Some(Address::Object {
                    id: column()?,
                    id_is_num,
                    size,
                });
            }
            "obj-id-is-num" => match &mut self.address {
                Some(Address::Object { id_is_num, .. }) => *id_is_num = boolean(value)?,
                _ => return Err("comes after obj-id-col".into()),
            },
            "obj-size-col" | "obj-size-field" | "size-col" | "size-field" => {
                match &mut self.address {
                    Some(Address::Object { size, .. }) => *size = Some(column()?),
                    _ => return Err("comes after obj-id-col".into()),
                }
            }
            "offset-col" => {
                let (offset_unit, length, length_unit) = match self.address.take() {
                    Some(Address::Block {
                        offset_unit,
                        length,
                        length_unit,
                        ..
                    }) => (offset_unit, length, length_unit),
                    _ => (SECTOR_BYTES, None, None),
                };
                self.address = Some(Address::Block {
                    offset: column()?,
                    offset_unit,
                    length,
                    length_unit,
                });
            }
            "offset-unit" | "length-col" | "length-unit" => {
                let Some(Address::Block {
                    offset_unit,
                    length,
                    length_unit,
                    ..
                }) = &mut self.address
                else {
                    return Err("comes after offset-col".into());
                };
                match key {
                    "offset-unit" => *offset_unit = unit(value)?,
                    "length-col" => *length = Some(column()?),
                    _ => *length_unit = Some(unit(value)?),
                }
            }
            "op-col" => self.op = Some(column()?),
            "read" | "write" => {
                let spellings: Vec<String> = value.split('|').map(str::to_string).collect();
                if spellings.iter().any(String::is_empty) {
                    return Err("expected spellings separated by |, none empty".into());
                }
                match &mut self.op_form {
                    OpForm::Spellings { reads, writes } => {
                        *(if key == "read" { reads } else { writes }) = spellings
                    }
                    OpForm::Rwbs => return Err("op-form=rwbs has no spellings".into()),
                }
            }
            "op-form" => {
                self.op_form = match value {
                    "rwbs" => OpForm::Rwbs,
                    "spellings" => Self::empty(self.delimiter).op_form,
                    _ => return Err("expected rwbs or spellings".into()),
                }
            }
            "pid-col" => self.pid = Some(column()?),
            "process-col" => self.process = Some(column()?),
            "process-form" => {
                self.process_form = match value {
                    "name" => ProcessForm::Name,
                    "comm-tid" => ProcessForm::CommTid,
                    _ => return Err("expected name or comm-tid".into()),
                }
            }
            "device-col" => self.device = Some(column()?),
            "keep-col" => self.keep = Some(column()?),
            "keep" => {
                self.keep_values = value.split('|').map(str::to_string).collect();
                if self.keep_values.iter().any(String::is_empty) {
                    return Err("expected values separated by |, none empty".into());
                }
            }
            _ => return Err(format!("unknown key; the keys are {KEYS}")),
        }
        Ok(())
    }
}

impl fmt::Display for ColumnSpec {
    /// The preset's name and the keys given after it, or the keys alone.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.preset, self.text.is_empty()) {
            (Some(preset), true) => f.write_str(preset),
            (Some(preset), false) => write!(f, "{preset} with columns `{}`", self.text),
            (None, _) => write!(f, "columns `{}`", self.text),
        }
    }
}

/// Bytes of a disk sector, the unit of block addresses in the kernel (`SECTOR_SHIFT` 9).
pub const SECTOR_BYTES: u64 = 512;

fn spec_error(text: &str, message: &str) -> Error {
    Error::config(
        format!("column spec `{}`", text.trim()),
        message.to_string(),
    )
}

/// The `key=value` pairs of a spec: separated by commas (blanks after a comma ignored),
/// keys case-insensitive with `_` read as `-`. As in libCacheSim, a comma delimiter is
/// written `delimiter=,,` (or `delimiter=\,`).
fn pairs(text: &str) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let Some((key, after)) = rest.split_once('=') else {
            return Err(spec_error(
                text,
                &format!("`{rest}`: expected key=value (the keys are {KEYS})"),
            ));
        };
        let key = key.trim().to_ascii_lowercase().replace('_', "-");
        let (value, next) = if key == "delimiter" && after.starts_with(',') {
            (",", &after[1..])
        } else {
            match after.split_once(',') {
                Some((value, next)) => (value, next),
                None => (after, ""),
            }
        };
        let value = if key == "delimiter" {
            value
        } else {
            value.trim()
        };
        out.push((key, value.to_string()));
        rest = next.trim_start_matches([' ', ',', '\t']);
    }
    Ok(out)
}

fn column(value: &str) -> std::result::Result<Column, String> {
    if value.is_empty() {
        return Err("expected a column number (from 1) or a header name".into());
    }
    if value.bytes().all(|b| b.is_ascii_digit()) {
        return match value.parse::<usize>() {
            Ok(n) if (1..=MAX_COLUMN).contains(&n) => Ok(Column::Number(n)),
            _ => Err(format!("columns are numbered from 1 to {MAX_COLUMN}")),
        };
    }
    Ok(Column::Name(value.to_string()))
}

/// Highest column number a spec may name: real traces have a dozen or so.
pub const MAX_COLUMN: usize = 1024;

fn boolean(value: &str) -> std::result::Result<bool, String> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "y" => Ok(true),
        "false" | "0" | "no" | "n" => Ok(false),
        _ => Err("expected true or false".into()),
    }
}

fn delimiter(value: &str) -> std::result::Result<Delimiter, String> {
    Ok(match value {
        // `delimiter=\,` splits at its comma, as in libCacheSim, leaving a backslash.
        "," | "\\" | "\\," | "comma" => Delimiter::Byte(b','),
        "\\t" | "\t" | "tab" => Delimiter::Byte(b'\t'),
        " " | "space" => Delimiter::Byte(b' '),
        "whitespace" => Delimiter::Whitespace,
        _ => match value.as_bytes() {
            [b] if b.is_ascii_punctuation() => Delimiter::Byte(*b),
            _ => {
                return Err(
                    "expected one punctuation character, comma, tab, space or whitespace".into(),
                )
            }
        },
    })
}

fn unit(value: &str) -> std::result::Result<u64, String> {
    match value {
        "sector" => Ok(SECTOR_BYTES),
        "byte" => Ok(1),
        "page" => Ok(crate::devices::PAGE_BYTES),
        _ => match value.parse::<u64>() {
            Ok(n) if n > 0 && n <= 1 << 30 => Ok(n),
            _ => Err("expected sector, byte, page or bytes in one unit (1 to 2^30)".into()),
        },
    }
}

impl fmt::Display for Delimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Delimiter::Byte(b'\t') => f.write_str("tab"),
            Delimiter::Byte(b) => write!(f, "`{}`", *b as char),
            Delimiter::Whitespace => f.write_str("whitespace"),
        }
    }
}

impl fmt::Display for TimeUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ColumnSpec> {
        ColumnSpec::parse(ColumnSpec::empty(Delimiter::Byte(b',')), text)
    }

    #[test]
    fn libcachesim_parameters_read_as_libcachesim_reads_them() {
        let spec = parse("time-col=2, obj-id-col=5, obj-size-col=4, delimiter=,, has-header=true")
            .unwrap();
        assert_eq!(spec.time, Some(Column::Number(2)));
        assert_eq!(
            spec.address,
            Some(Address::Object {
                id: Column::Number(5),
                id_is_num: true,
                size: Some(Column::Number(4)),
            })
        );
        assert_eq!(spec.delimiter, Delimiter::Byte(b','));
        assert!(spec.has_header);
        // The other spellings of a comma, a tab, and keys with underscores.
        for text in [
            "obj_id_col=1,delimiter=\\,",
            "OBJ-ID-COL=1, delimiter=comma",
        ] {
            assert_eq!(parse(text).unwrap().delimiter, Delimiter::Byte(b','));
        }
        assert_eq!(
            parse("obj-id-col=1, delimiter=\\t").unwrap().delimiter,
            Delimiter::Byte(b'\t')
        );
    }

    #[test]
    fn every_preset_parses_and_names_an_address() {
        for (name, ..) in PRESETS {
            let spec = ColumnSpec::preset(name).unwrap();
            assert!(spec.address.is_some(), "{name}");
            assert_eq!(spec.to_string(), name);
        }
        let msr = ColumnSpec::parse(ColumnSpec::preset("msr").unwrap(), "has-header=true").unwrap();
        assert!(msr.has_header);
        assert_eq!(msr.to_string(), "msr with columns `has-header=true`");
    }

    #[test]
    fn bad_keys_and_values_say_what_was_expected() {
        for (text, expected) in [
            ("obj-id-col=0", "numbered from 1"),
            ("colour=red", "unknown key; the keys are delimiter"),
            ("obj-size-col=3", "comes after obj-id-col"),
            ("length-col=3", "comes after offset-col"),
            ("time-unit=fortnights", "expected ns, us"),
            ("delimiter=ab", "expected one punctuation"),
            ("obj-id-col=1, has-header=maybe", "expected true or false"),
            ("offset-col=1, offset-unit=0", "expected sector, byte"),
            ("obj-id-col", "expected key=value"),
            ("op-col=2, read=R||r", "none empty"),
        ] {
            let message = parse(text).unwrap_err().to_string();
            assert!(message.contains(expected), "{text}: {message}");
            assert!(message.contains("column spec"), "{message}");
        }
    }
}
