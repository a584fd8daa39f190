//! Finding a system by the name a user gives: its aliases (`glusterfs`, `mfs`) and the names
//! that are a layout of another system (`s3fs`, `minio-ec`).

use crate::{systems, Error, Result, System};

/// Names that are a layout of another system: `lab up s3fs` is `lab up minio --layout s3fs`
/// (the s3fs mount over the lab's distributed MinIO), `minio-ec` is MinIO's single-host
/// erasure set.
pub(crate) fn layout_alias(name: &str) -> Option<(&'static str, &'static str)> {
    ALIASES.iter().find(|a| a.0 == name).map(|a| (a.1, a.2))
}

/// (name, system, layout) of each name that is a layout of another system.
const ALIASES: &[(&str, &str, &str)] = &[("s3fs", "minio", "s3fs"), ("minio-ec", "minio", "local-ec")];

/// The name a user gives for a system's layout: the alias that names it, else the system's.
pub(crate) fn instance_name(system: &'static str, layout: &str) -> &'static str {
    ALIASES
        .iter()
        .find(|a| a.1 == system && a.2 == layout)
        .map_or(system, |a| a.0)
}

pub fn system(name: &str) -> Result<Box<dyn System>> {
    let name = if name == "glusterfs" {
        "gluster"
    } else if name == "mfs" {
        "moosefs"
    } else if let Some((system, _)) = layout_alias(name) {
        system
    } else {
        name
    };
    if let Some(s) = systems().into_iter().find(|s| s.name() == name) {
        return Ok(s);
    }
    let known: Vec<&str> = systems().iter().map(|s| s.name()).collect();
    Err(Error::usage(format!(
        "unknown lab system {name:?}; the lab runs: {}",
        known.join(", ")
    )))
}

/// The help of `lab up`'s system: every system with its layouts, the default first.
pub fn systems_help() -> String {
    let each: Vec<String> = systems()
        .iter()
        .map(|s| format!("{} ({})", s.name(), s.all_layouts().join(", ")))
        .collect();
    let aliases: Vec<String> = ALIASES
        .iter()
        .map(|(alias, system, layout)| format!("{alias} = {system} --layout {layout}"))
        .collect();
    format!(
        "The system and its layouts: {}; {}",
        each.join("; "),
        aliases.join(", ")
    )
}

/// The table of docs/lab.md's "Systems at a glance" and of `dfsbench lab systems`: each
/// system's name, code, layouts, what it runs and its Debian packages.
pub fn systems_table() -> String {
    table(&systems())
}

fn table(systems: &[Box<dyn System>]) -> String {
    let mut text = String::from("| lab | code | layouts | what runs | Debian packages |\n|---|---|---|---|---|\n");
    for s in systems {
        let layouts: Vec<String> = s.all_layouts().iter().map(|l| format!("`{l}`")).collect();
        let mut packages: Vec<&str> = s.packages().iter().map(|p| crate::sys::package_name(p)).collect();
        packages.extend_from_slice(s.later_packages());
        text += &format!(
            "| `{}` | `{}` | {} | {} | {} |\n",
            s.name(),
            s.code(),
            layouts.join(", "),
            s.summary(),
            packages.join(" ")
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::{layout_alias, table};
    use crate::systems;

    #[test]
    fn names_codes_and_aliases_are_unique() {
        let all = systems();
        let names: BTreeSet<&str> = all.iter().map(|s| s.name()).collect();
        let codes: BTreeSet<&str> = all.iter().map(|s| s.code()).collect();
        assert_eq!(names.len(), all.len(), "two systems share a name");
        assert_eq!(codes.len(), all.len(), "two systems share a code");
        for s in &all {
            // A code names bridges and veths (`dfsb-ID-CODE...`): short, lower-case letters.
            assert!(
                s.code().len() <= 4 && s.code().chars().all(|c| c.is_ascii_lowercase()),
                "{}",
                s.code()
            );
            assert!(
                s.cluster().is_some() || s.local().is_some(),
                "{} has no layout",
                s.name()
            );
        }
        for alias in ["s3fs", "minio-ec"] {
            let (system, _) = layout_alias(alias).unwrap();
            assert!(!names.contains(alias) && names.contains(system));
        }
    }

    /// docs/lab.md shows the table `dfsbench lab systems` prints; regenerate it with that
    /// command when a system changes.
    #[test]
    fn the_docs_table_is_the_generated_one() {
        let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/lab.md")).unwrap();
        let start = "<!-- systems: `dfsbench lab systems` prints this table -->\n";
        let begin = docs.find(start).expect("docs/lab.md has the systems marker") + start.len();
        let end = begin + docs[begin..].find("\n\n").unwrap_or(docs.len() - begin) + 1;
        let shipped: Vec<_> = systems().into_iter().filter(|s| s.name() != "toy").collect();
        assert_eq!(
            &docs[begin..end],
            table(&shipped),
            "docs/lab.md's systems table is stale"
        );
    }
}
