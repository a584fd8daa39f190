//! Tests of the fio job file reader: what it reads, what it refuses and how it says so.

use super::*;

/// Every key of [`KEYS`] is one the reader knows, whatever its value: refused, if at all,
/// for its value (with a reason), never as an unknown option; and another key is.
#[test]
fn the_known_keys_are_the_ones_read() {
    let known = |key: &str, value: &str| {
        let o = Opt {
            section: "j".into(),
            key: key.into(),
            value: Some(value.into()),
            line: 1,
        };
        let mut refused = Vec::new();
        Job::default().apply(&o, &mut WorkloadFile::default(), &mut refused);
        refused.iter().all(|r| r.why.is_some())
    };
    for key in KEYS {
        for value in ["1", "read", "4k", "x:y"] {
            assert!(known(key, value), "{key}={value}");
        }
    }
    assert!(!known("norandommap", "1"));
}
use crate::config::validate;

fn no_vars(_: &str) -> Option<String> {
    None
}

#[test]
fn sizes_as_fio_reads_them() {
    assert_eq!(size_bytes("4k").unwrap(), 4096);
    assert_eq!(size_bytes("4K").unwrap(), 4096);
    assert_eq!(size_bytes("4KB").unwrap(), 4096);
    assert_eq!(size_bytes("1MiB").unwrap(), 1_000_000);
    assert_eq!(size_bytes("10G").unwrap(), 10 << 30);
    assert_eq!(size_bytes("524288").unwrap(), 524288);
    assert_eq!(size_bytes("2pb").unwrap(), 2 << 50);
    assert!(size_bytes("50%").is_err());
    assert!(size_bytes("1x").is_err());
    // Suffixes are read by characters: a multi-byte one is refused, not sliced.
    for odd in ["4ý", "4kÿ", "ý", "4\u{1F600}b"] {
        assert!(size_bytes(odd).unwrap_err().contains(odd), "{odd}");
    }
}

#[test]
fn global_and_jobs_become_io_jobs() {
    let text = "; a comment\n[global]\nbs=4K\nsize=${SIZE}\nioengine=libaio\nstonewall\n\n[w]\nrw=write\nnumjobs=2 # two\n[r]\nrw=randread\niodepth=16\n";
    let vars = |n: &str| (n == "SIZE").then(|| "1m".to_string());
    let f = parse("t.fio", text, vars).unwrap();
    assert_eq!(f.jobs.len(), 2);
    let (w, r) = (&f.jobs[0], &f.jobs[1]);
    assert_eq!(w.settings.name.as_deref(), Some("w"));
    assert_eq!(w.settings.workers, Some(2));
    assert_eq!(w.shared.bs.as_deref(), Some("4096"));
    assert_eq!(w.workloads.io.size.as_deref(), Some("1048576"));
    assert_eq!(r.workloads.io.rw.as_deref(), Some("randread"));
    assert_eq!(r.workloads.io.ioengine.as_deref(), Some("libaio"));
    assert_eq!(r.workloads.io.iodepth, Some(16));
    validate(&f.run, &f.jobs).unwrap();
}

/// fio's cached-read setup: pre_read with invalidate off runs; pre_read alone is refused at
/// validation, where the message says to turn invalidation off.
#[test]
fn pre_read_needs_invalidate_off() {
    let cached = parse(
        "t.fio",
        "[r]\nrw=randread\nsize=1m\npre_read=1\ninvalidate=0\n",
        no_vars,
    )
    .unwrap();
    assert_eq!(cached.jobs[0].workloads.io.pre_read, Some(true));
    assert_eq!(cached.run.invalidate, Some(false));
    validate(&cached.run, &cached.jobs).unwrap();
    let alone = parse("t.fio", "[r]\nrw=randread\nsize=1m\npre_read=1\n", no_vars).unwrap();
    let e = validate(&alone.run, &alone.jobs).unwrap_err().to_string();
    assert!(e.contains("pre_read") && e.contains("invalidate"), "{e}");
}

#[test]
fn every_unsupported_option_is_named_with_its_line() {
    let text = "[global]\nsize=1m\nstartdelay=3\n[a]\nrw=trim\n[b]\nrate_iops=50\n";
    let e = parse("t.fio", text, no_vars).unwrap_err().to_string();
    assert!(e.starts_with("t.fio: fio options dfsbench cannot run:"), "{e}");
    for part in [
        "[global] line 3 `startdelay=3`",
        "[a] line 5 `rw=trim`",
        "[b] line 7 `rate_iops=50`",
        "[b] line 6 `[b]`",
    ] {
        assert!(e.contains(part), "{part} in {e}");
    }
    assert!(!e.contains('\n'));
}

