//! Swift on 127.0.0.1, like Swift's all-in-one dev setup: memcached, one account, container and
//! object server each serving 3 devices (3 replicas), and a proxy with tempauth and s3api. The
//! rings are built in one Python process.

use std::process::Command;

use super::{CONTAINER, KEY, USER};
use crate::local::{fresh_body, http, http_ok, s3_round_trip, swift_login, write_s3_netrc, Local, Run, S3, STOP_GRACE};
use crate::{Error, Result};

const REPLICAS: usize = 3;
const REGION: &str = "us-east-1";
const KINDS: [&str; 3] = ["account", "container", "object"];
/// Builds the three rings: argv swift_dir replicas account_port container_port object_port.
const RINGS_PY: &str = "import os, sys
from swift.common.ring import RingBuilder
conf, reps, ports = sys.argv[1], int(sys.argv[2]), sys.argv[3:6]
for kind, port in zip(('account', 'container', 'object'), ports):
    b = RingBuilder(8, reps, 0)
    for i in range(reps):
        b.add_dev({'id': i, 'region': 1, 'zone': i + 1, 'ip': '127.0.0.1',
                   'port': int(port), 'device': 'd%d' % i, 'weight': 100, 'meta': ''})
    b.rebalance()
    b.save(os.path.join(conf, kind + '.builder'))
    b.get_ring().save(os.path.join(conf, kind + '.ring.gz'))
";

pub(super) struct LocalSwift;

/// The user the servers run as: this one.
fn user_name() -> Result<String> {
    Ok(crate::sys::run("id", &["-un"], std::time::Duration::from_secs(10))?
        .trim()
        .to_string())
}

fn proxy_conf(conf: &str, port: u16, user: &str, memcached: u16) -> String {
    format!(
        "[DEFAULT]
swift_dir = {conf}
bind_ip = 127.0.0.1
bind_port = {port}
user = {user}
workers = 1
log_name = proxy-server
log_level = INFO

[pipeline:main]
pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats s3api tempauth copy slo dlo versioned_writes symlink proxy-logging proxy-server

[app:proxy-server]
use = egg:swift#proxy
account_autocreate = true
allow_account_management = true

[filter:catch_errors]
use = egg:swift#catch_errors
[filter:gatekeeper]
use = egg:swift#gatekeeper
[filter:healthcheck]
use = egg:swift#healthcheck
[filter:proxy-logging]
use = egg:swift#proxy_logging
[filter:cache]
use = egg:swift#memcache
memcache_servers = 127.0.0.1:{memcached}
[filter:listing_formats]
use = egg:swift#listing_formats
[filter:s3api]
use = egg:swift#s3api
location = {REGION}
[filter:tempauth]
use = egg:swift#tempauth
user_test_tester = {KEY} .admin
user_admin_admin = admin .admin .reseller_admin
[filter:copy]
use = egg:swift#copy
[filter:slo]
use = egg:swift#slo
[filter:dlo]
use = egg:swift#dlo
[filter:versioned_writes]
use = egg:swift#versioned_writes
allow_object_versioning = true
[filter:symlink]
use = egg:swift#symlink
"
    )
}

/// tempauth's token, a container, and a PUT + GET + DELETE through the native API.
fn round_trip(run: &Run, url: &str) -> Result<()> {
    let (storage, token) = swift_login(&format!("{url}/auth/v1.0"), USER, KEY)?;
    http_ok(
        &["-o", "/dev/null", "-X", "PUT", "-H", &token],
        &format!("{storage}/{CONTAINER}"),
    )?;
    let (body, file) = fresh_body(run.dir())?;
    let object = format!("{storage}/{CONTAINER}/.lab-ready");
    http_ok(
        &["-o", "/dev/null", "-H", &token, "-T", &file.display().to_string()],
        &object,
    )?;
    if http_ok(&["-H", &token], &object)? != body {
        return Err(Error::runtime("Swift GET returned other bytes than were PUT".into()));
    }
    http_ok(&["-o", "/dev/null", "-X", "DELETE", "-H", &token], &object).map(|_| ())
}

