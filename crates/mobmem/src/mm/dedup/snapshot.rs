//! Snapshots of live processes' pages, and their file format. A snapshot holds, per
//! process, the mappings read (see `host::snapshot`, which reads `/proc/PID/maps`,
//! `pagemap` and `mem`) and per present page its fingerprint and frame. The KSM
//! simulator can start from a snapshot: each process becomes an `mm_slot`, each
//! mapping a region, each page that KSM could gain from a page of constant content.
//!
//! Not every present page is one KSM could gain from: a page read but never written
//! maps the kernel's zero page (KSM does not scan it, and it takes no memory), and a
//! frame can be mapped at several addresses (pages shared copy-on-write after fork,
//! e.g. with Zygote), where merging the mappings frees nothing. As root, pagemap gives
//! each page's frame number (PFN, bits 0-54) and whether the frame is mapped only
//! there (bit 56); the snapshot keeps them, and the dedup potential and the simulator
//! count each frame once and leave zero-page mappings out. Without root the PFNs read
//! as 0: every present page is counted, and the potential is an upper bound.
//!
//! File format (`.ksnap`), little-endian:
//! - 8 bytes: `MMKSNAP2` (or `MMKSNAP1`, an older file without frames);
//! - u32: length of the header, then the header: UTF-8 JSON
//!   `{"processes": [{"pid", "name", "regions": [{"name", "start", "pages"}]}],
//!   "zero_pfn"}` (`start`: the mapping's start address; `pages`: present pages
//!   fingerprinted; `zero_pfn`: the kernel's zero page, null if frames are unknown);
//! - per page, process by process, region by region, in address order: u64 xxHash64
//!   (seed 0) of its 4 KiB, then (version 2 only) u64 frame: its pagemap entry's PFN
//!   and bit 56 (exclusively mapped), 0 if unknown; as many as the regions' `pages` add
//!   up to, then the end of file.
//!
//! Written under a temporary name and renamed, so a file that exists is complete.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::pages::{PageContent, Population};
use crate::{Error, Position, Result};

const MAGIC_V1: &[u8; 8] = b"MMKSNAP1";
const MAGIC: &[u8; 8] = b"MMKSNAP2";
/// pagemap: page frame number.
pub const PFN_MASK: u64 = (1 << 55) - 1;
/// pagemap: the page is exclusively mapped (here only).
pub const EXCLUSIVE: u64 = 1 << 56;

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
    #[serde(default)]
    zero_pfn: Option<u64>,
}

/// A snapshot: processes, regions, and per page in scan order its fingerprint and
/// frame.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub processes: Vec<SnapProcess>,
    pub fingerprints: Vec<u64>,
    /// Per page: PFN (bits 0-54) and [`EXCLUSIVE`]; 0 when unknown.
    pub frames: Vec<u64>,
    /// The kernel's zero page; None when frames are unknown (not root).
    pub zero_pfn: Option<u64>,
}

/// How the pages of a snapshot map frames.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FrameUse {
    /// Whether PFNs were known (root); if not, every page counts and the potential is an
    /// upper bound.
    pub frames_known: bool,
    /// Present pages captured.
    pub pages: u64,
    /// Pages mapping the kernel's zero page (left out).
    pub zero_page: u64,
    /// Pages mapping a frame another page of the snapshot maps too, after the first
    /// (left out).
    pub shared_frame: u64,
    /// Distinct frames: the pages counted.
    pub frames: u64,
    /// Of those, frames not mapped exclusively (also mapped elsewhere, perhaps by a
    /// process outside the snapshot: merging them may free nothing).
    pub not_exclusive: u64,
}

/// The pages the regions of `processes` list; the region where the sum overflows u64
/// as the error.
fn total_pages(processes: &[SnapProcess]) -> std::result::Result<u64, &SnapRegion> {
    processes
        .iter()
        .flat_map(|p| &p.regions)
        .try_fold(0u64, |sum, r| sum.checked_add(r.pages).ok_or(r))
}

