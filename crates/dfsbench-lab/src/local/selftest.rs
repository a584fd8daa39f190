//! `dfsbench lab selftest`: for each single-host server, install, start, a real round trip of
//! 1 MiB through its own protocol, status, stop, and no process or folder left behind.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::Instant;

use super::check::{http, http_ok, swift_login, S3};
use super::{host, load, write_s3_netrc};
use crate::{sys, Error, Result};

/// One server's outcome: what was measured, or why it failed.
pub type Outcome = std::result::Result<String, String>;

/// Check each of `names` (every single-host instance when empty), one after the other.
pub fn selftest(names: &[String]) -> Result<Vec<(String, Outcome)>> {
    let all = host::instances();
    let names: Vec<String> = if names.is_empty() {
        all.iter().map(|s| s.to_string()).collect()
    } else {
        names.to_vec()
    };
    if let Some(bad) = names.iter().find(|n| !all.contains(&n.as_str())) {
        return Err(Error::usage(format!(
            "{bad} has no single-host layout; the selftest knows: {}",
            all.join(", ")
        )));
    }
    Ok(names
        .iter()
        .map(|n| (n.clone(), one(n).map_err(|e| e.to_string())))
        .collect())
}

fn secs(t: Instant) -> String {
    format!("{:.1}s", t.elapsed().as_secs_f64())
}

fn one(name: &str) -> Result<String> {
    let dir = sys::cache_dir().join("lab-selftest").join(name);
    let t = Instant::now();
    host::install(name)?;
    let install = secs(t);
    // What an interrupted earlier selftest left.
    let _ = host::down(name, Some(&dir));
    let t = Instant::now();
    let started = host::up(name, None, Some(&dir))?;
    let start = secs(t);
    let t = Instant::now();
    let env: BTreeMap<String, String> = load(&started.dir)?
        .map(|r| r.env.into_iter().collect())
        .unwrap_or_default();
    let checked = round_trip(name, &env, &started.dir);
    let trip = secs(t);
    let healthy = host::status(name, Some(&dir))?.is_some_and(|(_, ok)| ok);
    let members: Vec<i32> = started.pids.iter().flat_map(|p| group_members(*p)).collect();
    let t = Instant::now();
    host::down(name, Some(&dir))?;
    let stop = secs(t);
    let what = checked?;
    if !healthy {
        return Err(Error::runtime("`lab status` found it not serving".into()));
    }
    let left: Vec<String> = members
        .iter()
        .filter(|p| sys::proc_stat(**p).is_some_and(|(_, s)| s != 'Z'))
        .map(|p| p.to_string())
        .collect();
    if !left.is_empty() {
        return Err(Error::runtime(format!("processes left after stop: {}", left.join(" "))));
    }
    if dir.exists() {
        return Err(Error::runtime(format!(
            "state directory left after stop: {}",
            dir.display()
        )));
    }
    Ok(format!(
        "install {install}, start-to-ready {start}, {what} {trip}, stop {stop}, {} processes all gone",
        members.len()
    ))
}

/// The processes of the process group `leader` leads.
fn group_members(leader: i32) -> Vec<i32> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|t| {
                t.rfind(')')
                    .and_then(|i| t[i + 2..].split_whitespace().nth(2)?.parse::<i32>().ok())
                    == Some(leader)
            })
        })
        .collect()
}

fn var<'a>(env: &'a BTreeMap<String, String>, k: &str) -> Result<&'a str> {
    env.get(k)
        .map(String::as_str)
        .ok_or_else(|| Error::runtime(format!("the server exports no {k}")))
}

/// 1 MiB + 1 byte of varied data in `dir/payload`.
fn payload(dir: &Path) -> Result<(Vec<u8>, String)> {
    let data: Vec<u8> = (0..1_048_577u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let path = dir.join("payload");
    fs::write(&path, &data).map_err(|e| Error::runtime(format!("cannot write {}: {e}", path.display())))?;
    Ok((data, path.display().to_string()))
}

fn same(what: &str, got: &[u8], want: &[u8]) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(Error::runtime(format!(
            "{what}: {} bytes came back, not the {} written",
            got.len(),
            want.len()
        )))
    }
}