impl Local for LocalSwift {
    fn layouts(&self) -> &'static [&'static str] {
        &["local"]
    }

    fn start(&self, _layout: &str, run: &mut Run) -> Result<()> {
        if !std::path::Path::new("/usr/bin/swift-proxy-server").is_file() {
            return Err(Error::runtime(
                "swift is not installed: run `dfsbench lab install swift`".into(),
            ));
        }
        let p = run.ports(5)?;
        let (memcached, proxy) = (p[0], p[1]);
        let ports = [p[2], p[3], p[4]];
        let devices: Vec<String> = (0..REPLICAS).map(|i| format!("srv/d{i}")).collect();
        let mut dirs: Vec<&str> = vec!["conf", "run", "cache"];
        dirs.extend(devices.iter().map(String::as_str));
        run.mkdirs(&dirs)?;
        let dir = run.dir().to_path_buf();
        let conf = dir.join("conf").display().to_string();
        let user = user_name()?;
        run.write(
            "conf/swift.conf",
            "[swift-hash]\nswift_hash_path_suffix = dfsbench-lab\nswift_hash_path_prefix = dfsbench-lab\n\n\
             [storage-policy:0]\nname = lab\ndefault = yes\n",
        )?;
        let mut args = vec![
            "-c".to_string(),
            RINGS_PY.to_string(),
            conf.clone(),
            REPLICAS.to_string(),
        ];
        args.extend(ports.iter().map(u16::to_string));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        crate::sys::run("/usr/bin/python3", &args, std::time::Duration::from_secs(60))?;
        for (kind, port) in KINDS.iter().zip(ports) {
            let text = format!(
                "[DEFAULT]\nswift_dir = {conf}\ndevices = {}\nmount_check = false\nbind_ip = 127.0.0.1\n\
                 user = {user}\nworkers = 0\nrecon_cache_path = {}\nlog_level = INFO\nbind_port = {port}\n\
                 log_name = {kind}-server\n\n[pipeline:main]\npipeline = {kind}-server\n\n\
                 [app:{kind}-server]\nuse = egg:swift#{kind}\n",
                dir.join("srv").display(),
                dir.join("cache").display()
            );
            run.write(&format!("conf/{kind}-server.conf"), &text)?;
        }
        run.write("conf/proxy-server.conf", &proxy_conf(&conf, proxy, &user, memcached))?;
        let mut mc = Command::new("memcached");
        mc.args([
            "-l",
            "127.0.0.1",
            "-p",
            &memcached.to_string(),
            "-U",
            "0",
            "-m",
            "64",
            "-u",
            &user,
            "-v",
        ]);
        run.spawn("memcached", mc, STOP_GRACE)?;
        for kind in KINDS {
            let mut cmd = Command::new(format!("swift-{kind}-server"));
            cmd.arg(format!("{conf}/{kind}-server.conf")).arg("-v");
            run.spawn(kind, cmd, STOP_GRACE)?;
        }
        let mut cmd = Command::new("swift-proxy-server");
        cmd.arg(format!("{conf}/proxy-server.conf")).arg("-v");
        run.spawn("proxy", cmd, STOP_GRACE)?;
        let url = format!("http://127.0.0.1:{proxy}");
        let health = format!("{url}/healthcheck");
        run.wait(&format!("the Swift proxy's healthcheck on {url}"), || {
            http(&["-f", "-o", "/dev/null"], &health).map(|_| ())
        })?;
        run.wait(&format!("tempauth, container {CONTAINER} and a PUT+GET"), || {
            round_trip(run, &url)
        })?;
        // The container is the S3 bucket too (s3api): that path must work as well.
        let netrc = dir.join("netrc");
        write_s3_netrc(&netrc, USER, KEY)?;
        let s3 = S3 {
            endpoint: &url,
            region: REGION,
            netrc: &netrc,
        };
        run.wait(&format!("an S3 (s3api) PUT+GET round trip on {url}"), || {
            s3_round_trip(&s3, &dir, CONTAINER, ".lab-ready-s3")
        })?;
        run.set_s3_env(&url, USER, KEY, REGION);
        let auth = format!("{url}/auth/v1.0");
        for (k, v) in [
            ("DFSBENCH_SWIFT_AUTH_URL", auth.as_str()),
            ("DFSBENCH_SWIFT_USER", USER),
            ("DFSBENCH_SWIFT_KEY", KEY),
            ("DFSBENCH_SWIFT_CONTAINER", CONTAINER),
            ("DFSBENCH_SWIFT_STORAGE_URL", &format!("{url}/v1/AUTH_test")),
            ("ST_AUTH", &auth),
            ("ST_USER", USER),
            ("ST_KEY", KEY),
            ("OS_AUTH_URL", &auth),
            ("DFSBENCH_SWIFT_REPLICAS", &REPLICAS.to_string()),
        ] {
            run.set_env(k, v);
        }
        run.set_probe(&health, "GET");
        Ok(())
    }
}
