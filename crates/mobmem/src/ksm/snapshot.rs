//! Snapshots of live processes' pages: `mobmem snapshot` reads `/proc/PID/maps`, keeps
//! the mappings asked for, finds the pages present in RAM in `/proc/PID/pagemap` and
//! fingerprints each from `/proc/PID/mem` (needs root, or ptrace rights over the
//! process). The KSM simulator can start from a snapshot: each process becomes an
//! `mm_slot`, each mapping a region, each present page a page of constant content.
//!
//! File format (`.ksnap`), little-endian:
//! - 8 bytes: `MMKSNAP1`;
//! - u32: length of the header, then the header: UTF-8 JSON
//!   `{"processes": [{"pid", "name", "regions": [{"name", "start", "pages"}]}]}`
//!   (`start`: the mapping's start address; `pages`: present pages fingerprinted);
//! - u64 per page: xxHash64 (seed 0) of its 4 KiB, process by process, region by region,
//!   in address order; as many as the regions' `pages` add up to, then the end of file.
//!
//! Written under a temporary name and renamed, so a file that exists is complete.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::pages::{fingerprint, PageContent, Population, PAGE_BYTES};
use crate::{Error, Position, Result};

const MAGIC: &[u8; 8] = b"MMKSNAP1";

/// One mapping's present pages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapRegion {
    pub name: String,
    pub start: u64,
    pub pages: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapProcess {
    pub pid: u32,
    pub name: String,
    pub regions: Vec<SnapRegion>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Header {
    processes: Vec<SnapProcess>,
}

/// A snapshot: processes, regions, and the fingerprints of their pages in scan order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub processes: Vec<SnapProcess>,
    pub fingerprints: Vec<u64>,
}

impl Snapshot {
    /// The pages as a population for the simulator (every process present from time 0).
    pub fn population(&self) -> Result<Population> {
        let mut pop = Population::default();
        let mut next = 0usize;
        for p in &self.processes {
            let mut regions = Vec::new();
            for r in &p.regions {
                let n = r.pages as usize;
                let contents = self.fingerprints[next..next + n]
                    .iter()
                    .map(|&fp| PageContent::constant(fp))
                    .collect();
                next += n;
                regions.push((format!("{:x} {}", r.start, r.name), contents));
            }
            pop.push_process(&format!("{} ({})", p.name, p.pid), 0, regions)?;
        }
        Ok(pop)
    }

    pub fn write(&self, path: &Path) -> Result<()> {
        let header = serde_json::to_vec(&Header {
            processes: self.processes.clone(),
        })
        .map_err(|e| Error::config(path.display().to_string(), e.to_string()))?;
        let mut bytes = Vec::with_capacity(12 + header.len() + 8 * self.fingerprints.len());
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&(header.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&header);
        for fp in &self.fingerprints {
            bytes.extend_from_slice(&fp.to_le_bytes());
        }
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        let tmp = path.with_extension("ksnap.partial");
        let _ = dir;
        let mut f = File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
        f.write_all(&bytes).map_err(|e| Error::io(&tmp, e))?;
        f.sync_all().map_err(|e| Error::io(&tmp, e))?;
        std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
    }

    pub fn read(path: &Path) -> Result<Snapshot> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Self::parse(&bytes, path)
    }

    pub fn parse(bytes: &[u8], path: &Path) -> Result<Snapshot> {
        let err = |offset: usize, m: String| Error::format(path, Position::Byte(offset as u64), m);
        if bytes.len() < 12 || &bytes[..8] != MAGIC {
            return Err(err(
                0,
                "not a mobmem KSM snapshot (expected MMKSNAP1 and a header length)".into(),
            ));
        }
        let len = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) as usize;
        if bytes.len() < 12 + len {
            return Err(err(
                8,
                format!("header of {len} bytes runs past the end of the file"),
            ));
        }
        let header: Header = serde_json::from_slice(&bytes[12..12 + len])
            .map_err(|e| err(12, format!("bad header JSON: {e}")))?;
        let pages: u64 = header
            .processes
            .iter()
            .flat_map(|p| p.regions.iter().map(|r| r.pages))
            .sum();
        let body = &bytes[12 + len..];
        if body.len() as u64 != pages * 8 {
            return Err(err(
                12 + len,
                format!(
                    "the header lists {pages} pages ({} bytes of fingerprints) but {} bytes follow",
                    pages * 8,
                    body.len()
                ),
            ));
        }
        let fingerprints = body
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        Ok(Snapshot {
            processes: header.processes,
            fingerprints,
        })
    }
}

