//! Storing files on the compressed flash file system: page decisions of every write
//! policy on known pages (zeros, random bytes, English text, pages built to save an
//! exact number of bytes), round trips of what is stored, F2FS cluster accounting,
//! edge-size files, folder analysis and invariants on random data.

use std::path::PathBuf;

use mobmem::mm::fs::analyze::collect_files;
use mobmem::mm::fs::store::{
    shannon_entropy, store_file_with_bytes, F2FS_COMPRESS_HEADER_BYTES, JFFS2_NODE_HEADER_BYTES,
};
use mobmem::mm::fs::{
    analyze_paths, store_file, store_file_policies, Codec, StoredPage, WritePolicy, PAGE_SIZE,
};
use proptest::prelude::*;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

const PAGE: u32 = PAGE_SIZE as u32;

fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut bytes = vec![0; len];
    ChaCha8Rng::seed_from_u64(seed).fill_bytes(&mut bytes);
    bytes
}

/// `len` bytes of English: the GPL-3 text where the system has it, else notes kept
/// with the tests, repeated as needed.
fn english(len: usize) -> Vec<u8> {
    let gpl = std::fs::read("/usr/share/common-licenses/GPL-3").unwrap_or_default();
    let source: &[u8] = if gpl.len() >= len {
        &gpl
    } else {
        include_bytes!("data/flash-notes.txt")
    };
    source.iter().copied().cycle().take(len).collect()
}

fn page(compressed: bool, data_len: u32, stored_len: u32) -> StoredPage {
    StoredPage::new(compressed, data_len, stored_len)
}

/// An F2FS cluster of four pages compressed into one block, carried by its first page;
/// the last page holds `last_len` bytes of the file.
fn one_block_cluster(last_len: u32) -> [StoredPage; 4] {
    [
        page(true, PAGE, PAGE),
        page(true, PAGE, 0),
        page(true, PAGE, 0),
        page(true, last_len, 0),
    ]
}

fn f2fs4() -> WritePolicy {
    WritePolicy::F2fs { cluster_pages: 4 }
}

#[test]
fn zero_pages_are_compressed_under_every_policy() {
    // Four pages, so that F2FS has a full cluster.
    let data = vec![0u8; 4 * PAGE_SIZE];
    assert_eq!(shannon_entropy(&data), 0.0);
    for codec in Codec::available() {
        for policy in WritePolicy::defaults() {
            let stored = store_file("zeros", &data, codec, &policy).unwrap();
            assert_eq!(stored.compressed_pages(), 4, "{codec} {policy}");
            assert!(
                stored.stored_bytes() < 200 || policy == f2fs4(),
                "{codec} {policy}"
            );
        }
        // F2FS: the cluster fits one block, carried by its first page.
        let stored = store_file("zeros", &data, codec, &f2fs4()).unwrap();
        assert_eq!(stored.pages, one_block_cluster(PAGE));
    }
}

#[test]
fn random_pages_stay_raw_under_every_policy() {
    let data = random_bytes(4 * PAGE_SIZE, 7);
    assert!(shannon_entropy(&data[..PAGE_SIZE]) > 7.9);
    for codec in Codec::available() {
        // The codecs expand random bytes, so even stock JFFS2 keeps them raw.
        let packed = codec.compress(&data[..PAGE_SIZE]).unwrap();
        assert!(packed.len() > PAGE_SIZE, "{codec}: {}", packed.len());
        for policy in WritePolicy::defaults() {
            let stored = store_file("random", &data, codec, &policy).unwrap();
            assert_eq!(stored.compressed_pages(), 0, "{codec} {policy}");
            assert_eq!(stored.stored_bytes(), data.len() as u64);
        }
    }
}

#[test]
fn english_text_is_compressed_under_every_policy() {
    let data = english(4 * PAGE_SIZE);
    assert!(shannon_entropy(&data[..PAGE_SIZE]) < 5.5);
    for codec in Codec::available() {
        let packed = codec.compress(&data[..PAGE_SIZE]).unwrap();
        assert!(
            packed.len() < PAGE_SIZE * 3 / 4,
            "{codec}: {}",
            packed.len()
        );
        for policy in WritePolicy::defaults() {
            let stored = store_file("text", &data, codec, &policy).unwrap();
            assert_eq!(stored.compressed_pages(), 4, "{codec} {policy}");
            let stored_bytes = stored.stored_bytes();
            assert!(
                stored_bytes <= data.len() as u64 * 3 / 4,
                "{codec} {policy}: {stored_bytes}"
            );
        }
    }
}

