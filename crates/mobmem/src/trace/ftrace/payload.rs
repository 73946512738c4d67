//! The fields of the event payloads: `key=value` lookups and the parsers of the
//! values the importer uses (files and pages, page ranges, tasks, atrace markers). Each
//! parser's error says what was expected.

use super::{
    file_owner, MAX_DEVICE_MAJOR, MAX_DEVICE_MINOR, MAX_EVENT_PAGES, MAX_PAGE_INDEX, PAGE_SIZE,
};

/// `CLONE_THREAD` (`include/uapi/linux/sched.h`): the new task joins its parent's group.
pub(crate) const CLONE_THREAD: u64 = 0x0001_0000;

/// The value of `key` in a payload: `key=VALUE` or `key VALUE`, at a word start.
pub(super) fn value<'a>(payload: &'a str, key: &str) -> Option<&'a str> {
    let mut from = 0;
    while let Some(rel) = payload[from..].find(key) {
        let at = from + rel;
        let end = at + key.len();
        let word_start = at == 0 || payload.as_bytes()[at - 1] == b' ';
        let sep = payload.as_bytes().get(end).copied();
        if word_start && (sep == Some(b'=') || sep == Some(b' ')) {
            let rest = payload[end + 1..].trim_start();
            return Some(rest.split_whitespace().next().unwrap_or(""));
        }
        from = at + 1;
    }
    None
}

/// Text after `start` up to `end` (or the end of the payload): values that may hold spaces
/// (task names).
pub(super) fn text_between<'a>(payload: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let from = payload.find(start)? + start.len();
    let rest = &payload[from..];
    Some(rest.find(end).map_or(rest, |e| &rest[..e]))
}

pub(super) fn number(text: Option<&str>, expected: &str) -> std::result::Result<u32, String> {
    text.and_then(|t| t.parse::<u32>().ok())
        .ok_or_else(|| format!("expected {expected}"))
}

pub(super) fn adj(text: Option<&str>) -> std::result::Result<i16, String> {
    text.and_then(|t| t.parse::<i64>().ok())
        .ok_or_else(|| "expected oom_score_adj=N with N in -1000..=1000".to_string())
        .and_then(checked_adj)
}

/// An `oom_score_adj`: -1000..=1000.
pub(crate) fn checked_adj(adj: i64) -> std::result::Result<i16, String> {
    i16::try_from(adj)
        .ok()
        .filter(|a| (-1000..=1000).contains(a))
        .ok_or_else(|| format!("oom_score_adj={adj}, expected -1000..=1000"))
}

/// A number the kernel prints in hexadecimal (`%lx`, `0x%lx`); Perfetto prints it in
/// decimal unless it has a `0x`.
pub(super) fn kernel_hex(text: &str, perfetto: bool) -> Option<u64> {
    match text.strip_prefix("0x") {
        Some(digits) => u64::from_str_radix(digits, 16).ok(),
        None if perfetto => text.parse().ok(),
        None => u64::from_str_radix(text, 16).ok(),
    }
}

/// The file key of a `dev_t` as the kernel keeps it (`major << 20 | minor`, Perfetto's
/// `s_dev`) and an inode.
pub(crate) fn owner_of_dev(dev: u64, ino: u64) -> std::result::Result<u64, String> {
    let major = u32::try_from(dev >> 20)
        .map_err(|_| format!("s_dev={dev}: not a device number (above 2^52)"))?;
    owner_of(major, (dev & u64::from(MAX_DEVICE_MINOR)) as u32, ino)
}

/// A file key, or what does not fit in one.
fn owner_of(major: u32, minor: u32, ino: u64) -> std::result::Result<u64, String> {
    if major > MAX_DEVICE_MAJOR {
        return Err(format!(
            "dev {major}:{minor}: device major above {MAX_DEVICE_MAJOR}, more than the kernel hands out, not supported"
        ));
    }
    if minor > MAX_DEVICE_MINOR {
        return Err(format!(
            "dev {major}:{minor}: device minor above {MAX_DEVICE_MINOR} (20 bits), not a Linux device number"
        ));
    }
    file_owner(major, minor, ino).ok_or_else(|| {
        format!("ino {ino:#x}: inode numbers of 2^35 and above are not supported (file pages are keyed by device and a 35-bit inode)")
    })
}