/// GET into a file and read it back (bodies are binary).
fn fetch(dir: &Path, args: &[&str], url: &str) -> Result<Vec<u8>> {
    let out = dir.join("back");
    let out_arg = out.display().to_string();
    let mut all = vec!["-f", "-o", &out_arg];
    all.extend_from_slice(args);
    http(&all, url)?;
    fs::read(&out).map_err(|e| Error::runtime(format!("cannot read {}: {e}", out.display())))
}

fn round_trip(name: &str, env: &BTreeMap<String, String>, dir: &Path) -> Result<String> {
    let work = dir.join("selftest");
    fs::create_dir_all(&work).map_err(|e| Error::runtime(e.to_string()))?;
    match name {
        "swift" => swift(env, &work).and_then(|a| Ok(format!("{a}, {}", s3(env, &work)?))),
        "hdfs" => hdfs(env, &work),
        "webdav" => webdav(env, &work),
        _ if env.contains_key("DFSBENCH_S3_ENDPOINT") => s3(env, &work),
        _ => {
            let url = var(env, "DFSBENCH_TOY_URL")?;
            http_ok(&["-o", "/dev/null"], url).map(|_| "GET ok".to_string())
        }
    }
}

fn s3(env: &BTreeMap<String, String>, work: &Path) -> Result<String> {
    let (ep, bucket) = (var(env, "DFSBENCH_S3_ENDPOINT")?, var(env, "DFSBENCH_S3_BUCKET")?);
    let (key, secret) = (var(env, "AWS_ACCESS_KEY_ID")?, var(env, "AWS_SECRET_ACCESS_KEY")?);
    let region = var(env, "AWS_REGION")?;
    let (netrc, wrong) = (work.join("netrc"), work.join("netrc-wrong"));
    write_s3_netrc(&netrc, key, secret)?;
    write_s3_netrc(&wrong, key, "wrong-secret")?;
    let s3 = S3 {
        endpoint: ep,
        region,
        netrc: &netrc,
    };
    let (data, file) = payload(work)?;
    let obj = format!("{bucket}/selftest/obj");
    let status = |s: &S3, args: &[&str]| s.call(args, &obj).map(|(c, _)| c);
    let expect = |what: &str, got: u16, want: u16| {
        if got == want {
            Ok(())
        } else {
            Err(Error::runtime(format!("{what}: HTTP {got}, not {want}")))
        }
    };
    expect("PUT", status(&s3, &["-o", "/dev/null", "-T", &file])?, 200)?;
    let back = work.join("back").display().to_string();
    expect("GET", status(&s3, &["-o", &back])?, 200)?;
    same("GET", &fs::read(&back).unwrap_or_default(), &data)?;
    expect(
        "ranged GET",
        status(&s3, &["-o", &back, "-H", "Range: bytes=1000-1999"])?,
        206,
    )?;
    same("ranged GET", &fs::read(&back).unwrap_or_default(), &data[1000..2000])?;
    let (code, list) = s3.call(&[], &format!("{bucket}?list-type=2&prefix=selftest%2F"))?;
    if code != 200 || !list.contains("<Key>selftest/obj</Key>") {
        return Err(Error::runtime(format!("LIST: HTTP {code} without the object")));
    }
    let refused = S3 {
        endpoint: ep,
        region,
        netrc: &wrong,
    };
    expect("GET with a wrong secret", status(&refused, &["-o", "/dev/null"])?, 403)?;
    expect("DELETE", status(&s3, &["-o", "/dev/null", "-X", "DELETE"])?, 204)?;
    expect("GET after DELETE", status(&s3, &["-o", "/dev/null"])?, 404)?;
    Ok("s3 PUT/GET/range/list/wrong-secret/DELETE of 1 MiB".into())
}

