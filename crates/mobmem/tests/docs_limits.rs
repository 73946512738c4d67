//! docs/limits.md lists every limit of the code: each `MAX_` constant (and the
//! allowances and bounds per byte or page read, the page count hint of streams) in the
//! sources of the library and the command line has a row
//! naming it by its module path, and every constant a row names exists.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The Rust sources under `dir`, test modules aside.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs")
            && path.file_name().is_none_or(|n| n != "tests.rs")
        {
            out.push(path);
        }
    }
}

/// `a/b.rs` is `a::b`, `a/mod.rs` is `a`, the crate root is the crate's prefix.
fn module_path(prefix: &str, src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = prefix
        .split("::")
        .filter(|p| !p.is_empty())
        .map(String::from)
        .collect();
    for part in relative.iter() {
        let part = part.to_string_lossy();
        if !matches!(part.as_ref(), "mod" | "lib" | "main") {
            parts.push(part.into_owned());
        }
    }
    parts.join("::")
}

/// The name of the constant a line declares, if it is a limit.
fn declared_limit(line: &str) -> Option<&str> {
    let rest = line.trim_start().split("const ").nth(1)?;
    let name = rest.split(':').next()?.trim();
    is_limit(name).then_some(name)
}

/// A limit: `MAX_…`, an allowance a bound grants whatever the input's size
/// (`…_ALLOWANCE`), and the bounds that grow with what was read and the page count hint
/// of streams, by name.
fn is_limit(name: &str) -> bool {
    name.starts_with("MAX_")
        || name.ends_with("_ALLOWANCE")
        || ["EXPANSION_PER_BYTE", "NEAR_PER_PAGE", "HINT_WITHOUT_LENGTH"].contains(&name)
}

fn limits_in_code() -> BTreeSet<String> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut found = BTreeSet::new();
    for (krate, prefix) in [("mobmem", ""), ("mobmem-cli", "cli")] {
        let src = crates.join(krate).join("src");
        let mut files = Vec::new();
        sources(&src, &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            // Constants of a file's test module are not limits of the program.
            let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
            for name in code.lines().filter_map(declared_limit) {
                let module = module_path(prefix, &src, &file);
                found.insert(format!("{module}::{name}"));
            }
        }
    }
    found
}

/// Every `path::MAX_…` (or the hint) the page names in backticks.
fn limits_in_doc(doc: &str) -> BTreeSet<String> {
    doc.split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| s.contains("::") && !s.contains(' '))
        .filter(|s| s.rsplit("::").next().is_some_and(is_limit))
        .map(String::from)
        .collect()
}

#[test]
fn every_limit_in_the_code_is_in_docs_limits_md() {
    let doc_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/limits.md");
    let doc = std::fs::read_to_string(&doc_path).unwrap();
    let code = limits_in_code();
    assert!(code.contains("config_file::MAX_CONFIG_BYTES"), "{code:?}");
    assert!(code.contains("cli::numbers::MAX_THREADS"), "{code:?}");
    let named = limits_in_doc(&doc);
    let missing: Vec<_> = code.difference(&named).collect();
    assert!(
        missing.is_empty(),
        "limits without a row in docs/limits.md: {missing:?}"
    );
    let stale: Vec<_> = named.difference(&code).collect();
    assert!(
        stale.is_empty(),
        "docs/limits.md names limits the code lacks: {stale:?}"
    );
}