#[test]
fn entropy_check_skips_repeated_high_entropy_bytes_that_would_compress() {
    // 256 random bytes, 16 times: about 7.2 bits per byte, yet almost all repeats.
    let data: Vec<u8> = random_bytes(256, 3).repeat(16);
    assert!(shannon_entropy(&data) > 6.4);
    for codec in Codec::available() {
        let stock = store_file("pattern", &data, codec, &WritePolicy::Stock).unwrap();
        assert_eq!(stock.compressed_pages(), 1, "{codec}");
        let entropy = WritePolicy::Entropy {
            max_bits_per_byte: 6.4,
        };
        let checked = store_file("pattern", &data, codec, &entropy).unwrap();
        assert_eq!(checked.pages, [page(false, PAGE, PAGE)], "{codec}");
    }
}

/// A page of random bytes whose first `prefix` bytes are zeros.
fn zero_prefixed(seed: u64, prefix: usize) -> Vec<u8> {
    let mut bytes = random_bytes(PAGE_SIZE, seed);
    bytes[..prefix].fill(0);
    bytes
}

/// A page that `codec` shortens by exactly `saving` bytes, if one is found.
fn page_saving(codec: Codec, saving: usize) -> Option<Vec<u8>> {
    for seed in 0..4 {
        for prefix in 0..600 {
            let bytes = zero_prefixed(seed, prefix);
            let packed = codec.compress(&bytes).unwrap().len();
            if packed + saving == PAGE_SIZE {
                return Some(bytes);
            }
        }
    }
    None
}

#[test]
fn threshold_boundary_on_real_pages() {
    let paper = WritePolicy::paper();
    let cases = [(49, false), (50, true), (51, true)];
    // zstd is covered below: its output never lands near the threshold.
    for codec in [Codec::Zlib, Codec::Lzo, Codec::Lz4] {
        if !codec.is_available() {
            continue;
        }
        for (saving, kept) in cases {
            let data = page_saving(codec, saving)
                .unwrap_or_else(|| panic!("{codec}: no page saving {saving} bytes"));
            let stored = store_file("edge", &data, codec, &paper).unwrap();
            let expected = if kept {
                page(true, PAGE, PAGE - saving as u32)
            } else {
                page(false, PAGE, PAGE)
            };
            assert_eq!(stored.pages, [expected], "{codec}, saving {saving}");
            // Stock keeps every one of them compressed.
            let stock = store_file("edge", &data, codec, &WritePolicy::Stock).unwrap();
            assert_eq!(stock.compressed_pages(), 1, "{codec}");
            stored.verify(&data, &paper).unwrap();
        }
    }
}

#[test]
fn zstd_never_saves_just_a_few_bytes_on_a_page() {
    // zstd stores a block raw unless compressing it gains about 1/64 of it
    // (ZSTD_minGain), so on a 4 KiB page the saving jumps from negative to over 50.
    for prefix in 0..300 {
        let bytes = zero_prefixed(0, prefix);
        let packed = Codec::Zstd.compress(&bytes).unwrap().len() as i64;
        let saving = PAGE_SIZE as i64 - packed;
        assert!(
            !(0..50).contains(&saving),
            "prefix {prefix}: saving {saving}"
        );
    }
}

