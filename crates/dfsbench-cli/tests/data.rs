//! Data like real applications write and read (issue 18): `--compress-percentage` and
//! `--dedupe-percentage` checked on the bytes that reach the files, `--random-distribution`
//! on the blocks a read phase touches, and the memory a worker's buffers cost.

mod common;

use std::collections::HashSet;
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{bin, run, run_ok, Target};

/// The one file a single io worker wrote, in the kept run directory.
fn io_file(t: &Target) -> PathBuf {
    let dirs = t.run_dirs();
    assert_eq!(dirs.len(), 1, "one kept run directory: {dirs:?}");
    dirs[0].join("j0-io/w0.dat")
}

/// Size of `path` over its DEFLATE-compressed size.
fn ratio(path: &Path) -> f64 {
    let data = std::fs::read(path).expect("read the written file");
    let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(&data).unwrap();
    data.len() as f64 / z.finish().unwrap().len() as f64
}

#[test]
fn compression_ratio_follows_the_percentage() {
    for (pct, lo, hi) in [("0", 0.95, 1.02), ("50", 1.8, 2.2), ("90", 7.0, 11.0)] {
        let t = Target::temp();
        let args = [
            "-w",
            "io",
            "--rw",
            "write",
            "--bs",
            "64k",
            "--size",
            "4m",
            "-j",
            "1",
            "--keep",
            "--compress-percentage",
            pct,
        ];
        let result = run_ok(&t, &args);
        assert_eq!(
            result["config"]["jobs"][0]["compress_percentage"],
            pct.parse::<u64>().unwrap()
        );
        let r = ratio(&io_file(&t));
        assert!(
            (lo..hi).contains(&r),
            "compress {pct}%: ratio {r:.2}, expected {lo}-{hi}"
        );
    }
}

#[test]
fn verified_data_can_be_compressible() {
    let t = Target::temp();
    let args = [
        "-w",
        "files",
        "--files",
        "4",
        "--file-size",
        "1m",
        "--phases",
        "write,read",
        "-j",
        "1",
        "--verify",
        "--keep",
        "--compress-percentage",
        "50",
    ];
    let result = run_ok(&t, &args);
    let read = common::phase(&result, "read");
    assert_eq!(
        read["verify"]["checked_bytes"],
        4u64 << 20,
        "every byte read was checked"
    );
    assert_eq!(read["verify"]["mismatches"], 0);
    let file = t.run_dirs()[0].join("j0-files/w0/s0.f0");
    let r = ratio(&file);
    assert!((1.7..2.4).contains(&r), "verify + compress 50%: ratio {r:.2}");
}

#[test]
fn dedupe_share_of_blocks_repeat() {
    for (pct, lo, hi) in [("0", 1.0, 1.0), ("50", 0.4, 0.6)] {
        let t = Target::temp();
        let args = [
            "-w",
            "io",
            "--rw",
            "write",
            "--bs",
            "4k",
            "--size",
            "4m",
            "-j",
            "1",
            "--keep",
            "--dedupe-percentage",
            pct,
        ];
        let result = run_ok(&t, &args);
        assert_eq!(
            result["config"]["jobs"][0]["dedupe_percentage"],
            pct.parse::<u64>().unwrap()
        );
        let data = std::fs::read(io_file(&t)).unwrap();
        let blocks: Vec<&[u8]> = data.chunks(4096).collect();
        let distinct = blocks.iter().collect::<HashSet<_>>().len() as f64 / blocks.len() as f64;
        assert!(
            (lo..=hi).contains(&distinct),
            "dedupe {pct}%: {distinct:.3} of the blocks distinct"
        );
    }
}

