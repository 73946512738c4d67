use super::*;

fn spec(preset: &str, keys: &str) -> ColumnSpec {
    let base =
        ColumnSpec::preset(preset).unwrap_or_else(|| ColumnSpec::empty(Delimiter::Byte(b',')));
    ColumnSpec::parse(base, keys).unwrap()
}

/// Read `text` with parsing on a thread of its own and on the caller's: the same
/// events, sizes, tables or error either way.
fn read_with(spec: &ColumnSpec, text: &str) -> Result<(Vec<Event>, Vec<u32>, Tables)> {
    let ahead = read_in(spec, text, true);
    let here = read_in(spec, text, false);
    match (&ahead, &here) {
        (Ok(a), Ok(h)) => assert_eq!(a, h),
        (Err(a), Err(h)) => assert_eq!(a.to_string(), h.to_string()),
        _ => panic!("ahead {:?}, here {:?}", ahead.is_ok(), here.is_ok()),
    }
    ahead
}

fn reader(spec: &ColumnSpec, text: &str, ahead: bool) -> Result<Reader> {
    Reader::new(
        Path::new("t.csv"),
        Box::new(std::io::Cursor::new(text.as_bytes().to_vec())),
        StoredBytes::default(),
        spec,
        ahead,
    )
}

fn read_in(spec: &ColumnSpec, text: &str, ahead: bool) -> Result<(Vec<Event>, Vec<u32>, Tables)> {
    read_through(reader(spec, text, ahead)?)
}

/// Every event `r` reads, in batches of 3, their sizes and the tables.
fn read_through(mut r: Reader) -> Result<(Vec<Event>, Vec<u32>, Tables)> {
    let mut events = Vec::new();
    let mut sizes = Vec::new();
    let mut batch = Vec::new();
    while r.read_batch(&mut batch, 3)? {
        events.extend_from_slice(&batch);
        if let Some(s) = r.batch_sizes() {
            assert_eq!(s.len(), batch.len());
            sizes.extend_from_slice(s);
        }
    }
    Ok((events, sizes, r.tables()?))
}

/// (time, process, page key, write) of each event.
fn accesses(events: &[Event], tables: &Tables) -> Vec<(u64, u32, PageKey, bool)> {
    events
        .iter()
        .map(|e| {
            (
                e.time_ns(),
                e.proc(),
                tables.pages[e.page() as usize],
                e.is_write(),
            )
        })
        .collect()
}

fn processes(tables: &Tables) -> Vec<(u32, &str)> {
    tables
        .processes
        .iter()
        .map(|p| (p.pid, p.name.as_str()))
        .collect()
}

/// Worked by hand: sector 7, 2 sectors is bytes 3584..4607, pages 0 and 1; sector 8,
/// 8 sectors is page 1 alone; 16 sectors from sector 16 are pages 2 and 3.
#[test]
fn mobile_block_requests_expand_into_the_pages_they_cover() {
    let (events, sizes, tables) = read_with(
        &spec("mobile-block", ""),
        "proces,device,rw_flag,sector,size,timestamp\n\
         loop40-2757,5,R,7,2,100.5\n\
         <...>-21515,5,W,8,8,100.0000000014999\n\
         PoolThread,6,R,16,16,101.0000000005\n",
    )
    .unwrap();
    let f = PageKey::file;
    assert_eq!(
        accesses(&events, &tables),
        vec![
            (0, 0, f(5, 0), false),
            (0, 0, f(5, 1), false),
            // Stamped before the line above: that line's time.
            (0, 1, f(5, 1), true),
            (500_000_001, 2, f(6, 2), false),
            (500_000_001, 2, f(6, 3), false),
        ]
    );
    assert!(sizes.is_empty());
    assert_eq!(
        processes(&tables),
        vec![(2757, "loop40"), (21515, ""), (0, "PoolThread")]
    );
}

/// MSR Cambridge: FILETIME ticks of 100 ns, byte offsets and sizes, `Read`/`Write`.
#[test]
fn msr_lines_read_in_bytes_and_filetime_ticks() {
    let (events, _, tables) = read_with(
        &spec("msr", ""),
        "128166372003061629,hm,1,Read,8192,4096,1331\n\
         128166372003061639,hm,1,Write,4000,200,1000\n\
         128166372003071629,hm,0,Read,0,0,5\n",
    )
    .unwrap();
    let f = PageKey::file;
    // 8192..12287 is page 2; 4000..4199 crosses pages 0 and 1; a length of 0 is nothing.
    assert_eq!(
        accesses(&events, &tables),
        vec![
            (0, 0, f(1, 2), false),
            (1000, 0, f(1, 0), true),
            (1000, 0, f(1, 1), true),
        ]
    );
    assert_eq!(processes(&tables), vec![(0, "hm")]);
}

