//! `dfsbench study all`: the five seed studies at a tiny scale on a temporary directory and
//! mem://, into one folder with one report.html whose contents count each study's cells as its
//! tables.json holds them; a system has one colour in every study's charts; `--resume` keeps
//! what is complete and runs only what is missing.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::SystemTime;

use common::bin;
use serde_json::Value;

const STUDIES: [&str; 5] = ["size-sweep", "clients-sweep", "dfsperf", "surfnet", "fio-matrix"];

fn dfsbench(args: &[&str]) -> Output {
    Command::new("timeout")
        .args(["-s", "KILL", "900", bin(), "study"])
        .args(args)
        .output()
        .expect("run dfsbench study")
}

/// The tiny run: the many-client and many-point sweeps cut to a few points, each point capped.
fn run_all(target: &Path, dir: &Path, more: &[&str]) -> Output {
    let disk = format!("disk={}", target.display());
    let mut args = vec![
        "all",
        "-t",
        &disk,
        "-t",
        "mem=mem://",
        "--scale",
        "0.0001",
        "--max-point-time",
        "5s",
        "--points",
        "clients-sweep:clients2,clients-sweep:iops,fio-matrix:*-4k-t1,dfsperf:metadata,dfsperf:mix*,dfsperf:threads1,dfsperf:threads2",
        "-o",
        dir.to_str().unwrap(),
        "--quiet",
    ];
    args.extend(more);
    dfsbench(&args)
}

/// How the study's cells ended, counted from its tables.json as the contents page counts them.
fn counts(tables: &Value) -> [usize; 4] {
    let mut n = [0; 4];
    for t in tables["tables"].as_array().unwrap() {
        for r in t["rows"].as_array().unwrap() {
            for c in r["cells"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|c| c.as_array().unwrap())
            {
                let text = c["text"].as_str().unwrap();
                let k = if c.get("value").is_some_and(|v| !v.is_null()) {
                    0
                } else if text == "not run" {
                    2
                } else if text.starts_with("n/a") {
                    1
                } else if ["error", "failed", "interrupted", "timed out"]
                    .iter()
                    .any(|w| text.starts_with(w))
                {
                    3
                } else {
                    0
                };
                n[k] += 1;
            }
        }
    }
    n
}

/// `name="value"` of the first tag after `from` in `html`.
fn attr<'a>(html: &'a str, from: &str, name: &str) -> &'a str {
    let at = html.find(from).unwrap_or_else(|| panic!("no {from}"));
    let rest = &html[at..];
    let key = format!("{name}=\"");
    let start = rest.find(&key).unwrap_or_else(|| panic!("no {name} after {from}")) + key.len();
    &rest[start..start + rest[start..].find('"').unwrap()]
}

/// Every file under `dir` with its bytes and modification time.
fn files(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, SystemTime)> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            let m = std::fs::metadata(&p).unwrap().modified().unwrap();
            out.insert(p.clone(), (std::fs::read(&p).unwrap(), m));
        }
    }
    out
}

