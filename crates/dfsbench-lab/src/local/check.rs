//! The readiness checks of single-host servers, through curl (loopback only, never through a
//! proxy): an S3 bucket and a PUT + GET + DELETE signed with SigV4 (the secret in a netrc file,
//! not on a command line; a Swift s3api key has a colon that `--user` would split on).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::sys::run;
use crate::{Error, Result};

const CALL_LIMIT: Duration = Duration::from_secs(20);

/// An HTTP call: (status, body). `args` are further curl arguments.
pub(crate) fn http(args: &[&str], url: &str) -> Result<(u16, String)> {
    let max = CALL_LIMIT.as_secs().to_string();
    let mut all = vec!["-sS", "--noproxy", "*", "--max-time", &max, "-w", "\n%{http_code}"];
    all.extend_from_slice(args);
    all.push(url);
    let out = run("curl", &all, CALL_LIMIT + Duration::from_secs(5))?;
    let (body, code) = out.rsplit_once('\n').unwrap_or(("", out.as_str()));
    let code = code
        .trim()
        .parse()
        .map_err(|_| Error::runtime(format!("curl {url}: no HTTP status in its output")))?;
    Ok((code, body.to_string()))
}

/// A tempauth (v1.0) login at `auth_url`: the account's storage URL and the token header the
/// native API's calls carry.
pub(crate) fn swift_login(auth_url: &str, user: &str, key: &str) -> Result<(String, String)> {
    let user = format!("X-Auth-User: {user}");
    let key = format!("X-Auth-Key: {key}");
    let headers = http_ok(&["-o", "/dev/null", "-D", "-", "-H", &user, "-H", &key], auth_url)?;
    let header = |name: &str| {
        headers
            .lines()
            .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case(name)))
            .map(|(_, v)| v.trim().to_string())
            .ok_or_else(|| Error::runtime(format!("tempauth gave no {name}")))
    };
    Ok((
        header("x-storage-url")?,
        format!("X-Auth-Token: {}", header("x-auth-token")?),
    ))
}

/// An HTTP call that must answer 2xx; its body.
pub(crate) fn http_ok(args: &[&str], url: &str) -> Result<String> {
    match http(args, url)? {
        (code, body) if (200..300).contains(&code) => Ok(body),
        (code, body) => Err(Error::runtime(format!(
            "{url}: HTTP {code} {}",
            body.lines().next().unwrap_or_default()
        ))),
    }
}

/// A body no earlier check wrote, in a file under `dir` for curl to upload.
pub(crate) fn fresh_body(dir: &Path) -> Result<(String, PathBuf)> {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let body = format!("dfsbench-lab {nanos}");
    let path = dir.join(".lab-ready-body");
    std::fs::write(&path, &body).map_err(|e| Error::runtime(format!("cannot write {}: {e}", path.display())))?;
    Ok((body, path))
}

/// An S3 endpoint and the keys that sign for it.
pub(crate) struct S3<'a> {
    pub endpoint: &'a str,
    pub region: &'a str,
    /// The netrc file holding the key and secret (`write_s3_netrc`).
    pub netrc: &'a Path,
}

/// Write curl's netrc with the S3 key and secret for 127.0.0.1, readable by the owner only.
pub(crate) fn write_s3_netrc(path: &Path, key: &str, secret: &str) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut f| f.write_all(format!("machine 127.0.0.1 login {key} password {secret}\n").as_bytes()))
        .map_err(|e| Error::runtime(format!("cannot write {}: {e}", path.display())))
}

impl S3<'_> {
    /// A signed call (path-style URL under the endpoint).
    pub(crate) fn call(&self, args: &[&str], path: &str) -> Result<(u16, String)> {
        let netrc = self.netrc.display().to_string();
        let sigv4 = format!("aws:amz:{}:s3", self.region);
        let mut all = vec!["--netrc-file", &netrc, "--aws-sigv4", &sigv4];
        all.extend_from_slice(&["-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"]);
        all.extend_from_slice(args);
        http(&all, &format!("{}/{path}", self.endpoint))
    }

    fn ok(&self, args: &[&str], path: &str) -> Result<String> {
        match self.call(args, path)? {
            (code, body) if (200..300).contains(&code) => Ok(body),
            (code, body) => Err(Error::runtime(format!(
                "S3 {path}: HTTP {code} {}",
                body.chars().take(200).collect::<String>()
            ))),
        }
    }

    /// Create the bucket (fine when it exists and is ours: 409).
    pub(crate) fn make_bucket(&self, bucket: &str) -> Result<()> {
        match self.call(&["-X", "PUT", "-o", "/dev/null"], bucket)? {
            (200 | 409, _) => Ok(()),
            (code, _) => Err(Error::runtime(format!("PUT bucket {bucket}: HTTP {code}"))),
        }
    }
}

/// PUT an object, GET it back, compare, DELETE it.
pub(crate) fn s3_round_trip(s3: &S3, dir: &Path, bucket: &str, key: &str) -> Result<()> {
    let (body, file) = fresh_body(dir)?;
    let file = file.display().to_string();
    let path = format!("{bucket}/{key}");
    s3.ok(&["-o", "/dev/null", "-T", &file], &path)?;
    let got = s3.ok(&[], &path)?;
    if got != body {
        return Err(Error::runtime(format!(
            "S3 GET {path} returned other bytes than were PUT"
        )));
    }
    s3.ok(&["-o", "/dev/null", "-X", "DELETE"], &path).map(|_| ())
}