/// blkparse: only Q lines count; `8,0` is MKDEV(8, 0); a flush (`FN`) moves nothing;
/// the summary after the events is passed over.
#[test]
fn blkparse_queue_lines_become_accesses() {
    let text = "  8,0    3        1     0.000000000   697  Q  WS 16 + 8 [kworker/u8:2]\n\
                \x20 8,0    3        2     0.000001000   697  G  WS 16 + 8 [kworker/u8:2]\n\
                \x20 8,16   1        3     0.000002500   700  Q  RA 0 + 16 [app]\n\
                \x20 8,16   1        4     0.000003000   700  Q  FN [app]\n\
                \x20 8,0    3        5     0.000004000   697  C  WS 16 + 8 [0]\n\
                CPU0 (8,0):\n\
                \x20Reads Queued:           0,        0KiB\t Writes Queued:           1,        4KiB\n";
    let (events, _, tables) = read_with(&spec("blkparse", ""), text).unwrap();
    let f = PageKey::file;
    assert_eq!(
        accesses(&events, &tables),
        vec![
            (0, 0, f(8 << 20, 2), true),
            (2500, 1, f(8 << 20 | 16, 0), false),
            (2500, 1, f(8 << 20 | 16, 1), false),
        ]
    );
    assert_eq!(
        processes(&tables),
        vec![(697, "kworker/u8:2"), (700, "app")]
    );
}

/// libCacheSim's CSV layout: one object a line with its size; times in µs.
#[test]
fn object_lines_carry_their_sizes() {
    let (events, sizes, tables) = read_with(
        &spec("libcachesim-csv", ""),
        "version,time,op,size,lbn\n1,5633898,2a,512,42932745\n1,5633899,2a,6656,40409911\n\
         1,5633899,2a,512,42932745\n",
    )
    .unwrap();
    let f = PageKey::file;
    assert_eq!(
        accesses(&events, &tables),
        vec![
            (0, 0, f(0, 42932745), false),
            (1000, 0, f(0, 40409911), false),
            (1000, 0, f(0, 42932745), false),
        ]
    );
    assert_eq!(sizes, vec![512, 6656, 512]);
    assert_eq!(events[0].page(), events[2].page());
}

#[test]
fn text_ids_named_columns_comments_quotes_and_tabs() {
    // Objects named by any text, each distinct text one number; times in ms.
    let s = spec(
        "",
        "delimiter=\\t, has-header=true, comment=#, obj-id-col=key, obj-id-is-num=false, \
         time-col=ts, time-unit=ms, op-col=op, read=get, write=set|delete, pid-col=pid",
    );
    let (events, _, tables) = read_with(
        &s,
        "# a comment before the header\nts\tkey\top\tpid\n\n1.5\t\"user:7\"\tget\t42\n\
         # between\n2\tuser:9\tset\t42\n3\tuser:7\tdelete\t43\n",
    )
    .unwrap();
    let f = PageKey::file;
    assert_eq!(
        accesses(&events, &tables),
        vec![
            (0, 0, f(0, 0), false),
            (500_000, 0, f(0, 1), true),
            (1_500_000, 1, f(0, 0), true),
        ]
    );
    assert_eq!(processes(&tables), vec![(42, ""), (43, "")]);
    // libCacheSim's text layout: whitespace, no time (a request's index stands for it).
    let (events, _, tables) = read_with(
        &spec("libcachesim-txt", ""),
        "42932745\n  42932746 \n42932745\n",
    )
    .unwrap();
    let times: Vec<u64> = events.iter().map(Event::time_ns).collect();
    assert_eq!(times, vec![0, 1, 2]);
    assert_eq!(tables.pages.len(), 2);
}

