//! A test-only system: Python's `http.server` on 127.0.0.1 serving a folder. It shows what a new
//! lab system takes: this module and one line in `systems()`; install, `up`, `env`, `status`,
//! `down`, the generated docs table and the purge list then know it.

use std::process::Command;
use std::time::Duration;

use crate::local::{fresh_body, http_ok, Local, Run};
use crate::{Error, Result, System};

pub struct Toy;

impl System for Toy {
    fn name(&self) -> &'static str {
        "toy"
    }
    fn code(&self) -> &'static str {
        "toy"
    }
    fn summary(&self) -> &'static str {
        "a folder served by Python's http.server (tests only)"
    }
    fn packages(&self) -> &'static [&'static str] {
        &["python3"]
    }
    fn local(&self) -> Option<&dyn Local> {
        Some(self)
    }
}

impl Local for Toy {
    fn layouts(&self) -> &'static [&'static str] {
        &["local"]
    }

    fn start(&self, _layout: &str, run: &mut Run) -> Result<()> {
        let port = run.ports(1)?[0];
        run.mkdirs(&["root"])?;
        let mut cmd = Command::new("python3");
        cmd.args(["-m", "http.server", "--bind", "127.0.0.1", "--directory", "root"])
            .arg(port.to_string());
        run.spawn("http", cmd, Duration::from_secs(5))?;
        let url = format!("http://127.0.0.1:{port}/");
        // Ready once a file written into its folder comes back over HTTP.
        let (body, file) = fresh_body(&run.dir().join("root"))?;
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        run.wait(&format!("GET of a file from {url}"), || {
            match http_ok(&[], &format!("{url}{name}"))? {
                got if got == body => Ok(()),
                _ => Err(Error::runtime("other bytes came back".into())),
            }
        })?;
        run.set_env("DFSBENCH_TOY_URL", &url);
        run.set_probe(&url, "GET");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::host;

    /// Up, env, status, refusals and down of a system that is one module and one registry line.
    #[test]
    fn a_system_of_one_module_runs_through_the_whole_lab() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("toy");
        let started = host::up("toy", None, Some(&dir)).unwrap();
        assert_eq!(started.pids.len(), 1);
        let again = host::up("toy", None, Some(&dir)).unwrap_err();
        assert!(again.to_string().contains("already running"), "{again}");
        let env = host::env("toy", Some(&dir)).unwrap();
        assert!(env.contains("export DFSBENCH_TOY_URL=http://127.0.0.1:"), "{env}");
        assert!(
            env.contains(&format!("export DFSBENCH_SERVER_PIDS={}\n", started.pids[0])),
            "{env}"
        );
        let (lines, ok) = host::status("toy", Some(&dir)).unwrap().unwrap();
        assert!(ok, "{lines:?}");
        assert!(host::down("toy", Some(&dir)).unwrap());
        assert!(!dir.exists());
        assert!(!host::down("toy", Some(&dir)).unwrap(), "nothing left to stop");
        assert!(host::instances().contains(&"toy"));
        assert!(host::packages().contains(&"python3"));
    }

    #[test]
    fn a_folder_the_lab_did_not_make_is_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("mine"), "x").unwrap();
        let err = host::up("toy", None, Some(tmp.path())).unwrap_err();
        assert!(err.to_string().contains("was not made by the lab"), "{err}");
        let err = host::down("toy", Some(tmp.path())).unwrap_err();
        assert!(err.to_string().contains("not made by the lab"), "{err}");
        assert!(tmp.path().join("mine").exists());
    }
}
