//! Replays every fuzz target's kept corpus (`fuzz/corpus/TARGET/`) and every input that
//! once failed a target (`fuzz/regressions/TARGET/`): none may panic, and each target's
//! own checks hold (see `mobmem::fuzzing`). `scripts/fuzz.sh` grows the corpus and
//! files new failures under `fuzz/regressions/`.

use std::path::{Path, PathBuf};

use mobmem::fuzzing::TARGETS;

fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

#[test]
fn every_target_has_a_corpus() {
    for target in TARGETS {
        let corpus = files(&fuzz_dir().join("corpus").join(target.name));
        assert!(!corpus.is_empty(), "fuzz/corpus/{} is empty", target.name);
    }
}

#[test]
fn the_corpus_and_the_regressions_replay_cleanly() {
    let mut replayed = 0;
    for target in TARGETS {
        for kind in ["corpus", "regressions"] {
            for file in files(&fuzz_dir().join(kind).join(target.name)) {
                let data = std::fs::read(&file).unwrap();
                let outcome = std::panic::catch_unwind(|| (target.run)(&data));
                assert!(
                    outcome.is_ok(),
                    "fuzz target {} failed on {}",
                    target.name,
                    file.display()
                );
                replayed += 1;
            }
        }
    }
    assert!(replayed >= TARGETS.len());
}

#[test]
fn no_folder_names_an_unknown_target() {
    for kind in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(fuzz_dir().join(kind)) else {
            continue;
        };
        for entry in entries {
            let name = entry.unwrap().file_name().into_string().unwrap();
            assert!(
                mobmem::fuzzing::target(&name).is_some(),
                "fuzz/{kind}/{name} is not a fuzz target"
            );
        }
    }
}
