//! A block device as the target: refused unless `--overwrite-device` names it, and then io
//! jobs write and read the device itself, at their offsets, and nothing else. The device is
//! a loop device over a file in a temporary directory, reached through a node made with mknod
//! there (never the real /dev).

mod common;

use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::Command;

use common::loopdev::{Loop, DEVICE, MIB};
use common::{f, u};

fn all_zero(bytes: &[u8]) -> bool {
    bytes.iter().all(|&b| b == 0)
}

/// The node is still a block device and the backing file keeps its size.
fn device_intact(l: &Loop) {
    let meta = std::fs::metadata(l.node()).unwrap();
    assert!(meta.file_type().is_block_device());
    assert_eq!(l.contents().len(), DEVICE);
}

#[test]
fn a_device_is_refused_unless_the_flag_names_it() {
    let Some(l) = Loop::new() else { return };
    let node = l.node_str();
    let io = ["-w", "io", "--rw", "write", "--size", "1m"];
    // Refused at the target's opening (exit 1, as a missing directory) or as bad flags (2).
    let one_line = |r: &common::Run, says: &str| {
        assert!(matches!(r.code, Some(1 | 2)), "{}", r.describe());
        let lines = r.stderr_lines();
        assert_eq!(lines.len(), 1, "{}", r.describe());
        assert!(lines[0].contains(says), "{}", lines[0]);
    };
    // No flag: the target is a device, and the error says how to accept that.
    let r = common::run(&node, &io);
    one_line(
        &r,
        &format!("is a block device: dfsbench would overwrite the data on it; pass --overwrite-device {node}"),
    );
    // The flag names another path.
    let other = l.dir.path().join("other").display().to_string();
    let r = common::run(&node, &[&io[..], &["--overwrite-device", &other]].concat());
    one_line(
        &r,
        &format!("--overwrite-device names {other}, but the target is {node}"),
    );
    // The flag names a regular file that is the target.
    let file = l.dir.path().join("back.img").display().to_string();
    let r = common::run(&file, &[&io[..], &["--overwrite-device", &file]].concat());
    one_line(&r, "not a block device");
    // A fio job file naming the device without the flag: the line and the flag to pass.
    let job = l.dir.path().join("dev.fio");
    std::fs::write(&job, format!("[a]\nrw=write\nbs=4k\nsize=64k\nfilename={node}\n")).unwrap();
    let r = common::dfsbench(&["run", job.to_str().unwrap()]);
    one_line(
        &r,
        &format!("line 5 `filename={node}` (a device: dfsbench overwrites a device only when --overwrite-device {node} names it)"),
    );
    // Other workloads need names: refused on a device.
    let r = common::run(&node, &["-w", "meta", "--overwrite-device", &node]);
    one_line(
        &r,
        "job 'meta' cannot run on the device: only io jobs run on a block device",
    );
    assert!(all_zero(&l.contents()), "a refused run wrote to the device");
    device_intact(&l);
}

#[test]
fn io_jobs_write_and_read_the_device_at_their_offsets() {
    let Some(l) = Loop::new() else { return };
    let node = l.node_str();
    let flag = ["--overwrite-device", node.as_str()];
    // One worker writes 1 MiB at offset 1 MiB, self-describing, then reads it back checked.
    let args = [
        &flag[..],
        &[
            "-w", "io", "--rw", "write", "--then", "read", "--bs", "64k", "--size", "1m",
        ],
        &["--offset", "1m", "-j", "1", "--verify"],
    ]
    .concat();
    let r = common::run(&node, &args);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let result = r.result();
    assert_eq!(result["target"]["backend"], "device");
    assert_eq!(result["target"]["details"]["device_bytes"], DEVICE.to_string().as_str());
    let write = common::phase(result, "write");
    let read = common::phase(result, "read");
    assert_eq!(u(&write["bytes"]) as usize, MIB, "{write}");
    assert_eq!(u(&read["bytes"]) as usize, MIB, "{read}");
    assert_eq!(u(&read["verify"]["checked_bytes"]) as usize, MIB, "{read}");
    assert_eq!(u(&read["verify"]["mismatches"]), 0, "{read}");
    let bytes = l.contents();
    assert!(all_zero(&bytes[..MIB]), "written before the offset");
    assert!(!all_zero(&bytes[MIB..2 * MIB]), "the region holds no data");
    assert!(all_zero(&bytes[2 * MIB..]), "written past the region");

    // Without a size, every worker reads the whole device, as fio's jobs on a device do;
    // nothing is laid out first (the device is read as it is).
    let args = [&flag[..], &["-w", "io", "--rw", "read", "--bs", "1m", "-j", "2"]].concat();
    let r = common::run(&node, &args);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let result = r.result();
    let names = common::names(result);
    assert!(!names.iter().any(|n| n.starts_with("layout")), "{names:?}");
    let read = common::phase(result, "read");
    assert_eq!(u(&read["bytes"]) as usize, 2 * DEVICE, "{read}");
    assert!(f(&read["duration_s"]) > 0.0);
    assert_eq!(l.contents()[..MIB], vec![0u8; MIB][..], "a read wrote");

    // A job that reaches past the device's end is refused before it runs.
    let args = [
        &flag[..],
        &["-w", "io", "--rw", "write", "--size", "8m", "--offset", "1m"],
    ]
    .concat();
    let r = common::run(&node, &args);
    assert!(matches!(r.code, Some(1 | 2)), "{}", r.describe());
    assert!(r.stderr.contains("past the device's end"), "{}", r.stderr);
    device_intact(&l);
}

/// A fio job file whose filename= is the device runs with the flag: two clones, each over
/// the whole region, as fio's numjobs on one device.
#[test]
fn a_fio_job_file_on_the_named_device() {
    let Some(l) = Loop::new() else { return };
    let node = l.node_str();
    let job = l.dir.path().join("dev.fio");
    std::fs::write(
        &job,
        format!("[clones]\nrw=randwrite\nbs=4k\nsize=256k\nnumjobs=2\nfilename={node}\n"),
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let result_file = out.path().join("r.json");
    let r = Command::new(common::bin())
        .args(["run", job.to_str().unwrap(), "-q", "--overwrite-device", &node, "-o"])
        .arg(&result_file)
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let result: serde_json::Value = serde_json::from_slice(&std::fs::read(&result_file).unwrap()).unwrap();
    assert_eq!(result["target"]["run_path"], node.as_str());
    let write = common::phase(&result, "randwrite");
    assert_eq!(u(&write["bytes"]), 2 * 256 * 1024, "{write}");
    let bytes = l.contents();
    assert!(!all_zero(&bytes[..256 * 1024]));
    assert!(all_zero(&bytes[256 * 1024..]), "written past the job's size");
    device_intact(&l);
    assert!(Path::new(&node).exists());
}