#[test]
fn times_round_to_the_nanosecond_in_every_unit() {
    for (text, unit, ns) in [
        ("100.0000000014999", 1_000_000_000, 100_000_000_001),
        ("100.0000000015", 1_000_000_000, 100_000_000_002),
        ("48750.608267999996", 1_000_000_000, 48_750_608_268_000),
        ("1.2345", 1_000, 1_235),
        (".5", 1_000, 500),
        ("7", 100, 700),
        ("0.4", 1, 0),
    ] {
        assert_eq!(decimal_to_ns(text.as_bytes(), unit), Some(ns), "{text}");
    }
    for bad in ["", ".", "1e3", "-1", "1.2.3", "18446744073709551616"] {
        assert_eq!(decimal_to_ns(bad.as_bytes(), 1), None, "{bad}");
    }
    assert_eq!(decimal_to_ns(b"18446744073709551615", 1_000), None);
}

/// A plain reading of a decimal time: the whole part times the unit, plus the first 19
/// decimals as an exact fraction in u128, rounded half up.
fn decimal_to_ns_by_hand(whole: u64, fraction: &str, unit_ns: u64) -> Option<u64> {
    let digits = &fraction[..fraction.len().min(19)];
    let mut ns = u128::from(whole) * u128::from(unit_ns);
    if !digits.is_empty() {
        let scaled = digits.parse::<u128>().unwrap() * u128::from(unit_ns);
        let denominator = 10u128.pow(digits.len() as u32);
        ns += scaled / denominator + u128::from((scaled % denominator) * 2 >= denominator);
    }
    u64::try_from(ns).ok()
}

proptest::proptest! {
    /// The fast paths (nine decimals or fewer in u64, exact when the unit is a whole number
    /// of steps) give what the exact reading gives, in every unit.
    #[test]
    fn times_read_as_the_exact_fraction_gives(
        whole in proptest::prop_oneof![0u64..1_000_000, proptest::num::u64::ANY],
        fraction in "[0-9]{0,25}",
        unit in proptest::sample::select(vec![1u64, 10, 100, 1_000, 1_000_000, 1_000_000_000]),
    ) {
        let text = if fraction.is_empty() { whole.to_string() } else { format!("{whole}.{fraction}") };
        proptest::prop_assert_eq!(
            decimal_to_ns(text.as_bytes(), unit),
            decimal_to_ns_by_hand(whole, &fraction, unit),
            "{}", text
        );
    }

    /// Decimal integers read as the standard library reads them, up to and past 2^64.
    #[test]
    fn integers_read_as_the_standard_library_reads_them(text in "[0-9]{1,22}|[0-9a-f+ -]{0,6}") {
        proptest::prop_assert_eq!(
            crate::trace::shared::parse_u64(text.as_bytes()),
            if text.starts_with('+') { None } else { text.parse::<u64>().ok() }
        );
    }
}

/// Found when the splitting was rewritten: with more columns than the spec names, the
/// fields taken were neither trimmed nor unquoted.
#[test]
fn fields_are_trimmed_and_unquoted_when_the_line_has_more() {
    let s = spec(
        "",
        "has-header=true, time-col=1, obj-id-col=2, obj-size-col=3",
    );
    let (events, sizes, tables) = read_with(
        &s,
        "time,id,size,extra\n1,\"5\",100,x\n2, 6 ,\"200\" ,y,z\n3,5,300\n",
    )
    .unwrap();
    assert_eq!(sizes, vec![100, 200, 300]);
    let keys: Vec<PageKey> = events
        .iter()
        .map(|e| tables.pages[e.page() as usize])
        .collect();
    assert_eq!(
        keys,
        vec![
            PageKey::file(0, 5),
            PageKey::file(0, 6),
            PageKey::file(0, 5)
        ]
    );
}

/// A pid written as a plain decimal is looked up by its number, any other spelling by its
/// text: `7` and `07` stay two processes, as their texts differ.
#[test]
fn pids_are_one_process_per_spelling() {
    let s = spec("", "time-col=1, pid-col=2, obj-id-col=3");
    let (events, _, tables) = read_with(
        &s,
        "1,7,1\n2,07,1\n3,7,2\n4,5000000,3\n5,07,4\n6,5000000,5\n7,0,6\n",
    )
    .unwrap();
    let procs: Vec<u32> = events.iter().map(Event::proc).collect();
    assert_eq!(procs, vec![0, 1, 0, 2, 1, 2, 3]);
    assert_eq!(
        processes(&tables),
        vec![(7, ""), (7, ""), (5_000_000, ""), (0, "")]
    );
}