/// Bytes of `path` in the page cache (util-linux's fincore).
fn cached_bytes(path: &Path) -> u64 {
    let out = Command::new("fincore")
        .args(["--bytes", "--noheadings", "--output", "RES"])
        .arg(path)
        .output()
        .expect("fincore (util-linux) runs");
    assert!(
        out.status.success(),
        "fincore: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("a byte count")
}

/// The blocks a random read phase touches: every block once per pass by default, a hot set
/// with zipf. The phase starts with the file's cached pages dropped and reads without
/// readahead (POSIX_FADV_RANDOM), so the pages cached afterwards are the blocks it read.
#[test]
fn zipf_reads_touch_far_fewer_blocks_than_uniform() {
    // A directory on the disk: tmpfs keeps every page whatever is dropped.
    let base = env!("CARGO_TARGET_TMPDIR");
    let touched = |dist: &str| {
        let t = Target::Dir(tempfile::tempdir_in(base).unwrap());
        let args = [
            "-w",
            "io",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--size",
            "8m",
            "-j",
            "1",
            "--keep",
            "--random-distribution",
            dist,
        ];
        let result = run_ok(&t, &args);
        let read = common::phase(&result, "randread");
        assert_eq!(read["ops"], 2048, "one pass's worth of reads");
        (
            cached_bytes(&io_file(&t)) / 4096,
            result["config"]["jobs"][0]["random_distribution"].clone(),
        )
    };
    let (uniform, _) = touched("random");
    let (zipf, recorded) = touched("zipf:1.2");
    assert_eq!(recorded, serde_json::json!({"kind": "zipf", "theta": 1.2}));
    assert!(uniform >= 2000, "every block read once: {uniform} of 2048 cached");
    assert!(zipf < uniform / 2, "zipf:1.2 touched {zipf} blocks, uniform {uniform}");
}

#[test]
fn file_picks_follow_the_distribution() {
    for t in Target::both() {
        let args = [
            "-w",
            "files",
            "--files",
            "50",
            "--file-size",
            "4k",
            "-j",
            "2",
            "--random-distribution",
            "pareto:0.2",
        ];
        let result = run_ok(&t, &args);
        assert_eq!(common::phase(&result, "read")["ops"], 100);
        assert_eq!(
            result["config"]["jobs"][0]["random_distribution"],
            serde_json::json!({"kind": "pareto", "h": 0.2})
        );
        let mix = [
            "-w",
            "mix",
            "--mix",
            "read=70,write=30",
            "--files",
            "20",
            "--ops",
            "200",
            "--verify",
            "--compress-percentage",
            "30",
            "--random-distribution",
            "normal:5",
        ];
        run_ok(&t, &mix);
    }
}

#[test]
fn bad_data_options_are_one_line_usage_errors() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["-w", "files", "--verify", "--dedupe-percentage", "10"],
            "dedupe_percentage cannot go with verify",
        ),
        (
            &["-w", "files", "--compress-percentage", "101"],
            "compress_percentage = 101",
        ),
        (
            &["-w", "io", "--rw", "read", "--random-distribution", "zipf:1.2"],
            "random_distribution places random offsets",
        ),
        (
            &["-w", "io", "--rw", "randread", "--random-distribution", "zipf:1"],
            "random_distribution 'zipf:1'",
        ),
        (
            &["-w", "meta", "--compress-percentage", "10"],
            "'compress_percentage' does not apply to the meta workload",
        ),
    ];
    for (args, want) in cases {
        let r = run("mem://", args);
        assert_eq!(r.code, Some(2), "{args:?}: {}", r.describe());
        let lines = r.stderr_lines();
        assert_eq!(lines.len(), 1, "{args:?}: {}", r.describe());
        assert!(lines[0].contains(want), "{args:?}: {}", lines[0]);
    }
}

/// Peak RSS (KiB) of one `dfsbench run` on `target`.
#[allow(clippy::zombie_processes)] // reaped by wait4, which also gives its rusage
fn peak_rss_kib(target: &str, args: &[&str]) -> i64 {
    let scratch = tempfile::tempdir().unwrap();
    let child = Command::new(bin())
        .args(["run", "-t", target, "-q", "-o"])
        .arg(scratch.path().join("r.json"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("start dfsbench");
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for this child only.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the pid is our child's, status and usage point at live locals.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32, "wait4");
    assert!(
        std::process::ExitStatus::from_raw(status).success(),
        "dfsbench {args:?} failed"
    );
    usage.ru_maxrss
}

/// A worker's buffer follows what it moves: 4 KiB files cost 64 workers a few KiB each, where
/// they cost a whole --bs (1 MiB) each before; 1 MiB files need their 1 MiB read buffers.
#[test]
fn small_files_cost_small_buffers() {
    let t = Target::temp();
    let rss = |size: &str| {
        let args = ["-w", "files", "--files", "1", "--file-size", size, "-j", "64"];
        peak_rss_kib(&t.uri(), &args)
    };
    let (small, large) = (rss("4k"), rss("1m"));
    assert!(
        small + 32 * 1024 < large,
        "peak RSS with 4 KiB files {small} KiB, with 1 MiB files {large} KiB"
    );
}