#[test]
fn fio_semantics_dfsbench_lacks_are_refused() {
    let e = |t: &str| parse("t.fio", t, no_vars).unwrap_err().to_string();
    let capped = parse("t.fio", "[a]\nsize=1m\nruntime=10\n", no_vars).unwrap();
    assert_eq!(capped.jobs[0].settings.time_based, Some(false));
    assert!(e("[a]\nsize=1m\nfilename=f\nnumjobs=4\n").contains("sharing one file"));
    assert!(e("[a]\nrw=read\n").contains("no size"));
    assert!(e("[a]\nsize=${NOPE}\n").contains("variable NOPE is not set"));
    assert!(e("size=1m\n").contains("outside a section"));
}

/// fio's data and access options become dfsbench's; what dfsbench cannot write is refused.
#[test]
fn data_and_access_options() {
    let text = "[global]\nsize=1m\nrw=randwrite\nstonewall\n[a]\nbuffer_compress_percentage=60\nbuffer_compress_chunk=512\ndedupe_percentage=20\nrandom_distribution=zipf:1.2\n[b]\nrefill_buffers\n[c]\nscramble_buffers=0\n[d]\ndedupe_percentage=30\nrefill_buffers=1\n";
    let f = parse("t.fio", text, no_vars).unwrap();
    let (a, b, c, d) = (&f.jobs[0], &f.jobs[1], &f.jobs[2], &f.jobs[3]);
    assert_eq!(a.shared.compress_percentage, Some(60));
    assert_eq!(a.shared.dedupe_percentage, Some(20));
    assert_eq!(a.shared.random_distribution.as_deref(), Some("zipf:1.2"));
    // refill_buffers: every block generated anew, none a copy.
    assert_eq!(b.shared.dedupe_percentage, Some(0));
    assert_eq!(b.shared.compress_percentage, None);
    // scramble_buffers=0 is dfsbench's default data.
    assert_eq!((c.shared.compress_percentage, c.shared.dedupe_percentage), (None, None));
    // refill_buffers keeps a dedupe percentage the job gave.
    assert_eq!(d.shared.dedupe_percentage, Some(30));
    validate(&f.run, &f.jobs).unwrap();

    let e = |t: &str| {
        parse("t.fio", &format!("[a]\nsize=1m\n{t}\n"), no_vars)
            .unwrap_err()
            .to_string()
    };
    assert!(
        e("scramble_buffers=1").contains("does not scramble"),
        "{}",
        e("scramble_buffers=1")
    );
    assert!(e("buffer_compress_percentage=101").contains("0-100"));
    assert!(e("dedupe_percentage=x").contains("0-100"));
    assert!(e("buffer_compress_chunk=4k").contains("segments of 512 bytes"));
    let zoned = e("random_distribution=zoned:50/5:50/95");
    assert!(
        zoned.contains("[a] line 3 `random_distribution=zoned:50/5:50/95`") && zoned.contains("zipf:THETA"),
        "{zoned}"
    );
}

/// [global] options are applied once, not again for every job after them: a file of 100,000
/// sections is read in linear time (50,000 took 52 s), and each option refused once.
#[test]
fn many_sections_read_in_linear_time() {
    let text = format!("[global]\nsize=1m\n{}", "[j]\nstonewall\n".repeat(100_000));
    let f = parse("t.fio", &text, no_vars).unwrap();
    assert_eq!(f.jobs.len(), 100_000);
    assert_eq!(f.jobs[99_999].workloads.io.size.as_deref(), Some("1048576"));
    let text = "[global]\nfoo=1\n[j]\nsize=1m\nstonewall\n".repeat(50_000);
    let e = parse("t.fio", &text, no_vars).unwrap_err().to_string();
    // Each refused once: the first 50 named, then how many more.
    assert_eq!(e.matches("`foo=1`").count(), 50);
    assert!(
        e.ends_with(", and 49950 more; remove or change them (README: Coming from fio)"),
        "{e}"
    );
}

/// Values are read by characters, and expanded within the size a workload file may have.
#[test]
fn odd_and_huge_values() {
    let e = parse("t.fio", "[a]\nsize=4\u{fd}\n", no_vars).unwrap_err().to_string();
    assert!(
        e.contains("[a] line 2 `size=4\u{fd}`") && e.contains("no byte count"),
        "{e}"
    );
    let big = "x".repeat(10_000);
    let vars = |n: &str| (n == "BIG").then(|| big.clone());
    let text = format!("[a]\nsize=1m\n{}", "description=${BIG}\n".repeat(200));
    let e = parse("t.fio", &text, vars).unwrap_err().to_string();
    assert!(
        e.contains("line 107: with its variables expanded the file is longer than"),
        "{e}"
    );
}

#[test]
fn detects_job_files() {
    assert!(is_job_file("x.fio", ""));
    assert!(is_job_file("job", "; c\n[global]\nbs=4k\n"));
    assert!(!is_job_file("w", "[[job]]\nworkload = \"io\"\n"));
    assert!(!is_job_file("w.toml", "[global]\n"));
}