/// A plain split of a line: at `d`, at most `limit` fields, each trimmed of blanks and
/// then of one pair of surrounding quotes.
fn split_by_hand(line: &str, d: char, limit: usize) -> Vec<String> {
    line.trim_end_matches(|c: char| c.is_ascii_whitespace())
        .split(d)
        .take(limit)
        .map(|f| {
            let f = f.trim_matches(|c: char| c.is_ascii_whitespace());
            match f.strip_prefix('"').and_then(|g| g.strip_suffix('"')) {
                Some(inner) if f.len() >= 2 => inner.to_string(),
                _ => f.to_string(),
            }
        })
        .collect()
}

proptest::proptest! {
    /// Lines split eight bytes at a time give the fields a plain split gives, at any
    /// limit, with blanks and quotes anywhere.
    #[test]
    fn lines_split_as_a_plain_split_does(
        line in "[a,; \t\"\r0-9]{0,40}",
        limit in 1usize..8,
        delimiter in proptest::sample::select(vec![b',', b';', b'\t']),
    ) {
        let mut r = Parser::with_stored(
            Path::new("t.csv"),
            Box::new(std::io::Cursor::new(b"1\n".to_vec())),
            StoredBytes::default(),
            &ColumnSpec::parse(ColumnSpec::empty(Delimiter::Byte(delimiter)), "obj-id-col=1").unwrap(),
        ).unwrap();
        r.split(line.as_bytes(), limit);
        let got: Vec<String> = r
            .spans
            .iter()
            .map(|&(a, b)| String::from_utf8(line.as_bytes()[a..b].to_vec()).unwrap())
            .collect();
        proptest::prop_assert_eq!(got, split_by_hand(&line, char::from(delimiter), limit));
    }
}

#[test]
fn bad_lines_name_the_line_the_column_and_what_was_expected() {
    let header = "proces,device,rw_flag,sector,size,timestamp\n";
    let block = spec("mobile-block", "");
    for (body, expected) in [
        (
            "a-1,5,X,7,2,1.0\n",
            "line 2: column 3 (`rw_flag`, op-col): `X`, expected a read (R) or a write (W)",
        ),
        (
            "a-1,5,R,-7,2,1.0\n",
            "line 2: column 4 (`sector`, offset-col): `-7`",
        ),
        ("a-1,5,R,7,2\n", "line 2: 5 fields, expected at least 6"),
        (
            "a-1,5,R,7,2,1.5e3\n",
            "column 6 (`timestamp`, time-col): `1.5e3`, expected a time in s",
        ),
        ("a-1,5,R,7,9999999,1\n", "expected at most 1073741824"),
        ("a-1,5,R,36028797018963968,1,1\n", "pass 64 bits"),
        (
            "a-1,x:y,R,7,2,1\n",
            "expected a device number or major,minor",
        ),
        ("a-1,5,R,7,0,1\n", "no request covers a page"),
    ] {
        let message = read_with(&block, &format!("{header}{body}"))
            .unwrap_err()
            .to_string();
        assert!(message.contains(expected), "{body:?}: {message}");
        assert!(message.starts_with("t.csv: "), "{message}");
    }
    let message = read_with(&block, "time_ns,pid\n").unwrap_err().to_string();
    assert!(
        message.contains("line 1: the header has no column `timestamp` (time-col); its columns are `time_ns`, `pid`"),
        "{message}"
    );
    assert!(read_with(&block, "")
        .unwrap_err()
        .to_string()
        .contains("empty"));
    // Text ids only when asked for; sizes within 32 bits; names need a header.
    let objects = spec("", "obj-id-col=1, obj-size-col=2");
    let message = read_with(&objects, "abc,1\n").unwrap_err().to_string();
    assert!(message.contains("obj-id-is-num=false"), "{message}");
    let message = read_with(&objects, "1,4294967296\n")
        .unwrap_err()
        .to_string();
    assert!(message.contains("expected at most 4294967295"), "{message}");
    let message = read_with(&spec("", "obj-id-col=key"), "1\n")
        .unwrap_err()
        .to_string();
    assert!(message.contains("needs has-header=true"), "{message}");
    let message = read_with(&spec("", "time-col=1"), "1\n")
        .unwrap_err()
        .to_string();
    assert!(message.contains("names no column to read"), "{message}");
}