fn swift(env: &BTreeMap<String, String>, work: &Path) -> Result<String> {
    let (storage, token) = swift_login(
        var(env, "DFSBENCH_SWIFT_AUTH_URL")?,
        var(env, "DFSBENCH_SWIFT_USER")?,
        var(env, "DFSBENCH_SWIFT_KEY")?,
    )?;
    let url = format!("{storage}/{}/selftest-obj", var(env, "DFSBENCH_SWIFT_CONTAINER")?);
    let (data, file) = payload(work)?;
    http_ok(&["-o", "/dev/null", "-H", &token, "-T", &file], &url)?;
    same("GET", &fetch(work, &["-H", &token], &url)?, &data)?;
    http_ok(&["-o", "/dev/null", "-X", "DELETE", "-H", &token], &url)?;
    Ok("swift tempauth + PUT/GET/DELETE of 1 MiB".into())
}

fn hdfs(env: &BTreeMap<String, String>, work: &Path) -> Result<String> {
    let w = var(env, "DFSBENCH_WEBHDFS_URL")?;
    let user = format!("user.name={}", var(env, "HADOOP_USER_NAME")?);
    let path = format!("{w}{}/selftest-obj", var(env, "DFSBENCH_HDFS_DIR")?);
    let (data, file) = payload(work)?;
    // CREATE is two steps: the NameNode answers 307 with a DataNode URL, the data goes there.
    let (_, location) = http(
        &["-o", "/dev/null", "-w", "%{redirect_url}\n%{http_code}", "-X", "PUT"],
        &format!("{path}?op=CREATE&overwrite=true&{user}"),
    )?;
    let location = location.lines().next().unwrap_or_default().to_string();
    if location.is_empty() {
        return Err(Error::runtime("WebHDFS CREATE gave no DataNode URL".into()));
    }
    http_ok(&["-o", "/dev/null", "-X", "PUT", "-T", &file], &location)?;
    same("OPEN", &fetch(work, &["-L"], &format!("{path}?op=OPEN&{user}"))?, &data)?;
    let range = fetch(work, &["-L"], &format!("{path}?op=OPEN&offset=1000&length=1000&{user}"))?;
    same("ranged OPEN", &range, &data[1000..2000])?;
    http_ok(
        &["-o", "/dev/null", "-X", "DELETE"],
        &format!("{path}?op=DELETE&{user}"),
    )?;
    Ok("webhdfs CREATE/OPEN/range/DELETE of 1 MiB".into())
}

fn webdav(env: &BTreeMap<String, String>, work: &Path) -> Result<String> {
    let base = var(env, "DFSBENCH_WEBDAV_URL")?.trim_end_matches('/');
    let c = format!("{base}{}selftest/", var(env, "DFSBENCH_WEBDAV_COLLECTION")?);
    let (data, file) = payload(work)?;
    http_ok(&["-o", "/dev/null", "-X", "MKCOL"], &c)?;
    http_ok(&["-o", "/dev/null", "-T", &file], &format!("{c}a"))?;
    same("GET", &fetch(work, &[], &format!("{c}a"))?, &data)?;
    same(
        "ranged GET",
        &fetch(work, &["-H", "Range: bytes=1000-1999"], &format!("{c}a"))?,
        &data[1000..2000],
    )?;
    http_ok(
        &["-o", "/dev/null", "-X", "COPY", "-H", &format!("Destination: {c}b")],
        &format!("{c}a"),
    )?;
    http_ok(
        &["-o", "/dev/null", "-X", "MOVE", "-H", &format!("Destination: {c}c")],
        &format!("{c}b"),
    )?;
    let listing = http_ok(&["-X", "PROPFIND", "-H", "Depth: 1"], &c)?;
    if !listing.contains("selftest/c<") || listing.contains("selftest/b<") {
        return Err(Error::runtime("PROPFIND after MOVE does not list c alone".into()));
    }
    same("GET after MOVE", &fetch(work, &[], &format!("{c}c"))?, &data)?;
    http_ok(&["-o", "/dev/null", "-X", "DELETE"], &c)?;
    Ok("webdav MKCOL/PUT/GET/range/COPY/MOVE/PROPFIND/DELETE of 1 MiB".into())
}
