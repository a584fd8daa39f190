//! The files of a job file's `filename=` options: jobs that name the same file share it, as
//! in fio. Each is a file of the run (`files/NAME` in its directory), named after the path's
//! base name; two paths with one base name get two names (`data`, `data.2`).

use crate::workloads::io::Options;

/// The files named so far: each path as the job file gives it, its name in the run, and the
/// first group (of jobs at the same time) that names it.
#[derive(Default)]
pub(super) struct Names {
    files: Vec<(String, String, usize)>,
}

impl Names {
    /// Whether a job of a group before `group` names the file at `path`: it is then there,
    /// as that group left it, when `group` starts.
    pub(super) fn named_before(&self, path: &str, group: usize) -> bool {
        self.files.iter().any(|(p, _, g)| p == path && *g < group)
    }

    /// Give the file `io` names (its `filename`, the base name of its `fio_filename` when it
    /// gave a path) its name in the run: an earlier job's name for the same path, or its base
    /// name, numbered when another path has it. The job is of `group`.
    pub(super) fn name(&mut self, io: &mut Options, group: usize) {
        let Some(base) = io.filename.clone() else { return };
        let path = io.fio_filename.clone().unwrap_or_else(|| base.clone());
        if let Some((_, name, _)) = self.files.iter().find(|(p, ..)| *p == path) {
            io.filename = Some(name.clone());
            return;
        }
        let taken = |n: &str| self.files.iter().any(|(_, name, _)| name == n);
        let mut name = base.clone();
        let mut n = 1;
        while taken(&name) {
            n += 1;
            name = format!("{base}.{n}");
        }
        io.filename = Some(name.clone());
        self.files.push((path, name, group));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(names: &mut Names, path: &str) -> String {
        named_in(names, path, 0)
    }

    fn named_in(names: &mut Names, path: &str, group: usize) -> String {
        let base = path.rsplit('/').next().unwrap();
        let mut io = Options {
            filename: Some(base.into()),
            fio_filename: (base != path).then(|| path.to_string()),
            ..Options::default()
        };
        names.name(&mut io, group);
        io.filename.unwrap()
    }

    #[test]
    fn one_path_one_file_and_one_name_per_path() {
        let mut names = Names::default();
        assert_eq!(named(&mut names, "/tmp/data"), "data");
        assert_eq!(named(&mut names, "/tmp/data"), "data");
        assert_eq!(named(&mut names, "/var/data"), "data.2");
        assert_eq!(named(&mut names, "data"), "data.3");
        assert_eq!(named(&mut names, "/var/data"), "data.2");
        assert_eq!(named_in(&mut names, "/tmp/new", 2), "new");
        assert!(names.named_before("/tmp/data", 1) && !names.named_before("/tmp/data", 0));
        assert!(!names.named_before("/tmp/new", 2) && names.named_before("/tmp/new", 3));
    }
}
