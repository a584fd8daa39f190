//! docs/architecture.md stays true to the code: its dependency lines are the crates'
//! dependencies, its crate map names every crate and top-level folder, and every file or
//! folder it names in a crate's entry exists there.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn doc() -> String {
    std::fs::read_to_string(repo().join("docs/architecture.md")).unwrap()
}

/// The workspace crates each crate depends on (`[dependencies]`, not dev-dependencies), by
/// short name (`core` for dfsbench-core).
fn dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(repo().join("crates")).unwrap() {
        let dir = e.unwrap().path();
        let Ok(toml) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        let name = dir.file_name().unwrap().to_string_lossy();
        let mut section = String::new();
        let mut deps = BTreeSet::new();
        for line in toml.lines() {
            if line.starts_with('[') {
                section = line.to_string();
            } else if section == "[dependencies]" {
                if let Some(dep) = line.strip_prefix("dfsbench-") {
                    let end = dep.find(|c: char| !c.is_ascii_alphanumeric()).unwrap_or(dep.len());
                    deps.insert(dep[..end].to_string());
                }
            }
        }
        out.insert(name.trim_start_matches("dfsbench-").to_string(), deps);
    }
    out
}

/// The arrows of the paragraph that starts "The dependencies point one way:", as
/// `a -> b -> c` chains give them.
fn documented_arrows(doc: &str) -> BTreeSet<(String, String)> {
    let start = doc
        .find("The dependencies point one way:")
        .expect("docs/architecture.md has its dependency lines");
    let para = &doc[start..start + doc[start..].find("\n\n").unwrap_or(doc.len() - start)];
    let words: Vec<&str> = para
        .split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')')
        .filter(|w| !w.is_empty())
        .collect();
    let mut arrows = BTreeSet::new();
    for i in 1..words.len().saturating_sub(1) {
        if words[i] == "->" {
            arrows.insert((words[i - 1].to_string(), words[i + 1].to_string()));
        }
    }
    arrows
}

#[test]
fn the_dependency_lines_are_the_crates_dependencies() {
    let deps = dependencies();
    let arrows = documented_arrows(&doc());
    assert!(!arrows.is_empty());
    for (from, to) in &arrows {
        assert!(
            deps.get(from).is_some_and(|d| d.contains(to)),
            "docs/architecture.md says {from} -> {to}, but dfsbench-{from} does not depend on dfsbench-{to}"
        );
    }
    // Every real dependency follows the documented arrows (directly or through others).
    let reaches = |from: &str, to: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(c) = todo.pop() {
            for (a, b) in &arrows {
                if *a == c && seen.insert(b.clone()) {
                    todo.push(b.clone());
                }
            }
        }
        seen.contains(to)
    };
    for (from, tos) in &deps {
        for to in tos {
            assert!(
                reaches(from, to),
                "dfsbench-{from} depends on dfsbench-{to}, which the dependency lines of docs/architecture.md do not show"
            );
        }
    }
}

/// The crate map: the code block under "## Crates and folders", an entry per crate or folder
/// (a line starting at column 0) with its description.
fn crate_map(doc: &str) -> Vec<(String, String)> {
    let start = doc.find("## Crates and folders").expect("a crate map");
    let block = &doc[start..];
    let block = &block[block.find("```").unwrap() + 3..];
    let block = &block[block.find('\n').unwrap() + 1..block.find("```").unwrap()];
    let mut entries: Vec<(String, String)> = Vec::new();
    for line in block.lines() {
        if line.starts_with(' ') {
            if let Some(e) = entries.last_mut() {
                e.1.push(' ');
                e.1.push_str(line.trim());
            }
        } else if !line.trim().is_empty() {
            // The head: the crates and folders the line starts with (`bench/  scripts/`).
            let words: Vec<&str> = line.split_whitespace().collect();
            let n = words
                .iter()
                .take_while(|w| w.ends_with('/') || w.starts_with("crates/"))
                .count();
            entries.push((words[..n].join(" "), words[n..].join(" ")));
        }
    }
    entries
}

#[test]
fn the_crate_map_names_every_crate_and_folder() {
    let map = crate_map(&doc());
    let named: BTreeSet<String> = map
        .iter()
        .flat_map(|(head, _)| head.split_whitespace().map(|w| w.trim_end_matches('/').to_string()))
        .collect();
    for e in std::fs::read_dir(repo().join("crates")).unwrap() {
        let name = format!("crates/{}", e.unwrap().file_name().to_string_lossy());
        assert!(
            named.contains(&name),
            "docs/architecture.md's crate map has no entry for {name}"
        );
    }
    // The repository's own folders (git's, the build's and results left by runs apart).
    let out = std::process::Command::new("git")
        .args(["ls-files"])
        .current_dir(repo())
        .output()
        .unwrap();
    let tracked: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once('/').map(|(dir, _)| dir.to_string()))
        .filter(|d| !d.starts_with('.') && d != "crates")
        .collect();
    for dir in tracked {
        assert!(
            named.contains(&dir),
            "docs/architecture.md's crate map has no entry for {dir}/"
        );
    }
}

/// Each `name.rs` or `folder/` a crate's entry names is a file or folder of that crate.
#[test]
fn the_crate_map_names_files_that_exist() {
    for (head, text) in crate_map(&doc()) {
        let Some(krate) = head.strip_prefix("crates/") else {
            continue;
        };
        let root = repo().join("crates").join(krate);
        let files: Vec<String> = walk(&root)
            .into_iter()
            .map(|p| p.strip_prefix(&root).unwrap().to_string_lossy().into_owned())
            .collect();
        for token in text.split(|c: char| !(c.is_ascii_alphanumeric() || "_./".contains(c))) {
            let token = token.trim_start_matches("./").trim_end_matches('.');
            let is_file = token.ends_with(".rs");
            let is_dir = token.ends_with('/') && token.len() > 1;
            if !(is_file || is_dir) || token.contains("..") {
                continue;
            }
            let found = files.iter().any(|f| {
                let f = format!("/{f}{}", if is_dir { "/" } else { "" });
                f.ends_with(&format!("/{token}")) || (is_dir && f.contains(&format!("/{token}")))
            });
            assert!(
                found,
                "docs/architecture.md names {token} in {head}, which has no such file or folder"
            );
        }
    }
}

/// Every file and folder under `dir`, folders included, target/ left out.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            if p.is_dir() {
                todo.push(p.clone());
            }
            out.push(p);
        }
    }
    out
}