impl Snapshot {
    fn check(&self) -> Result<u64> {
        let pages = total_pages(&self.processes)
            .map_err(|_| Error::config("ksm snapshot", "page counts overflow".to_string()))?;
        if pages != self.fingerprints.len() as u64 || pages != self.frames.len() as u64 {
            return Err(Error::config(
                "ksm snapshot",
                format!(
                    "the regions list {pages} pages but there are {} fingerprints and {} frames",
                    self.fingerprints.len(),
                    self.frames.len()
                ),
            ));
        }
        Ok(pages)
    }

    /// For each page, whether KSM could gain from it (see [`FrameUse`]); every page if
    /// frames are unknown.
    fn counted(&self) -> (Vec<bool>, FrameUse) {
        let mut u = FrameUse {
            frames_known: self.zero_pfn.is_some(),
            pages: self.frames.len() as u64,
            ..FrameUse::default()
        };
        let Some(zero_pfn) = self.zero_pfn else {
            u.frames = u.pages;
            return (vec![true; self.frames.len()], u);
        };
        let mut seen = HashSet::new();
        let keep = self
            .frames
            .iter()
            .map(|&f| {
                let pfn = f & PFN_MASK;
                if pfn == zero_pfn {
                    u.zero_page += 1;
                    false
                } else if !seen.insert(pfn) {
                    u.shared_frame += 1;
                    false
                } else {
                    u.frames += 1;
                    if f & EXCLUSIVE == 0 {
                        u.not_exclusive += 1;
                    }
                    true
                }
            })
            .collect();
        (keep, u)
    }

    /// How the pages map frames.
    pub fn frame_use(&self) -> FrameUse {
        self.counted().1
    }

    /// The pages KSM could gain from as a population for the simulator (every process
    /// present from time 0): one page per distinct frame, zero-page mappings left out
    /// (all present pages if frames are unknown); and how the pages map frames (what
    /// [`Snapshot::frame_use`] tells).
    pub fn population(&self) -> Result<(Population, FrameUse)> {
        self.check()?;
        let (keep, frame_use) = self.counted();
        let mut pop = Population::default();
        let mut next = 0usize;
        for p in &self.processes {
            let mut regions = Vec::new();
            for r in &p.regions {
                let n = r.pages as usize;
                let contents = (next..next + n)
                    .filter(|&i| keep[i])
                    .map(|i| PageContent::constant(self.fingerprints[i]))
                    .collect();
                next += n;
                regions.push((format!("{:x} {}", r.start, r.name), contents));
            }
            pop.push_process(&format!("{} ({})", p.name, p.pid), 0, regions)?;
        }
        Ok((pop, frame_use))
    }