/// A crafted file of huge requests stops at the bound on pages per byte read.
#[test]
fn requests_are_bounded_by_the_bytes_read() {
    let line = "a-1,5,R,0,2097152,1\n"; // 1 GiB: 262,144 pages a line
    let text = format!("{MOBILE_BLOCK_HEADER}\n{}", line.repeat(8));
    let message = read_with(&spec("mobile-block", ""), &text)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("page accesses, the most its first"),
        "{message}"
    );
}

proptest::proptest! {
    /// Pages are numbered in order of first appearance, whatever path numbers them: an
    /// object trace without a device column, one with a device column (keys packed in 64
    /// bits), and one whose device or block index does not fit (every page moved into the
    /// general interner at that line), each read in batches of any size.
    #[test]
    fn pages_are_numbered_in_order_of_first_appearance(
        lines in proptest::collection::vec(
            (0u64..40, 0u32..4, 1u32..9000, proptest::bool::ANY, 0usize..12), 1..200),
        batch in 1usize..70,
        layout in 0usize..3,
        ahead in proptest::bool::ANY,
    ) {
        // A device of 2^32 or more, or a block past 2^32 pages, is rare: the line that
        // has one moves the numbering to the general interner.
        let devices = [0u64, 5, 8 << 20 | 1, 1 << 32, 3];
        let mut text = String::from("time,pid,id,size,op,dev\n");
        let mut keys = Vec::new();
        for (i, (id, pid, size, write, d)) in lines.iter().enumerate() {
            let op = if *write { 'W' } else { 'R' };
            let device = if layout == 0 { 0 } else { devices[d % devices.len()] };
            let id = if layout == 2 && *d == 11 { id + (1 << 32) * 8 } else { *id };
            text.push_str(&format!("{i},{pid},{id},{size},{op},{device}\n"));
            match layout {
                2 => {
                    // Block mode: `size` bytes from byte `id` * 512.
                    let (first, last) = (id * 512 / 4096, (id * 512 + u64::from(*size) - 1) / 4096);
                    keys.extend((first..=last).map(|p| PageKey::file(device, p)));
                }
                _ => keys.push(PageKey::file(device, id)),
            }
        }
        let spec_keys = match layout {
            0 => "has-header=true, time-col=1, pid-col=2, obj-id-col=3, obj-size-col=4, op-col=5",
            1 => "has-header=true, time-col=1, pid-col=2, obj-id-col=3, obj-size-col=4, op-col=5, device-col=6",
            _ => "has-header=true, time-col=1, pid-col=2, offset-col=3, length-col=4, op-col=5, device-col=6, offset-unit=512, length-unit=1",
        };
        let mut r = Reader::new(
            Path::new("t.csv"),
            Box::new(std::io::Cursor::new(text.into_bytes())),
            StoredBytes::default(),
            &spec("", spec_keys),
            ahead,
        ).unwrap();
        let mut events = Vec::new();
        let mut b = Vec::new();
        while r.read_batch(&mut b, batch).unwrap() {
            events.extend_from_slice(&b);
        }
        let tables = r.tables().unwrap();
        // By hand: the next id for each key not seen before.
        let mut seen = std::collections::HashMap::new();
        let expected: Vec<u32> = keys
            .iter()
            .map(|k| { let next = seen.len() as u32; *seen.entry(*k).or_insert(next) })
            .collect();
        let ids: Vec<u32> = events.iter().map(|e| e.page()).collect();
        proptest::prop_assert_eq!(ids, expected);
        proptest::prop_assert_eq!(tables.pages.len(), seen.len());
        for (key, id) in seen {
            proptest::prop_assert_eq!(tables.pages[id as usize], key);
        }
    }
}

/// `text` read by `spec` with every line split and read field by field: the reader
/// without its one-pass reading of plain lines.
fn read_split(spec: &ColumnSpec, text: &str) -> Result<(Vec<Event>, Vec<u32>, Tables)> {
    let mut r = reader(spec, text, false)?;
    let Parsing::Here(parser) = &mut r.parsing else {
        unreachable!("parsed on the caller's thread");
    };
    assert!(parser.plain.is_some(), "{spec} has a one-pass reading");
    parser.plain = None;
    read_through(r)
}

