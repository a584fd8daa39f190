//! The workspace's modules import no module that imports them back (docs/architecture.md):
//! a circle of modules is one piece that cannot be read, tested or changed alone.
//!
//! A module's imports are the modules its code (tests left out) names through `crate::`,
//! `super::` or a child module's name; naming its own ancestors does not count (a child uses
//! what its parent declares for it). Circles are the strongly connected parts of that graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

/// Every module of a crate's `src`, by path (`[]` for lib.rs or main.rs), with its file.
fn modules(src: &Path) -> BTreeMap<Module, PathBuf> {
    let mut out = BTreeMap::new();
    let mut todo = vec![src.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let rel = p.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Module = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
            if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                parts.pop();
            }
            out.insert(parts, p);
        }
    }
    out
}

/// The paths (`a::b::C`) that follow each occurrence of `prefix` in `code`; a `{...}` group
/// gives each of its items.
fn paths_after<'a>(code: &'a str, prefix: &str) -> Vec<Vec<&'a str>> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices(prefix) {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let rest = &code[at + prefix.len()..];
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        if rest[len..].starts_with('{') {
            let head: Vec<&str> = split(&rest[..len]);
            let body = &rest[len + 1..];
            let body = &body[..body.find('}').unwrap_or(body.len())];
            for item in body.split(',') {
                let item = item.trim();
                let mut full = head.clone();
                full.extend(split(&item[..item.find([' ', '{']).unwrap_or(item.len())]));
                out.push(full);
            }
        } else {
            out.push(split(&rest[..len]));
        }
    }
    out
}

fn split(path: &str) -> Vec<&str> {
    path.split("::").filter(|s| !s.is_empty()).collect()
}

/// The module a path names: its longest prefix that is a module.
fn resolve(all: &BTreeMap<Module, PathBuf>, base: &[String], path: &[&str]) -> Option<Module> {
    let full: Module = base.iter().cloned().chain(path.iter().map(|s| s.to_string())).collect();
    (0..=full.len())
        .rev()
        .map(|n| full[..n].to_vec())
        .find(|m| all.contains_key(m))
}

/// Each module's imports (see the file's doc).
fn imports(all: &BTreeMap<Module, PathBuf>) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut graph = BTreeMap::new();
    for (module, file) in all {
        let text = std::fs::read_to_string(file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let parent = &module[..module.len().saturating_sub(1)];
        let mut named = BTreeSet::new();
        for p in paths_after(code, "crate::") {
            named.extend(resolve(all, &[], &p));
        }
        for p in paths_after(code, "super::") {
            named.extend(resolve(all, parent, &p));
        }
        for child in all
            .keys()
            .filter(|k| k.len() == module.len() + 1 && k.starts_with(module))
        {
            let name = format!("{}::", child.last().unwrap());
            if !paths_after(code, &name).is_empty() {
                named.insert(child.clone());
            }
        }
        // A module's own ancestors (and itself) are not imports.
        named.retain(|m| !module.starts_with(m));
        graph.insert(module.clone(), named);
    }
    graph
}

/// The strongly connected parts of more than one module (Tarjan's algorithm).
fn circles(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<BTreeSet<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        out: Vec<BTreeSet<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a Module) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            for w in &self.graph[v] {
                let Some(w) = self.graph.get_key_value(w).map(|(k, _)| k) else {
                    continue;
                };
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let l = self.low[v].min(self.low[w]);
                    self.low.insert(v, l);
                } else if self.stack.contains(&w) {
                    let l = self.low[v].min(self.index[w]);
                    self.low.insert(v, l);
                }
            }
            if self.low[v] == self.index[v] {
                let mut part = BTreeSet::new();
                while let Some(w) = self.stack.pop() {
                    part.insert(if w.is_empty() { "lib".to_string() } else { w.join("::") });
                    if w == v {
                        break;
                    }
                }
                if part.len() > 1 {
                    self.out.push(part);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.out
}

fn crates() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("src").is_dir())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p.join("src")))
        .collect();
    out.sort();
    out
}

/// Circles allowed to remain: none. Any circle fails the test: the list only shrinks.
const KNOWN: &[(&str, &[&str])] = &[];

#[test]
fn no_module_imports_a_module_that_imports_it_back() {
    let mut found = Vec::new();
    for (name, src) in crates() {
        for part in circles(&imports(&modules(&src))) {
            found.push((name.clone(), part));
        }
    }
    let known: Vec<(String, BTreeSet<String>)> = KNOWN
        .iter()
        .map(|(c, m)| (c.to_string(), m.iter().map(|s| s.to_string()).collect()))
        .collect();
    assert_eq!(found, known, "import circles (crate, modules)");
}

/// The detector sees a circle where there is one, through each way of naming a module, and
/// none where a child names its parent.
#[test]
fn the_detector_finds_circles_and_only_circles() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let file = |p: &str, text: &str| {
        let path = src.join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    file("lib.rs", "mod a; mod b; mod c; mod d;\nuse d::Thing;\n");
    file("a.rs", "use crate::{b::Two, c};\n");
    file("b.rs", "pub fn f() { super::a::g() }\n");
    file("c.rs", "#[cfg(test)]\nmod tests { use crate::a::x; }\n");
    file("d/mod.rs", "mod e;\npub fn h() { e::go() }\n");
    file("d/e.rs", "use super::Thing; use crate::d::h;\n");
    let found = circles(&imports(&modules(src)));
    let ab: BTreeSet<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
    assert_eq!(found, vec![ab]);
}
