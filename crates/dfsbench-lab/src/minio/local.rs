//! MinIO on 127.0.0.1: one process with one drive (`local`), or with six drives forming one
//! erasure set (`local-ec`, MinIO's default parity EC:3).

use std::process::Command;

use super::{minio_binary, KEY, REGION, SECRET};
use crate::local::{http, Local, Run, STOP_GRACE};
use crate::Result;

pub(super) struct LocalMinio;

impl Local for LocalMinio {
    fn layouts(&self) -> &'static [&'static str] {
        &["local", "local-ec"]
    }

    fn start(&self, layout: &str, run: &mut Run) -> Result<()> {
        let minio = minio_binary()?;
        let drives = if layout == "local-ec" {
            (1..=6).map(|i| format!("data/d{i}")).collect()
        } else {
            vec!["data".to_string()]
        };
        let drive_refs: Vec<&str> = drives.iter().map(String::as_str).collect();
        run.mkdirs(&drive_refs)?;
        run.mkdirs(&["certs"])?;
        let ports = run.ports(2)?;
        let dir = run.dir().to_path_buf();
        let mut cmd = Command::new(minio);
        cmd.envs([
            ("MINIO_ROOT_USER", KEY),
            ("MINIO_ROOT_PASSWORD", SECRET),
            // Drives on the root file system are refused unless MinIO runs "in CI".
            ("MINIO_CI_CD", "1"),
            ("MINIO_BROWSER", "off"),
            ("MINIO_UPDATE", "off"),
            ("MINIO_SITE_REGION", REGION),
        ])
        .args(["server", "--quiet", "--anonymous", "--address"])
        .arg(format!("127.0.0.1:{}", ports[0]))
        .arg("--console-address")
        .arg(format!("127.0.0.1:{}", ports[1]))
        .arg("--certs-dir")
        .arg(dir.join("certs"));
        match layout {
            "local-ec" => cmd.arg(dir.join("data/d{1...6}")),
            _ => cmd.arg(dir.join("data")),
        };
        run.spawn("minio", cmd, STOP_GRACE)?;
        let ep = format!("http://127.0.0.1:{}", ports[0]);
        let health = format!("{ep}/minio/health/cluster");
        run.wait(&format!("MinIO cluster health at {ep}"), || {
            http(&["-f", "-o", "/dev/null"], &health).map(|_| ())
        })?;
        run.s3_ready(&ep, KEY, SECRET, REGION)?;
        run.set_probe(&health, "GET");
        Ok(())
    }
}