/// Which mappings to fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MappingFilter {
    /// Private anonymous mappings (no file), including `[heap]`, `[stack]` and named
    /// anonymous memory (`[anon:...]`, e.g. Android's Dalvik heap).
    Anon,
    /// `[heap]` and named heaps (`[anon:dalvik-...]`, `[anon:libc_malloc]`, `[anon:scudo:...]`).
    Heap,
    /// `[stack]`.
    Stack,
    /// Every readable private mapping.
    All,
}

impl std::str::FromStr for MappingFilter {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "anon" => Ok(MappingFilter::Anon),
            "heap" => Ok(MappingFilter::Heap),
            "stack" => Ok(MappingFilter::Stack),
            "all" => Ok(MappingFilter::All),
            _ => Err(format!(
                "unknown mapping filter '{s}' (known: anon, heap, stack, all)"
            )),
        }
    }
}

/// One line of /proc/PID/maps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapsLine {
    pub start: u64,
    pub end: u64,
    pub perms: String,
    pub inode: u64,
    pub path: String,
}

/// Parse /proc/PID/maps text; a malformed line is an error naming it.
pub fn parse_maps(text: &str, path: &Path) -> Result<Vec<MapsLine>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let bad = || {
            Error::format(
                path,
                Position::Line(i as u64 + 1),
                "expected 'start-end perms offset dev inode [path]'",
            )
        };
        let mut fields = line.split_whitespace();
        let range = fields.next().ok_or_else(bad)?;
        let perms = fields.next().ok_or_else(bad)?.to_string();
        let _offset = fields.next().ok_or_else(bad)?;
        let _dev = fields.next().ok_or_else(bad)?;
        let inode: u64 = fields.next().ok_or_else(bad)?.parse().map_err(|_| bad())?;
        let rest: Vec<&str> = fields.collect();
        let (s, e) = range.split_once('-').ok_or_else(bad)?;
        let start = u64::from_str_radix(s, 16).map_err(|_| bad())?;
        let end = u64::from_str_radix(e, 16).map_err(|_| bad())?;
        out.push(MapsLine {
            start,
            end,
            perms,
            inode,
            path: rest.join(" "),
        });
    }
    Ok(out)
}

impl MappingFilter {
    pub fn keeps(&self, m: &MapsLine) -> bool {
        let readable_private = m.perms.starts_with('r') && m.perms.as_bytes().get(3) == Some(&b'p');
        if !readable_private || m.path.starts_with("[v") {
            return false; // [vdso], [vvar], [vsyscall] are not process memory
        }
        let anon = m.inode == 0 && (m.path.is_empty() || m.path.starts_with('['));
        match self {
            MappingFilter::All => true,
            MappingFilter::Anon => anon,
            MappingFilter::Heap => {
                m.path == "[heap]"
                    || m.path.starts_with("[anon:dalvik")
                    || m.path.starts_with("[anon:libc_malloc")
                    || m.path.starts_with("[anon:scudo")
            }
            MappingFilter::Stack => m.path.starts_with("[stack"),
        }
    }
}

/// Fingerprint the present pages of the chosen mappings of process `pid`.
pub fn capture_process(pid: u32, filter: MappingFilter) -> Result<SnapProcess> {
    capture_process_into(pid, filter, &mut Vec::new())
}