/// The file of a filemap event: the kernel's `dev M:m` / `dev=M:m` with `ino %lx` /
/// `ino=%lx`, or Perfetto's rendering of an event it has no format for, `s_dev=DEV_T
/// i_ino=DECIMAL`. Kernel text gives `DEV_T` as the kernel's `major << 20 | minor`. In
/// Perfetto's text (`perfetto`) every device number is the user-space encoding its
/// daemon stores (see [`owner_of_userspace_dev`]): `s_dev=` prints it as stored, and
/// `dev M:m` prints its bits 20 and up as `M` and the bits below as `m`.
fn file_of(payload: &str, perfetto: bool) -> std::result::Result<u64, String> {
    let Some(dev) = value(payload, "dev") else {
        let dev = value(payload, "s_dev").ok_or("expected dev MAJOR:MINOR")?;
        let dev = dev
            .parse::<u64>()
            .map_err(|_| format!("s_dev={dev}, expected a device number"))?;
        let ino_text = value(payload, "i_ino").ok_or("expected i_ino=INODE")?;
        let ino = ino_text
            .parse::<u64>()
            .map_err(|_| format!("i_ino={ino_text}, expected a decimal inode"))?;
        if perfetto {
            return owner_of_userspace_dev(dev, ino);
        }
        return owner_of_dev(dev, ino);
    };
    let (major, minor) = dev
        .split_once(':')
        .and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?)))
        .ok_or_else(|| format!("dev `{dev}`, expected MAJOR:MINOR"))?;
    let ino_text = value(payload, "ino").ok_or("expected ino INODE (hexadecimal)")?;
    let ino = kernel_hex(ino_text, false)
        .ok_or_else(|| format!("ino `{ino_text}`, expected hexadecimal"))?;
    if perfetto {
        if minor > u64::from(MAX_DEVICE_MINOR) || major >> 44 != 0 {
            return Err(format!(
                "dev {major}:{minor}: not a device number Perfetto writes"
            ));
        }
        return owner_of_userspace_dev(major << 20 | minor, ino);
    }
    let (major, minor) = (
        u32::try_from(major).map_err(|_| format!("dev {major}:{minor}: major too large"))?,
        u32::try_from(minor).map_err(|_| format!("dev {major}:{minor}: minor too large"))?,
    );
    owner_of(major, minor, ino)
}

/// The file key of a device number in the user-space encoding of glibc's `makedev`,
/// which Perfetto's daemon writes for every `dev_t` it records
/// (`CpuReader::TranslateBlockDeviceIDToUserspace`): major in bits 8..20 and 32..44,
/// minor in bits 0..8 and 20..32.
pub(crate) fn owner_of_userspace_dev(dev: u64, ino: u64) -> std::result::Result<u64, String> {
    let major = (dev >> 8) & 0xfff | (dev >> 32) & !0xfff;
    let minor = dev & 0xff | (dev >> 12) & !0xff;
    if major > u64::from(MAX_DEVICE_MAJOR) || minor > u64::from(MAX_DEVICE_MINOR) {
        return Err(format!(
            "device {dev} (user-space encoding, {major}:{minor}): not a device number the kernel hands out"
        ));
    }
    owner_of(major as u32, minor as u32, ino)
}

/// A page index given in bytes (`ofs=`, the kernel) or, without `ofs`, in pages
/// (`index=`, Perfetto).
fn page_index(payload: &str) -> std::result::Result<u64, String> {
    match value(payload, "ofs") {
        Some(ofs) => ofs
            .parse::<u64>()
            .map(|o| o / PAGE_SIZE)
            .map_err(|_| format!("ofs={ofs}, expected a byte offset")),
        None => index_value(
            "index",
            value(payload, "index").ok_or("expected ofs=BYTES")?,
        ),
    }
}

/// Perfetto's `index=N` (or `last_index=N`, named by `field`), in pages: at most
/// [`MAX_PAGE_INDEX`], the highest page the kernel's byte offsets can name.
fn index_value(field: &str, index: &str) -> std::result::Result<u64, String> {
    match index.parse::<u64>() {
        Ok(i) => checked_index(field, i),
        Err(_) => Err(format!("{field}={index}, expected a page index")),
    }
}

/// A page index `field` of at most [`MAX_PAGE_INDEX`].
pub(crate) fn checked_index(field: &str, index: u64) -> std::result::Result<u64, String> {
    if index <= MAX_PAGE_INDEX {
        Ok(index)
    } else {
        Err(format!("{field}={index}, expected a page index of at most {MAX_PAGE_INDEX} (2^52 - 1: a byte offset below 2^64)"))
    }
}

/// Pages `first..=last` of one event (`shown`: how the event gave them): not empty, and
/// at most [`MAX_EVENT_PAGES`].
pub(crate) fn checked_range(first: u64, last: u64, shown: &str) -> std::result::Result<(), String> {
    if last < first {
        return Err(format!("an empty range {shown}"));
    }
    let pages = last - first + 1;
    if pages > MAX_EVENT_PAGES {
        return Err(format!(
            "{shown} spans {pages} pages, more than one read can ({MAX_EVENT_PAGES}: a read() moves less than 2 GiB)"
        ));
    }
    Ok(())
}