/// One field of a generated line: mostly what a real trace holds, often what it should
/// not (blanks, quotes, signs, points, long numbers, words, nothing).
fn any_field() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    prop_oneof![
        6 => "[1-9][0-9]{0,8}",
        2 => "[0-9]{1,3}\\.[0-9]{1,12}",
        1 => "0[0-9]{0,3}",
        1 => "[0-9]{18,22}",
        2 => proptest::sample::select(vec!["R", "W", "r", "w", "Read", "Write", "WS", "FN", "X"])
            .prop_map(str::to_string),
        1 => "[a-z<>.]{1,6}-[0-9]{1,5}",
        1 => "[ \"]?[0-9a-z.+:-]{0,4}[ \"]?",
        2 => "[ \"\t][0-9]{1,3}[ \"]?",
        1 => "\"[a-z]{1,4}-[0-9]{1,3}\"",
    ]
}

/// A well-formed field made of a number.
type FieldOf = fn(u64) -> String;

proptest::proptest! {
    /// The one-pass reading of plain lines gives what splitting every line gives: the
    /// same events, sizes and tables, or the same error, on lines of every kind of
    /// field, for object and block layouts, numeric and text ids, spellings and RWBS,
    /// pids alone (read as numbers) and beside a process column.
    #[test]
    fn lines_read_in_one_pass_read_as_split_lines_do(
        lines in proptest::collection::vec(
            (
                proptest::collection::vec(any_field(), 5),
                proptest::collection::vec(0u8..24, 5),
                proptest::collection::vec(1u64..100_000, 5),
            ),
            1..40,
        ),
        layout in 0usize..6,
    ) {
        let keys = [
            "time-col=1, pid-col=2, obj-id-col=3, op-col=4, read=R|r|Read, write=W|w|Write",
            "time-col=5, time-unit=s, device-col=1, op-col=2, offset-col=3, length-col=4, \
             offset-unit=sector, length-unit=byte, read=R, write=W",
            "time-col=2, obj-id-col=1, obj-id-is-num=false, obj-size-col=3, time-unit=us",
            "time-col=4, process-col=1, process-form=comm-tid, op-col=2, op-form=rwbs, \
             offset-col=3",
            "delimiter=;, obj-id-col=2, pid-col=3, time-col=1, time-unit=ms",
            "time-col=1, pid-col=2, process-col=3, obj-id-col=4",
        ];
        // What each layout's columns hold in a well-formed line, given a number.
        let good: [&[FieldOf]; 6] = [
            &[
                |n| n.to_string(),
                |n| (n % 50).to_string(),
                |n| n.to_string(),
                |n| ["R", "W", "Read", "w"][n as usize % 4].to_string(),
            ],
            &[
                |n| (n % 3).to_string(),
                |n| ["R", "W"][n as usize % 2].to_string(),
                |n| n.to_string(),
                |n| (n % 20_000).to_string(),
                |n| format!("{}.{:03}", n / 1000, n % 1000),
            ],
            &[|n| format!("obj{}", n % 30), |n| n.to_string(), |n| n.to_string()],
            &[
                |n| format!("app-{}", n % 7),
                |n| ["R", "W", "WS", "FN"][n as usize % 4].to_string(),
                |n| n.to_string(),
                |n| n.to_string(),
            ],
            &[|n| n.to_string(), |n| n.to_string(), |n| (n % 50).to_string()],
            &[
                |n| n.to_string(),
                |n| (n % 20).to_string(),
                |n| format!("app{}", n % 3),
                |n| n.to_string(),
            ],
        ];
        let spec = spec("", keys[layout]);
        let delimiter = if layout == 4 { ";" } else { "," };
        let mut text = String::new();
        for (any, choice, number) in &lines {
            let fields: Vec<String> = good[layout]
                .iter()
                .enumerate()
                .filter(|&(i, _)| choice[i] != 1)
                .map(|(i, field)| if choice[i] == 0 { any[i].clone() } else { field(number[i]) })
                .collect();
            text.push_str(&fields.join(delimiter));
            text.push('\n');
        }
        let one_pass = read_in(&spec, &text, false);
        let split = read_split(&spec, &text);
        match (&one_pass, &split) {
            (Ok(a), Ok(b)) => proptest::prop_assert_eq!(a, b),
            (Err(a), Err(b)) => proptest::prop_assert_eq!(a.to_string(), b.to_string()),
            _ => proptest::prop_assert!(
                false,
                "one pass {:?}, split {:?}",
                one_pass.as_ref().map(|r| r.0.len()),
                split.as_ref().map(|r| r.0.len())
            ),
        }
    }
}
