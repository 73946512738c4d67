//! Page fingerprints of live processes: reads `/proc/PID/maps`, keeps the mappings
//! asked for, finds the pages present in RAM in `/proc/PID/pagemap` and fingerprints
//! each from `/proc/PID/mem` (needs root, or ptrace rights over the process), into a
//! [`Snapshot`] (its file format and what the simulator makes of it are in
//! [`crate::mm::dedup::snapshot`]). As root, pagemap gives each page's frame number and
//! whether the frame is mapped only there; without root the PFNs read as 0 and frames
//! are unknown.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::mm::dedup::pages::{fingerprint, PAGE_BYTES};
use crate::mm::dedup::snapshot::{SnapProcess, SnapRegion, Snapshot, EXCLUSIVE, PFN_MASK};
use crate::{Error, Position, Result};

/// pagemap: present in RAM.
const PRESENT: u64 = 1 << 63;

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

impl MappingFilter {
    pub const ALL: [MappingFilter; 4] = [
        MappingFilter::Anon,
        MappingFilter::Heap,
        MappingFilter::Stack,
        MappingFilter::All,
    ];

    pub fn name(&self) -> &'static str {
        match self {
            MappingFilter::Anon => "anon",
            MappingFilter::Heap => "heap",
            MappingFilter::Stack => "stack",
            MappingFilter::All => "all",
        }
    }
}

impl std::str::FromStr for MappingFilter {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Error::find_named("mapping filter", s, &Self::ALL, Self::name).map_err(|e| e.to_string())
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

/// One pagemap entry of this process's address `address` (root sees PFNs; others 0).
fn own_pagemap_entry(address: u64) -> Option<u64> {
    let mut pagemap = File::open("/proc/self/pagemap").ok()?;
    let mut entry = [0u8; 8];
    pagemap
        .seek(SeekFrom::Start(address / PAGE_BYTES as u64 * 8))
        .ok()?;
    pagemap.read_exact(&mut entry).ok()?;
    Some(u64::from_le_bytes(entry))
}

/// The PFN of the kernel's zero page: an anonymous page of this process that is read
/// and never written maps it. None if PFNs cannot be read (not root).
pub fn kernel_zero_pfn() -> Option<u64> {
    let probe = memmap2::MmapMut::map_anon(PAGE_BYTES).ok()?;
    // A huge zero page would have another PFN: 4 KiB pages only.
    let _ = probe.advise(memmap2::Advice::NoHugePage);
    std::hint::black_box(probe[0]);
    let entry = own_pagemap_entry(probe.as_ptr() as u64)?;
    let pfn = entry & PFN_MASK;
    (entry & PRESENT != 0 && pfn != 0).then_some(pfn)
}

/// Fingerprint the present pages of the chosen mappings of process `pid`.
pub fn capture_process(pid: u32, filter: MappingFilter) -> Result<SnapProcess> {
    capture_process_into(pid, filter, &mut Vec::new(), &mut Vec::new())
}

/// As [`capture_process`], appending each page's fingerprint and frame (PFN and
/// [`EXCLUSIVE`], as pagemap shows them) to `fingerprints` and `frames`.
pub fn capture_process_into(
    pid: u32,
    filter: MappingFilter,
    fingerprints: &mut Vec<u64>,
    frames: &mut Vec<u64>,
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
            // Swapped-out pages (bit 62) are not scanned by KSM.
            if entry & PRESENT == 0 {
                continue;
            }
            let address = m.start + (i * PAGE_BYTES) as u64;
            let read = mem
                .seek(SeekFrom::Start(address))
                .and_then(|_| mem.read_exact(&mut page));
            if read.is_err() {
                continue; // unmapped since maps was read, or not readable: skip the page
            }
            fingerprints.push(fingerprint(&page));
            frames.push(entry & (PFN_MASK | EXCLUSIVE));
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
    let mut snapshot = Snapshot {
        zero_pfn: kernel_zero_pfn(),
        ..Snapshot::default()
    };
    for &pid in pids {
        let p = capture_process_into(
            pid,
            filter,
            &mut snapshot.fingerprints,
            &mut snapshot.frames,
        )?;
        snapshot.processes.push(p);
    }
    if snapshot.frames.iter().all(|&f| f & PFN_MASK == 0) {
        // PFNs read as 0 (no CAP_SYS_ADMIN): frames are unknown.
        snapshot.zero_pfn = None;
        snapshot.frames.iter_mut().for_each(|f| *f = 0);
    }
    Ok(snapshot)
}

#[cfg(test)]
mod tests {
    use super::*;

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