/// Added or deleted pages: file, first page index, number of pages (`order`).
pub(super) fn filemap_pages(
    payload: &str,
    perfetto: bool,
) -> std::result::Result<(u64, u64, u64), String> {
    let owner = file_of(payload, perfetto)?;
    let pfn = value(payload, "pfn").ok_or("expected pfn=N")?;
    // Decimal (`%lu`, the old layout) or `0x` hexadecimal (the folio layout).
    if kernel_hex(pfn, true).is_none() {
        return Err(format!(
            "pfn={pfn}, expected a page frame number (decimal, or hexadecimal after 0x)"
        ));
    }
    let first = page_index(payload)?;
    let order = match value(payload, "order") {
        Some(o) => o
            .parse::<u32>()
            .ok()
            .filter(|&o| o < 20)
            .ok_or_else(|| format!("order={o}, expected a folio order below 20"))?,
        None => 0,
    };
    Ok((owner, first, 1 << order))
}

/// `mm_filemap_fault`: file and page index.
pub(super) fn filemap_key(
    payload: &str,
    perfetto: bool,
) -> std::result::Result<(u64, u64), String> {
    let owner = file_of(payload, perfetto)?;
    Ok((owner, page_index(payload)?))
}

/// `mm_filemap_get_pages`, `mm_filemap_map_pages`: file and first and last page of the
/// byte range `ofs=FIRST-LAST` (Perfetto: `index=FIRST last_index=LAST` in pages), at
/// most [`MAX_EVENT_PAGES`] pages.
pub(super) fn filemap_page_range(
    payload: &str,
    perfetto: bool,
) -> std::result::Result<(u64, u64, u64), String> {
    let owner = file_of(payload, perfetto)?;
    let (first, last, shown) = match value(payload, "ofs") {
        None => {
            let last = value(payload, "last_index").ok_or("expected ofs=FIRST-LAST")?;
            let first = index_value(
                "index",
                value(payload, "index").ok_or("expected ofs=BYTES")?,
            )?;
            let last = index_value("last_index", last)?;
            (first, last, format!("index={first} last_index={last}"))
        }
        Some(ofs) => {
            let (a, b) = ofs
                .split_once('-')
                .and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?)))
                .ok_or_else(|| format!("ofs={ofs}, expected ofs=FIRST-LAST in bytes"))?;
            if b < a {
                return Err(format!("an empty range ofs={a}-{b}"));
            }
            (a / PAGE_SIZE, b / PAGE_SIZE, format!("ofs={ofs}"))
        }
    };
    checked_range(first, last, &shown)?;
    Ok((owner, first, last))
}

/// A `task_newtask` event's new task; `T` is the type of its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NewTask<T> {
    pub(crate) pid: u32,
    /// `CLONE_THREAD`: a thread of its parent's group, not a process.
    pub(crate) thread: bool,
    /// `oom_score_adj` inherited from the parent.
    pub(crate) adj: i16,
    pub(crate) comm: Option<T>,
}

/// `task_newtask`: `pid=%d comm=%s clone_flags=%lx oom_score_adj=%hd`.
pub(super) fn new_task(
    payload: &str,
    perfetto: bool,
) -> std::result::Result<NewTask<&str>, String> {
    let pid = number(value(payload, "pid"), "pid=PID")?;
    let flags = value(payload, "clone_flags").ok_or("expected clone_flags=")?;
    let flags = kernel_hex(flags, perfetto).ok_or_else(|| {
        format!(
            "clone_flags={flags}, expected a number ({})",
            if perfetto { "decimal" } else { "hexadecimal" }
        )
    })?;
    Ok(NewTask {
        pid,
        thread: flags & CLONE_THREAD != 0,
        adj: adj(value(payload, "oom_score_adj"))?,
        comm: text_between(payload, "comm=", " clone_flags="),
    })
}

/// `B|PID|NAME` of an atrace marker.
pub(crate) fn begin_marker(payload: &str) -> Option<(u32, &str)> {
    let at = payload.find("B|")?;
    let rest = &payload[at + 2..];
    let (pid, name) = rest.split_once('|')?;
    Some((pid.trim().parse().ok()?, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folio_order_gives_pages() {
        assert_eq!(
            filemap_pages("dev 8:1 ino ff pfn=0x1000 ofs=16384 order=2", false),
            Ok((file_owner(8, 1, 0xff).unwrap(), 4, 4))
        );
    }
}