#[test]
fn every_codec_and_policy_reads_back_every_kind_of_page() {
    let mut data = Vec::new();
    data.extend(vec![0u8; PAGE_SIZE]);
    data.extend(random_bytes(PAGE_SIZE, 1));
    data.extend(english(PAGE_SIZE));
    data.extend(zero_prefixed(2, 100));
    data.extend(english(3 * PAGE_SIZE));
    data.extend(random_bytes(1000, 4));
    for codec in Codec::available() {
        for policy in WritePolicy::defaults() {
            let with_bytes = store_file_with_bytes("mixed", &data, codec, &policy).unwrap();
            assert_eq!(with_bytes.read_back().unwrap(), data, "{codec} {policy}");
            let stored = store_file("mixed", &data, codec, &policy).unwrap();
            assert_eq!(stored, with_bytes.file);
            stored.verify(&data, &policy).unwrap();
            // What is on flash is what the page table says.
            let on_flash: usize = with_bytes.extents.iter().map(|e| e.bytes.len()).sum();
            if policy.cluster_pages() == 1 {
                assert_eq!(on_flash as u64, stored.stored_bytes(), "{codec} {policy}");
            }
        }
    }
}

#[test]
fn verify_catches_a_page_table_that_is_not_the_data() {
    let data = english(2 * PAGE_SIZE);
    let mut stored = store_file("t", &data, Codec::Lz4, &WritePolicy::Stock).unwrap();
    assert!(stored.verify(&data, &WritePolicy::Stock).is_ok());
    assert!(stored
        .verify(&random_bytes(2 * PAGE_SIZE, 9), &WritePolicy::Stock)
        .is_err());
    stored.pages[1].compressed = false;
    assert!(stored.verify(&data, &WritePolicy::Stock).is_err());
}

#[test]
fn f2fs_cluster_accounting_by_hand() {
    let zeros = vec![0u8; PAGE_SIZE];
    let random = |seed| random_bytes(PAGE_SIZE, seed);
    // Cluster 0: 2 zero pages, 2 random ones: compresses to a little over 8192 bytes,
    //   3 blocks with the header, one fewer than 4 -> compressed, blocks on pages 0..3.
    // Cluster 1: 1 zero page, 3 random: over 12264 bytes, no block saved -> raw.
    // Cluster 2: 4 zero pages -> 1 block.
    // Then 1 zero page and 10 bytes: a partial cluster, never compressed.
    let mut data = Vec::new();
    for part in [&zeros, &zeros, &random(1), &random(2)] {
        data.extend_from_slice(part);
    }
    for part in [&zeros, &random(3), &random(4), &random(5)] {
        data.extend_from_slice(part);
    }
    for _ in 0..4 {
        data.extend_from_slice(&zeros);
    }
    data.extend_from_slice(&zeros);
    data.extend_from_slice(&[0; 10]);

    for codec in Codec::available() {
        let second = codec.compress(&data[4 * PAGE_SIZE..8 * PAGE_SIZE]).unwrap();
        assert!(second.len() + F2FS_COMPRESS_HEADER_BYTES > 3 * PAGE_SIZE);

        let stored = store_file("clusters", &data, codec, &f2fs4()).unwrap();
        let expected = [
            page(true, PAGE, PAGE),
            page(true, PAGE, PAGE),
            page(true, PAGE, PAGE),
            page(true, PAGE, 0),
            page(false, PAGE, PAGE),
            page(false, PAGE, PAGE),
            page(false, PAGE, PAGE),
            page(false, PAGE, PAGE),
            page(true, PAGE, PAGE),
            page(true, PAGE, 0),
            page(true, PAGE, 0),
            page(true, PAGE, 0),
            page(false, PAGE, PAGE),
            page(false, 10, 10),
        ];
        assert_eq!(stored.pages, expected, "{codec}");
        let summary = stored.summary();
        assert_eq!(summary.pages, 14);
        assert_eq!(summary.compressed_pages, 8);
        assert_eq!(summary.raw_pages, 6);
        assert_eq!(summary.data_bytes, 13 * PAGE_SIZE as u64 + 10);
        assert_eq!(
            summary.stored_bytes,
            (3 + 4 + 1 + 1) * PAGE_SIZE as u64 + 10
        );
        // One node per page that stores bytes: 3 + 4 + 1 + 2.
        assert_eq!(summary.header_bytes, 10 * JFFS2_NODE_HEADER_BYTES);
        stored.verify(&data, &f2fs4()).unwrap();
    }
}

