//! The grammar of an ftrace line: what kind of line it is and, for an event line, its
//! head (task, TGID, CPU, timestamp, event name) and the payload left to the event.

/// The head of an event: its task, time and name (for a text line, also its payload).
pub(crate) struct Head<'a> {
    pub(crate) comm: Option<&'a str>,
    pub(crate) pid: u32,
    pub(crate) tgid: Option<u32>,
    pub(crate) time_ns: u64,
    pub(crate) event: &'a str,
    pub(crate) payload: &'a str,
}

pub(super) enum Line<'a> {
    Blank,
    Comment,
    Lost(u64),
    /// An HTML tag line of a systrace page.
    Markup,
    /// A header line a capture tool writes before the events: atrace's `TRACE:` and
    /// `capturing trace...`, trace-cmd's `version = N`, `cpus=N`, `CPU N is empty`.
    Header,
    /// Not an event line; malformed once events have started, and before them with
    /// [`ImportOptions::strict`](super::ImportOptions::strict) unless the input is an
    /// HTML page.
    Other,
    Event(Head<'a>),
}

/// Split a line into its head, or say what kind of non-event line it is. `Err` says what
/// was expected of a line that looks like an event and is not one.
pub(super) fn classify(line: &str, perfetto: bool) -> std::result::Result<Line<'_>, String> {
    let trimmed = line.trim_start();
    if trimmed.is_empty() {
        return Ok(Line::Blank);
    }
    if trimmed.starts_with('#') {
        return Ok(Line::Comment);
    }
    if let Some(rest) = trimmed.strip_prefix("CPU:") {
        if let Some(lost) = rest.split_once("[LOST ") {
            let n = lost.1.split_whitespace().next().unwrap_or("");
            return n
                .parse::<u64>()
                .map(Line::Lost)
                .map_err(|_| "expected `CPU:N [LOST M EVENTS]`".to_string());
        }
    }
    // The CPU column is the first ` [NNN]` whose left is a task and whose right is a
    // timestamp and an event: a task name may itself hold ` [12]` (names may contain
    // spaces and brackets), so a candidate is checked on both sides.
    let mut first_error = None;
    let mut from = 0;
    while let Some((cpu_start, cpu_end)) = cpu_field(line, from) {
        match head(line, cpu_start, cpu_end, perfetto) {
            Ok(h) => return Ok(Line::Event(h)),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
        from = cpu_start + 1;
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    // A systrace HTML page wraps the text in tags.
    if trimmed.starts_with('<') && trimmed.ends_with('>') {
        return Ok(Line::Markup);
    }
    let t = trimmed.trim_end();
    let header = t == "TRACE:"
        || t.starts_with("capturing trace...")
        || t.strip_prefix("version = ")
            .is_some_and(|v| v.parse::<u32>().is_ok())
        || t.strip_prefix("cpus=")
            .is_some_and(|v| v.parse::<u32>().is_ok())
        || t.strip_prefix("CPU ")
            .and_then(|v| v.strip_suffix(" is empty"))
            .is_some_and(|v| v.parse::<u32>().is_ok());
    Ok(if header { Line::Header } else { Line::Other })
}

/// The head of an event line whose CPU column is `line[cpu_start..cpu_end]`.
fn head(
    line: &str,
    cpu_start: usize,
    cpu_end: usize,
    perfetto: bool,
) -> std::result::Result<Head<'_>, String> {
    let before = line[..cpu_start].trim();
    let after = &line[cpu_end..];
    // Task and optional TGID column.
    let (task, tgid) = match before.strip_suffix(')') {
        Some(inner) => {
            let open = inner
                .rfind('(')
                .ok_or("expected `(TGID)` before the CPU column")?;
            let tgid_text = inner[open + 1..].trim();
            let tgid = if tgid_text.chars().all(|c| c == '-') {
                None
            } else {
                Some(
                    tgid_text
                        .parse::<u32>()
                        .map_err(|_| format!("TGID `{tgid_text}`, expected a number or -----"))?,
                )
            };
            (inner[..open].trim_end(), tgid)
        }
        None => (before, None),
    };
    let (comm, pid) = task
        .rsplit_once('-')
        .ok_or_else(|| format!("task `{task}`, expected COMM-PID"))?;
    let pid = pid
        .parse::<u32>()
        .map_err(|_| format!("task `{task}`, expected COMM-PID with a numeric PID"))?;
    let comm = if comm == "<...>" || comm.is_empty() || (perfetto && comm == "<unknown>") {
        None
    } else {
        Some(comm)
    };
    // `[flags] SECONDS.FRACTION: EVENT: PAYLOAD`
    let (stamp_part, rest) = after
        .split_once(": ")
        .or_else(|| after.strip_suffix(':').map(|s| (s, "")))
        .ok_or("expected `SECONDS: EVENT: FIELDS` after the CPU column")?;
    let stamp = stamp_part
        .split_whitespace()
        .last()
        .ok_or("expected a timestamp after the CPU column")?;
    let time_ns = timestamp(stamp)?;
    let rest = rest.trim_start();
    let (event, payload) = match rest.split_once(':') {
        Some((event, payload)) => (event.trim(), payload.trim()),
        None => return Err("expected `EVENT: FIELDS` after the timestamp".to_string()),
    };
    if event.is_empty() || event.contains(char::is_whitespace) {
        return Err(format!("event name `{event}`, expected one word"));
    }
    Ok(Head {
        comm,
        pid,
        tgid,
        time_ns,
        event,
        payload,
    })
}