/// As [`capture_process`], appending the fingerprints to `out`.
pub fn capture_process_into(
    pid: u32,
    filter: MappingFilter,
    out: &mut Vec<u64>,
) -> Result<SnapProcess> {
    let proc_dir = Path::new("/proc").join(pid.to_string());
    let maps_path = proc_dir.join("maps");
    let maps = std::fs::read_to_string(&maps_path).map_err(|e| Error::io(&maps_path, e))?;
    let name = std::fs::read_to_string(proc_dir.join("comm"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let pagemap_path = proc_dir.join("pagemap");
    let mem_path = proc_dir.join("mem");
    let mut pagemap = File::open(&pagemap_path).map_err(|e| Error::io(&pagemap_path, e))?;
    let mut mem = File::open(&mem_path).map_err(|e| Error::io(&mem_path, e))?;
    let mut regions = Vec::new();
    let mut page = vec![0u8; PAGE_BYTES];
    for m in parse_maps(&maps, &maps_path)?
        .iter()
        .filter(|m| filter.keeps(m))
    {
        let n = ((m.end - m.start) / PAGE_BYTES as u64) as usize;
        let mut entries = vec![0u8; n * 8];
        pagemap
            .seek(SeekFrom::Start(m.start / PAGE_BYTES as u64 * 8))
            .and_then(|_| pagemap.read_exact(&mut entries))
            .map_err(|e| Error::io(&pagemap_path, e))?;
        let mut count = 0u64;
        for (i, entry) in entries.chunks_exact(8).enumerate() {
            let entry = u64::from_le_bytes(entry.try_into().expect("8 bytes"));
            // Bit 63: present in RAM. Swapped-out pages (bit 62) are not scanned by KSM.
            if entry >> 63 == 0 {
                continue;
            }
            let address = m.start + (i * PAGE_BYTES) as u64;
            let read = mem
                .seek(SeekFrom::Start(address))
                .and_then(|_| mem.read_exact(&mut page));
            if read.is_err() {
                continue; // unmapped since maps was read, or not readable: skip the page
            }
            out.push(fingerprint(&page));
            count += 1;
        }
        if count > 0 {
            regions.push(SnapRegion {
                name: if m.path.is_empty() {
                    "[anon]".into()
                } else {
                    m.path.clone()
                },
                start: m.start,
                pages: count,
            });
        }
    }
    Ok(SnapProcess { pid, name, regions })
}

/// Snapshot several processes.
pub fn capture(pids: &[u32], filter: MappingFilter) -> Result<Snapshot> {
    let mut snapshot = Snapshot::default();
    for &pid in pids {
        let p = capture_process_into(pid, filter, &mut snapshot.fingerprints)?;
        snapshot.processes.push(p);
    }
    Ok(snapshot)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_round_trips_and_bad_files_are_errors() {
        let s = Snapshot {
            processes: vec![SnapProcess {
                pid: 7,
                name: "app".into(),
                regions: vec![
                    SnapRegion {
                        name: "[heap]".into(),
                        start: 0x1000,
                        pages: 2,
                    },
                    SnapRegion {
                        name: "[stack]".into(),
                        start: 0x9000,
                        pages: 1,
                    },
                ],
            }],
            fingerprints: vec![1, 2, 3],
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.ksnap");
        s.write(&path).unwrap();
        let back = Snapshot::read(&path).unwrap();
        assert_eq!(back, s);
        let pop = back.population().unwrap();
        assert_eq!(pop.pages.len(), 3);
        assert_eq!(pop.processes[0].regions.len(), 2);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.pop();
        let e = Snapshot::parse(&bytes, &path).unwrap_err().to_string();
        assert!(e.contains("3 pages") && e.contains("byte offset"), "{e}");
        let e = Snapshot::parse(b"nonsense", &path).unwrap_err().to_string();
        assert!(e.contains("MMKSNAP1"), "{e}");
    }

    #[test]
    fn maps_lines_parse_and_filters_choose() {
        let text = "55d0c000-55d2d000 rw-p 00000000 00:00 0                          [heap]\n\
7f00-8000 r--p 00000000 08:01 1234 /usr/lib/libc.so.6\n\
7ffd1000-7ffd2000 rw-p 00000000 00:00 0 [stack]\n\
9000-a000 rw-p 00000000 00:00 0\n\
b000-c000 r--p 00000000 00:00 0 [vvar]\n";
        let maps = parse_maps(text, Path::new("maps")).unwrap();
        assert_eq!(maps.len(), 5);
        assert_eq!(maps[0].path, "[heap]");
        let kept = |f: MappingFilter| maps.iter().filter(|m| f.keeps(m)).count();
        assert_eq!(kept(MappingFilter::Anon), 3);
        assert_eq!(kept(MappingFilter::Heap), 1);
        assert_eq!(kept(MappingFilter::Stack), 1);
        assert_eq!(kept(MappingFilter::All), 4);
        let e = parse_maps("zzz", Path::new("maps"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 1"), "{e}");
    }

    #[test]
    fn this_process_can_be_captured_when_allowed() {
        // Reading one's own /proc/self/mem needs no privileges.
        let data = vec![0x5au8; 4 * PAGE_BYTES];
        std::hint::black_box(&data);
        let s = capture(&[std::process::id()], MappingFilter::Anon).unwrap();
        assert!(!s.fingerprints.is_empty());
        assert_eq!(
            s.fingerprints.len() as u64,
            s.processes[0].regions.iter().map(|r| r.pages).sum::<u64>()
        );
    }
}