#[test]
fn f2fs_full_cluster_may_end_in_a_partial_page() {
    // Three pages and 100 bytes of zeros: a full cluster of 4, compressed to 1 block.
    let data = vec![0u8; 3 * PAGE_SIZE + 100];
    for codec in Codec::available() {
        let stored = store_file("tail", &data, codec, &f2fs4()).unwrap();
        assert_eq!(stored.pages, one_block_cluster(100));
        stored.verify(&data, &f2fs4()).unwrap();
    }
}

#[test]
fn empty_and_one_byte_files() {
    for codec in Codec::available() {
        for policy in WritePolicy::defaults() {
            let empty = store_file("empty", &[], codec, &policy).unwrap();
            assert!(empty.pages.is_empty());
            assert_eq!(empty.summary(), Default::default());
            empty.verify(&[], &policy).unwrap();

            // One byte grows under every codec, and UBIFS and F2FS do not even try.
            let one = store_file("one", b"x", codec, &policy).unwrap();
            assert_eq!(one.pages, [page(false, 1, 1)], "{codec} {policy}");
            assert_eq!(one.summary().header_bytes, JFFS2_NODE_HEADER_BYTES);
            one.verify(b"x", &policy).unwrap();
        }
    }
}

#[test]
fn storing_under_several_policies_at_once_matches_one_at_a_time() {
    let mut data = english(5 * PAGE_SIZE);
    data.extend(random_bytes(3 * PAGE_SIZE + 77, 5));
    let policies = WritePolicy::defaults();
    for codec in Codec::available() {
        let together = store_file_policies("f", &data, codec, &policies).unwrap();
        for (policy, stored) in policies.iter().zip(&together) {
            assert_eq!(stored, &store_file("f", &data, codec, policy).unwrap());
        }
    }
}

#[test]
fn bad_policies_and_missing_codecs_are_errors() {
    let bad = WritePolicy::F2fs { cluster_pages: 3 };
    assert!(store_file("f", b"abc", Codec::Lz4, &bad).is_err());
    let bad = WritePolicy::Entropy {
        max_bits_per_byte: f64::NAN,
    };
    assert!(store_file("f", b"abc", Codec::Lz4, &bad).is_err());
    assert!(store_file_policies("f", b"abc", Codec::Lz4, &[]).is_err());
    if !Codec::Lzo.is_available() {
        let err = store_file("f", b"abc", Codec::Lzo, &WritePolicy::Stock).unwrap_err();
        assert!(err.to_string().contains("--features lzo"), "{err}");
    }
}

#[test]
fn analysis_of_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("b")).unwrap();
    std::fs::write(root.join("b/text.txt"), english(3 * PAGE_SIZE)).unwrap();
    std::fs::write(root.join("a.bin"), random_bytes(2 * PAGE_SIZE + 5, 1)).unwrap();
    std::fs::write(root.join("c.empty"), b"").unwrap();
    std::fs::write(root.join("zeros"), vec![0u8; 4 * PAGE_SIZE]).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(root.join("zeros"), root.join("link")).unwrap();

    let files = collect_files(&[root.to_path_buf()]).unwrap();
    let names: Vec<_> = files
        .iter()
        .map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["a.bin", "b/text.txt", "c.empty", "zeros"]);

    let policies: Vec<(String, WritePolicy)> = WritePolicy::defaults()
        .into_iter()
        .map(|p| (p.to_string(), p))
        .collect();
    let analysis = analyze_paths(&[root.to_path_buf()], Codec::Lz4, &policies).unwrap();
    assert_eq!(analysis.files.len(), 4);
    assert_eq!(analysis.policies.len(), policies.len());
    for (i, total) in analysis.totals.iter().enumerate() {
        let stored: u64 = analysis
            .files
            .iter()
            .map(|f| f.stored[i].stored_bytes())
            .sum();
        assert_eq!(total.stored_bytes, stored);
        assert_eq!(total.data_bytes, 9 * PAGE_SIZE as u64 + 5);
        assert_eq!(total.pages, 3 + 3 + 4);
    }
    let bin = &analysis.files[0];
    assert!(bin.summaries.iter().all(|s| s.compressed_pages == 0));
    let zeros = &analysis.files[3];
    assert!(zeros.summaries.iter().all(|s| s.compressed_pages == 4));
    // A file named directly is taken, a symbolic link too.
    let direct = analyze_paths(&[root.join("zeros")], Codec::Lz4, &policies).unwrap();
    assert_eq!(direct.files[0].summaries, zeros.summaries);

    let json = serde_json::to_value(&analysis).unwrap();
    assert_eq!(json["policies"][1]["policy"]["kind"], "threshold");
    assert!(json["files"][0].get("stored").is_none());
}