/// Byte range of the first ` [NNN]` column (digits in brackets after a space) at or
/// after byte `from`.
fn cpu_field(line: &str, mut from: usize) -> Option<(usize, usize)> {
    let bytes = line.as_bytes();
    while let Some(rel) = line.get(from..)?.find('[') {
        let open = from + rel;
        let mut i = open + 1;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i > open + 1
            && i < bytes.len()
            && bytes[i] == b']'
            && open > 0
            && bytes[open - 1] == b' '
        {
            return Some((open, i + 1));
        }
        from = open + 1;
    }
    None
}

/// `SECONDS.FRACTION` (up to 9 fraction digits) in nanoseconds.
fn timestamp(text: &str) -> std::result::Result<u64, String> {
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let Some((secs, frac)) = text.split_once('.') else {
        if digits(text) {
            return Err(format!(
                "timestamp `{text}` without a fraction: expected SECONDS.FRACTION; a counter clock (trace_clock counter, x86-tsc) does not count seconds, capture with the local, global, mono or boot clock"
            ));
        }
        return Err(format!("timestamp `{text}`, expected SECONDS.FRACTION"));
    };
    if !digits(secs) || !digits(frac) || frac.len() > 9 {
        return Err(format!(
            "timestamp `{text}`, expected SECONDS.FRACTION (up to 9 fraction digits)"
        ));
    }
    let out_of_range = || format!("timestamp `{text}` out of range: more than 2^64 ns (584 years)");
    let secs: u64 = secs.parse().map_err(|_| out_of_range())?;
    let mut ns: u64 = frac.parse().map_err(|_| out_of_range())?;
    for _ in frac.len()..9 {
        ns *= 10;
    }
    secs.checked_mul(1_000_000_000)
        .and_then(|s| s.checked_add(ns))
        .ok_or_else(out_of_range)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::ftrace::file_owner;
    use crate::trace::ftrace::payload::{filemap_key, filemap_pages, text_between};

    #[test]
    fn heads_of_the_three_layouts() {
        let android = "           <...>-3493  (-----) [004] .... 14594.815353: mm_filemap_add_to_page_cache: dev 253:6 ino 113b page=0000000069e2b98a pfn=628464 ofs=2723840";
        let Ok(Line::Event(h)) = classify(android, false) else {
            panic!("android line")
        };
        assert_eq!((h.comm, h.pid, h.tgid), (None, 3493, None));
        assert_eq!(h.time_ns, 14_594_815_353_000);
        assert_eq!(h.event, "mm_filemap_add_to_page_cache");
        assert_eq!(
            filemap_pages(h.payload, false),
            Ok((file_owner(253, 6, 0x113b).unwrap(), 2723840 / 4096, 1))
        );

        let linux =
            "   cat-812     [001] d..2.   120.000001: mm_filemap_fault: dev=8:1 ino=1a ofs=8192";
        let Ok(Line::Event(h)) = classify(linux, false) else {
            panic!("linux line")
        };
        assert_eq!((h.comm, h.pid, h.tgid), (Some("cat"), 812, None));
        assert_eq!(
            filemap_key(h.payload, false),
            Ok((file_owner(8, 1, 0x1a).unwrap(), 2))
        );

        let tgid = "  Chrome IO-thread-77 (     70) [000] ..... 5.5: task_rename: pid=70 oldcomm=a newcomm=b c oom_score_adj=0";
        let Ok(Line::Event(h)) = classify(tgid, false) else {
            panic!("tgid line")
        };
        assert_eq!(
            (h.comm, h.pid, h.tgid),
            (Some("Chrome IO-thread"), 77, Some(70))
        );
        assert_eq!(h.time_ns, 5_500_000_000);
        assert_eq!(
            text_between(h.payload, "newcomm=", " oom_score_adj="),
            Some("b c")
        );
    }
}