fn ok(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    // Exit 1 says some cells failed (their cells say why); the page is written all the same.
    assert!(
        out.status.code() == Some(0) || (out.status.code() == Some(1) && stderr.contains("studies had failed runs")),
        "{stderr}"
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

#[test]
fn study_all_writes_every_study_and_one_report_and_resumes() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("seeds");
    let stdout = ok(&run_all(target.path(), &dir, &[]));
    let page = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let mut colours: BTreeMap<String, String> = BTreeMap::new();
    for name in STUDIES {
        let sub = dir.join(name);
        assert!(sub.join("study.json").is_file(), "{name}");
        let tables: Value = serde_json::from_slice(&std::fs::read(sub.join("tables.json")).unwrap()).unwrap();
        assert_eq!(tables["study"], name);
        // The contents row counts the cells as tables.json holds them.
        let [filled, na, not_run, failed] = counts(&tables);
        let row = format!("data-study=\"{name}\"");
        for (key, n) in [
            ("data-filled", filled),
            ("data-na", na),
            ("data-not-run", not_run),
            ("data-failed", failed),
        ] {
            assert_eq!(attr(&page, &row, key), n.to_string(), "{name} {key}");
        }
        assert!(filled > 0, "{name}: some cell has a number");
        assert!(
            stdout.contains(&format!("{} cells: {filled} filled", filled + na + not_run + failed)),
            "{name}: {stdout}"
        );
        assert!(
            page.contains(&format!("<section class=\"seed\" id=\"{name}\">")),
            "{name}"
        );
        // Each chart of the study gives each system the page's colour for it.
        let mut from = 0;
        let marker = format!("id=\"{name}-study-figure-");
        while let Some(at) = page[from..].find(&marker) {
            let systems = attr(&page[from + at..], &marker, "data-systems").replace("&quot;", "\"");
            let map: BTreeMap<String, String> = serde_json::from_str(&systems).unwrap();
            for (label, colour) in map {
                let was = colours.entry(label.clone()).or_insert(colour.clone());
                assert_eq!(*was, colour, "{name}: {label} changed colour");
            }
            from += at + marker.len();
        }
    }
    assert!(colours.len() >= 2, "charts of two systems: {colours:?}");
    let distinct: std::collections::BTreeSet<&String> = colours.values().collect();
    assert_eq!(distinct.len(), colours.len(), "a colour per system: {colours:?}");
    // The publications' own figures, with their hardware; DFS-Perf says it has none.
    assert!(page.contains("Published (their hardware: VMware ESXi"), "surfnet's");
    assert!(page.contains("None in text form"), "dfsperf's");
    assert!(page.contains("Table 12"), "where the numbers come from");

    // Again without --resume: refused, nothing touched.
    let before = files(&dir);
    let again = run_all(target.path(), &dir, &[]);
    assert_eq!(again.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(
        stderr.contains("already holds seed studies") && stderr.contains("--resume"),
        "{stderr}"
    );
    assert_eq!(files(&dir), before);

    // size-sweep stopped before its last point; surfnet's folder is gone: --resume runs those
    // alone.
    let manifest = dir.join("size-sweep/study.json");
    let mut m: Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    m["status"] = "interrupted".into();
    let dropped = m["points"].as_array_mut().unwrap().pop().unwrap();
    std::fs::write(&manifest, serde_json::to_vec_pretty(&m).unwrap()).unwrap();
    std::fs::remove_dir_all(dir.join("surfnet")).unwrap();
    let kept = files(&dir);
    ok(&run_all(target.path(), &dir, &["--resume"]));
    let after = files(&dir);
    let rerun: Vec<String> = dropped["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["result"].as_str())
        .map(|f| dir.join("size-sweep").join(f).display().to_string())
        .collect();
    assert!(!rerun.is_empty(), "{dropped}");
    for (path, (bytes, mtime)) in &kept {
        let p = path.display().to_string();
        let study = path.strip_prefix(&dir).unwrap().components().next().unwrap();
        let study = study.as_os_str().to_str().unwrap();
        // A result file of the studies kept whole, and of size-sweep's points that were complete.
        let result = p.ends_with(".json") && !p.ends_with("tables.json") && !p.ends_with("study.json");
        if ["clients-sweep", "dfsperf", "fio-matrix"].contains(&study) || (result && !rerun.contains(&p)) {
            assert_eq!(after.get(path), Some(&(bytes.clone(), *mtime)), "{p} was touched");
        }
    }
    for p in &rerun {
        let path = PathBuf::from(p);
        assert_ne!(after[&path].1, kept[&path].1, "{p} ran again");
    }
    let m: Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    assert_eq!(m["status"], "complete");
    assert_eq!(m["points"].as_array().unwrap().last().unwrap()["id"], dropped["id"]);
    assert!(dir.join("surfnet/study.json").is_file());
    assert!(dir.join("surfnet/tables.json").is_file());
    let page = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(page.contains("id=\"surfnet\""));

    // `dfsbench report DIR` draws the same page, linking to the studies' folders from where
    // it is written.
    let elsewhere = out.path().join("page.html");
    let r = Command::new(bin())
        .args(["report", dir.to_str().unwrap(), "-o", elsewhere.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let other = std::fs::read_to_string(&elsewhere).unwrap();
    assert!(other.contains("<section id=\"contents\">"));
    for name in STUDIES {
        let link = format!("href=\"{}/tables.md\"", dir.join(name).display());
        assert!(other.contains(&link), "{name}: {link}");
    }

    // One study's own page has the publication's figures beside its tables too.
    let one = out.path().join("surfnet.html");
    let r = Command::new(bin())
        .args([
            "report",
            dir.join("surfnet").to_str().unwrap(),
            "-o",
            one.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let one = std::fs::read_to_string(&one).unwrap();
    let (tables, published) = (
        one.find("<section id=\"tables\">"),
        one.find("Published (their hardware"),
    );
    assert!(tables.is_some() && published > tables, "beside the tables");

    // Another scale is not the same run: refused with one line, nothing touched.
    let before = files(&dir);
    let disk = format!("disk={}", target.path().display());
    let d = dir.to_str().unwrap();
    let other = dfsbench(&[
        "all",
        "-t",
        &disk,
        "-t",
        "mem=mem://",
        "--scale",
        "0.001",
        "-o",
        d,
        "--resume",
    ]);
    let stderr = String::from_utf8_lossy(&other.stderr);
    assert_eq!(other.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("ran at --scale 0.0001, not 0.001"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert_eq!(files(&dir), before);
}

#[test]
fn bad_input_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().to_str().unwrap();
    let out = dir.path().join("o");
    let o = out.to_str().unwrap();
    for (args, says) in [
        (vec!["all", "-t", t, "--points", "clients2", "-o", o], "STUDY:POINT"),
        (vec!["seeds", "-t", t, "--points", "io500:x", "-o", o], "STUDY:POINT"),
        (
            vec!["all", "-t", t, "--points", "surfnet:zz*", "-o", o],
            "'zz*' matches no point of surfnet",
        ),
        (vec!["all", "-t", t, "--resume"], "--out"),
        (vec!["all", "--from", t], "holds none of the seed studies"),
        (vec!["all", "-o", o], "needs --target"),
    ] {
        let r = dfsbench(&args);
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(!out.exists(), "{args:?}: nothing written");
    }
}