#[test]
fn analysis_errors_name_the_path() {
    let missing = PathBuf::from("/nonexistent/flashfs/input");
    let policies = [("stock".to_string(), WritePolicy::Stock)];
    let err = analyze_paths(&[missing], Codec::Lz4, &policies).unwrap_err();
    assert!(
        err.to_string().contains("/nonexistent/flashfs/input"),
        "{err}"
    );
    assert!(analyze_paths(&[], Codec::Lz4, &policies).is_err());
    let dir = tempfile::tempdir().unwrap();
    assert!(analyze_paths(&[dir.path().to_path_buf()], Codec::Lz4, &[]).is_err());
}

/// Random files made of runs of zeros, text and random bytes.
fn mixed_file() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec((0u8..3, 1usize..6000, any::<u64>()), 0..8).prop_map(|runs| {
        let mut data = Vec::new();
        for (kind, len, seed) in runs {
            match kind {
                0 => data.extend(vec![0u8; len]),
                1 => data.extend(english(len)),
                _ => data.extend(random_bytes(len, seed)),
            }
        }
        data
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn page_invariants_hold_on_random_files(data in mixed_file(), codec_pick in 0usize..4) {
        let codecs = Codec::available();
        let codec = codecs[codec_pick % codecs.len()];
        for policy in WritePolicy::defaults() {
            let stored = store_file("p", &data, codec, &policy).unwrap();
            prop_assert_eq!(stored.pages.len(), data.len().div_ceil(PAGE_SIZE));
            for (i, p) in stored.pages.iter().enumerate() {
                let expected_len = (data.len() - i * PAGE_SIZE).min(PAGE_SIZE) as u32;
                prop_assert_eq!(p.data_len, expected_len);
                if !p.compressed {
                    prop_assert_eq!(p.stored_len, p.data_len);
                }
            }
            match &policy {
                WritePolicy::F2fs { cluster_pages } => {
                    for cluster in stored.pages.chunks(*cluster_pages) {
                        let stored_len: u32 = cluster.iter().map(|p| p.stored_len).sum();
                        if cluster[0].compressed {
                            prop_assert!(cluster.iter().all(|p| p.compressed));
                            prop_assert_eq!(cluster.len(), *cluster_pages);
                            prop_assert_eq!(stored_len % PAGE, 0);
                            prop_assert!(stored_len <= (*cluster_pages as u32 - 1) * PAGE);
                        }
                    }
                }
                _ => {
                    let min_saving = match &policy {
                        WritePolicy::Threshold { min_saving } => *min_saving as u32,
                        WritePolicy::Ubifs => 64,
                        _ => 1,
                    };
                    for p in stored.pages.iter().filter(|p| p.compressed) {
                        prop_assert!(p.stored_len + min_saving <= p.data_len);
                    }
                }
            }
            let summary = stored.summary();
            prop_assert_eq!(summary.data_bytes, data.len() as u64);
            prop_assert_eq!(summary.pages, summary.raw_pages + summary.compressed_pages);
            prop_assert_eq!(summary.stored_bytes, stored.stored_bytes());
            prop_assert!(summary.stored_bytes <= summary.data_bytes);
            let nodes = stored.pages.iter().filter(|p| p.stored_len > 0).count() as u64;
            prop_assert_eq!(summary.header_bytes, nodes * JFFS2_NODE_HEADER_BYTES);
            let with_bytes = store_file_with_bytes("p", &data, codec, &policy).unwrap();
            prop_assert_eq!(&with_bytes.file, &stored);
            prop_assert_eq!(with_bytes.read_back().unwrap(), data.clone());
        }
    }
}