    pub fn write(&self, path: &Path) -> Result<()> {
        self.check()?;
        let header = serde_json::to_vec(&Header {
            processes: self.processes.clone(),
            zero_pfn: self.zero_pfn,
        })
        .map_err(|e| Error::config(path.display().to_string(), e.to_string()))?;
        let header_len = u32::try_from(header.len()).map_err(|_| {
            Error::config(
                path.display().to_string(),
                "snapshot header longer than 4 GiB",
            )
        })?;
        let mut bytes = Vec::with_capacity(12 + header.len() + 16 * self.fingerprints.len());
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&header_len.to_le_bytes());
        bytes.extend_from_slice(&header);
        for (fp, frame) in self.fingerprints.iter().zip(&self.frames) {
            bytes.extend_from_slice(&fp.to_le_bytes());
            bytes.extend_from_slice(&frame.to_le_bytes());
        }
        // A fresh temporary name, then a rename: a kill never leaves half a snapshot, and
        // a link at either name is never written through.
        let (tmp, mut f) = crate::output::create_temp_file(path)?;
        let written = (f.write_all(&bytes).and_then(|()| f.sync_all()))
            .map_err(|e| Error::io(&tmp, e))
            .and_then(|()| {
                crate::output::put_in_place(
                    &tmp,
                    path,
                    crate::output::any_file,
                    crate::output::Existing::Refuse,
                )
            });
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written.map(drop)
    }

    pub fn read(path: &Path) -> Result<Snapshot> {
        let mut bytes = Vec::new();
        crate::input::open(path)?
            .read_to_end(&mut bytes)
            .map_err(|e| Error::io(path, e))?;
        Self::parse(&bytes, path)
    }

    pub fn parse(bytes: &[u8], path: &Path) -> Result<Snapshot> {
        let err = |offset: usize, m: String| Error::format(path, Position::Byte(offset as u64), m);
        let version =
            match bytes.get(..8) {
                Some(m) if bytes.len() >= 12 && m == MAGIC => 2,
                Some(m) if bytes.len() >= 12 && m == MAGIC_V1 => 1,
                _ => return Err(err(
                    0,
                    "not a mobmem KSM snapshot (expected MMKSNAP2 or MMKSNAP1 and a header length)"
                        .into(),
                )),
            };
        let len = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) as usize;
        let body_start = 12usize
            .checked_add(len)
            .filter(|&end| end <= bytes.len())
            .ok_or_else(|| {
                err(
                    8,
                    format!("header of {len} bytes runs past the end of the file"),
                )
            })?;
        let header: Header = serde_json::from_slice(&bytes[12..body_start])
            .map_err(|e| err(12, format!("bad header JSON: {e}")))?;
        let pages = total_pages(&header.processes).map_err(|r| {
            err(
                12,
                format!(
                    "the header's page counts overflow (region {} at {:#x} lists {})",
                    r.name, r.start, r.pages
                ),
            )
        })?;
        let per_page: u64 = if version == 2 { 16 } else { 8 };
        let body = &bytes[body_start..];
        let want = pages.checked_mul(per_page);
        if want != Some(body.len() as u64) {
            return Err(err(
                body_start,
                format!(
                    "the header lists {pages} pages ({} bytes of page records) but {} bytes follow",
                    want.map_or("too many".to_string(), |w| w.to_string()),
                    body.len()
                ),
            ));
        }
        let word = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
        let (fingerprints, frames) = if version == 2 {
            body.chunks_exact(16)
                .map(|c| (word(&c[..8]), word(&c[8..])))
                .unzip()
        } else {
            (
                body.chunks_exact(8).map(word).collect(),
                vec![0; pages as usize],
            )
        };
        Ok(Snapshot {
            processes: header.processes,
            fingerprints,
            frames,
            zero_pfn: if version == 2 { header.zero_pfn } else { None },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A snapshot of one process with regions of `region_pages` pages each.
    fn snapshot(
        region_pages: &[u64],
        fingerprints: Vec<u64>,
        frames: Vec<u64>,
        zero_pfn: Option<u64>,
    ) -> Snapshot {
        let regions = region_pages
            .iter()
            .enumerate()
            .map(|(i, &pages)| SnapRegion {
                name: format!("r{i}"),
                start: 0x10000 * i as u64,
                pages,
            })
            .collect();
        Snapshot {
            processes: vec![SnapProcess {
                pid: 7,
                name: "app".into(),
                regions,
            }],
            fingerprints,
            frames,
            zero_pfn,
        }
    }

    #[test]
    fn a_snapshot_round_trips_and_bad_files_are_errors() {
        let s = snapshot(&[2, 1], vec![1, 2, 3], vec![0; 3], None);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.ksnap");
        s.write(&path).unwrap();
        let back = Snapshot::read(&path).unwrap();
        assert_eq!(back, s);
        let (pop, _) = back.population().unwrap();
        assert_eq!(pop.pages.len(), 3);
        assert_eq!(pop.processes[0].regions.len(), 2);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.pop();
        let e = Snapshot::parse(&bytes, &path).unwrap_err().to_string();
        assert!(e.contains("3 pages") && e.contains("byte offset"), "{e}");
        let e = Snapshot::parse(b"nonsense", &path).unwrap_err().to_string();
        assert!(e.contains("MMKSNAP2"), "{e}");
    }

    /// A file whose header is `header` followed by `body`.
    fn file(magic: &[u8; 8], header: &str, body: &[u8]) -> Vec<u8> {
        let mut bytes = magic.to_vec();
        bytes.extend_from_slice(&(header.len() as u32).to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(body);
        bytes
    }

    #[test]
    fn huge_page_counts_in_a_header_are_errors_not_panics() {
        let path = Path::new("bad.ksnap");
        let region = |pages: u64| format!(r#"{{"name":"[heap]","start":4096,"pages":{pages}}}"#);
        // Two regions whose counts overflow u64 when added.
        let header = format!(
            r#"{{"processes":[{{"pid":1,"name":"a","regions":[{},{}]}}]}}"#,
            region(u64::MAX),
            region(2)
        );
        let e = Snapshot::parse(&file(MAGIC, &header, &[]), path)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("overflow") && e.contains("byte offset 12"),
            "{e}"
        );
        // One count whose size in bytes overflows.
        let header = format!(
            r#"{{"processes":[{{"pid":1,"name":"a","regions":[{}]}}]}}"#,
            region(u64::MAX / 4)
        );
        let e = Snapshot::parse(&file(MAGIC, &header, &[0; 16]), path)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("too many") && e.contains("16 bytes follow"),
            "{e}"
        );
        // A header length past the end of the file.
        let mut bytes = file(MAGIC, "{}", &[]);
        bytes[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        let e = Snapshot::parse(&bytes, path).unwrap_err().to_string();
        assert!(e.contains("runs past the end"), "{e}");
        // A snapshot built in memory with too few fingerprints.
        let s = snapshot(&[5], vec![1], vec![0], None);
        assert!(s.population().is_err());
    }

    #[test]
    fn version_1_files_still_read_with_frames_unknown() {
        let header =
            r#"{"processes":[{"pid":1,"name":"a","regions":[{"name":"r","start":0,"pages":2}]}]}"#;
        let mut body = 5u64.to_le_bytes().to_vec();
        body.extend_from_slice(&5u64.to_le_bytes());
        let s = Snapshot::parse(&file(MAGIC_V1, header, &body), Path::new("old.ksnap")).unwrap();
        assert_eq!(s.fingerprints, vec![5, 5]);
        assert_eq!(s.zero_pfn, None);
        assert!(!s.frame_use().frames_known);
        assert_eq!(s.population().unwrap().0.potential(0).duplicate, 1);
    }

    #[test]
    fn zero_page_mappings_and_shared_frames_are_counted_apart() {
        let zero = super::super::pages::zero_fingerprint();
        // Pages: the zero page twice; frame 7 (zeros written) mapped twice (fork); frame
        // 8 and 9 with the same data; frame 10 with zeros.
        let s = snapshot(
            &[7],
            vec![zero, zero, zero, zero, 3, 3, zero],
            vec![1, 1, 7, 7, 8 | EXCLUSIVE, 9 | EXCLUSIVE, 10 | EXCLUSIVE],
            Some(1),
        );
        let (pop, u) = s.population().unwrap();
        assert_eq!(u, s.frame_use());
        assert_eq!(
            (
                u.pages,
                u.zero_page,
                u.shared_frame,
                u.frames,
                u.not_exclusive
            ),
            (7, 2, 1, 4, 1)
        );
        let p = pop.potential(0);
        // Over the distinct frames 7, 8, 9, 10: two frames of zeros, 3 twice.
        assert_eq!((p.pages, p.zero, p.duplicate, p.unique), (4, 2, 1, 1));
        assert_eq!(p.saveable(), 2);
        // Without root the same pages would count 7, 5 of them zeros.
        let unknown = Snapshot {
            frames: vec![0; 7],
            zero_pfn: None,
            ..s
        };
        assert_eq!(unknown.population().unwrap().0.potential(0).saveable(), 5);
    }
}
