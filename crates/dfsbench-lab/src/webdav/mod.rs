//! WebDAV on one host: Apache httpd 2.4 (Debian) with mod_dav and mod_dav_fs, no auth. It was
//! ready in 0.06 s against 0.8 s for wsgidav + cheroot, and is native code, so a benchmark
//! measures the client rather than a Python server. Its workers run as `www-data`, which must
//! be able to reach the state directory.

use std::process::Command;
use std::time::Duration;

use crate::local::{fresh_body, http_ok, Local, Run, BUCKET, STOP_GRACE};
use crate::sys::run as run_cmd;
use crate::{Error, Result, System};

const APACHE: &str = "/usr/sbin/apache2";
const MODULES: &str = "/usr/lib/apache2/modules";
const HTTPD_CONF: &str = include_str!("httpd.conf");

pub(crate) struct WebDav;

impl System for WebDav {
    fn name(&self) -> &'static str {
        "webdav"
    }
    fn code(&self) -> &'static str {
        "dav"
    }
    fn summary(&self) -> &'static str {
        "WebDAV, one host: Apache httpd 2.4 with mod_dav_fs, no auth"
    }
    fn packages(&self) -> &'static [&'static str] {
        // The version the lab was tested with (Debian 12).
        &["apache2=2.4.71-1~deb12u1", "curl"]
    }
    fn local(&self) -> Option<&dyn Local> {
        Some(self)
    }
}

/// PUT, GET and compare, PROPFIND, DELETE in the collection `url` (ends with `/`).
fn round_trip(run: &Run, url: &str) -> Result<()> {
    let (body, file) = fresh_body(run.dir())?;
    let object = format!("{url}.lab-ready");
    http_ok(&["-o", "/dev/null", "-T", &file.display().to_string()], &object)?;
    if http_ok(&[], &object)? != body {
        return Err(Error::runtime(format!(
            "GET {object} returned other bytes than were PUT"
        )));
    }
    http_ok(&["-o", "/dev/null", "-X", "PROPFIND", "-H", "Depth: 1"], url)?;
    http_ok(&["-o", "/dev/null", "-X", "DELETE"], &object).map(|_| ())
}

impl Local for WebDav {
    fn layouts(&self) -> &'static [&'static str] {
        &["local"]
    }

    fn start(&self, _layout: &str, run: &mut Run) -> Result<()> {
        if !std::path::Path::new(APACHE).is_file() {
            return Err(Error::runtime(
                "apache2 is not installed: run `dfsbench lab install webdav`".into(),
            ));
        }
        let port = run.ports(1)?[0];
        let root = format!("root/{BUCKET}");
        run.mkdirs(&[&root, "lock", "conf"])?;
        let dir = run.dir().to_path_buf();
        let (root_dir, lock) = (
            dir.join("root").display().to_string(),
            dir.join("lock").display().to_string(),
        );
        // The workers run as www-data (Apache refuses root); they own the tree.
        run_cmd(
            "chown",
            &["-R", "www-data:www-data", &root_dir, &lock],
            Duration::from_secs(30),
        )?;
        let writable = format!("{root_dir}/{BUCKET}");
        if run_cmd(
            "runuser",
            &["-u", "www-data", "--", "test", "-w", &writable],
            Duration::from_secs(10),
        )
        .is_err()
        {
            return Err(Error::usage(format!(
                "user www-data cannot write {root_dir} (a parent folder is not searchable); use --dir elsewhere"
            )));
        }
        let conf = crate::sys::render(
            HTTPD_CONF,
            &[
                ("port", &port.to_string()),
                ("state", &dir.display().to_string()),
                ("root", &root_dir),
                ("modules", MODULES),
            ],
        );
        let conf = run.write("conf/httpd.conf", &conf)?;
        let mut cmd = Command::new(APACHE);
        cmd.arg("-f").arg(conf).arg("-DFOREGROUND");
        run.spawn("httpd", cmd, STOP_GRACE)?;
        let url = format!("http://127.0.0.1:{port}");
        let collection = format!("{url}/{BUCKET}/");
        run.wait(&format!("WebDAV PUT+GET round trip on {url}"), || {
            round_trip(run, &collection)
        })?;
        run.set_env("DFSBENCH_WEBDAV_URL", &format!("{url}/"));
        run.set_env("DFSBENCH_WEBDAV_COLLECTION", &format!("/{BUCKET}/"));
        run.set_probe(&collection, "PROPFIND");
        Ok(())
    }
}
