//! The fio job-file reader's tests.

use super::values::size_bytes;
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
            unset: None,
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
    assert!(!known("iodepth_batch", "1"));
}

use crate::config::validate;

fn no_vars(_: &str) -> Option<String> {
    None
}

#[test]
fn sizes_as_fio_reads_them() {
    assert_eq!(size_bytes("4k", 1024).unwrap(), 4096);
    assert_eq!(size_bytes("4K", 1024).unwrap(), 4096);
    assert_eq!(size_bytes("4KB", 1024).unwrap(), 4096);
    assert_eq!(size_bytes("1MiB", 1024).unwrap(), 1_000_000);
    assert_eq!(size_bytes("10G", 1024).unwrap(), 10 << 30);
    assert_eq!(size_bytes("524288", 1024).unwrap(), 524288);
    assert_eq!(size_bytes("2pb", 1024).unwrap(), 2 << 50);
    assert!(size_bytes("50%", 1024).is_err());
    assert!(size_bytes("1x", 1024).is_err());
    // Suffixes are read by characters: a multi-byte one is refused, not sliced.
    for odd in ["4ý", "4kÿ", "ý", "4\u{1F600}b"] {
        assert!(size_bytes(odd, 1024).unwrap_err().contains(odd), "{odd}");
    }
}

#[test]
fn kb_base_1000_gives_the_units_their_si_meaning() {
    assert_eq!(size_bytes("4k", 1000).unwrap(), 4000);
    assert_eq!(size_bytes("4KiB", 1000).unwrap(), 4096);
    let text = "[global]\nkb_base=1000\n[a]\nsize=1m\nbs=4KiB\n";
    let f = parse("t.fio", text, no_vars).unwrap();
    assert_eq!(f.jobs[0].workloads.io.size.as_deref(), Some("1000000"));
    assert_eq!(f.jobs[0].shared.bs.as_deref(), Some("4096"));
}

#[test]
fn a_device_is_refused_as_one() {
    let e = parse("t.fio", "[a]\nsize=1m\nfilename=/dev/sdb\n", no_vars)
        .unwrap_err()
        .to_string();
    assert!(e.contains("`filename=/dev/sdb` (a device: "), "{e}");
    let e = parse("t.fio", "[a]\nsize=1m\nfilename=a:b\n", no_vars)
        .unwrap_err()
        .to_string();
    assert!(e.contains("`filename=a:b` (several files"), "{e}");
}

/// A path as filename: the file is made in the job's directory under its base name, and the
/// path is recorded; filesize gives the file's size, and size beside it the bytes to move.
#[test]
fn a_path_is_a_file_of_the_run_and_filesize_its_size() {
    let text = "[global]\nfilename=/tmp/testfile\nfilesize=1m\nthreads=1\nnrfiles=1\n[a]\n[b]\nsize=4m\n";
    let f = parse("t.fio", text, no_vars).unwrap();
    let io = |j: usize| &f.jobs[j].workloads.io;
    assert_eq!(io(0).filename.as_deref(), Some("testfile"));
    assert_eq!(io(0).fio_filename.as_deref(), Some("/tmp/testfile"));
    assert_eq!(
        (io(0).size.as_deref(), io(0).io_size.as_deref()),
        (Some("1048576"), None)
    );
    assert_eq!(io(1).size.as_deref(), Some("1048576"));
    assert_eq!(
        io(1).io_size.as_deref(),
        Some("4194304"),
        "size beside filesize is io_size"
    );
    validate(&f.run, &f.jobs).unwrap();
    let e = parse("t.fio", "[a]\nsize=1m\nnrfiles=2\nfilesize=1k-2k\n", no_vars)
        .unwrap_err()
        .to_string();
    assert!(e.contains("`nrfiles=2` (several files per clone"), "{e}");
    assert!(e.contains("`filesize=1k-2k` (a range of file sizes"), "{e}");
}

/// fio's rw modifier: an offset added after every I/O of a sequential pattern.
#[test]
fn rw_modifiers_are_holes_between_sequential_ios() {
    let f = parse(
        "t.fio",
        "[a]\nsize=1m\nrw=read:-8k\n[b]\nsize=1m\nrw=write:112k\n",
        no_vars,
    )
    .unwrap();
    assert_eq!(f.jobs[0].workloads.io.rw.as_deref(), Some("read"));
    assert_eq!(f.jobs[0].workloads.io.seq_add.as_deref(), Some("-8192"));
    assert_eq!(f.jobs[1].workloads.io.seq_add.as_deref(), Some("114688"));
    validate(&f.run, &f.jobs).unwrap();
    let e = parse(
        "t.fio",
        "[a]\nsize=1m\nrw=randread:8\n[b]\nsize=1m\nrw=randtrim\n",
        no_vars,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("`rw=randread:8` (dfsbench has"), "{e}");
    assert!(e.contains("`rw=randtrim` (trims are for a device"), "{e}");
}

/// wait_for the only job running is a stonewall; for a job beside others it cannot be kept.
#[test]
fn wait_for_orders_jobs_as_fio_does() {
    let text = "[global]\nsize=1m\n[w]\nrw=write\n[r]\nwait_for=w\nrw=read\n[r2]\nwait_for=r\n";
    let f = parse("t.fio", text, no_vars).unwrap();
    assert!(f.jobs.iter().all(|j| j.settings.group.is_none()), "one after another");
    let e = parse("t.fio", "[global]\nsize=1m\n[a]\n[b]\n[c]\nwait_for=a\n", no_vars)
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 6 `wait_for=a` ('a' runs beside other jobs"), "{e}");
    let e = parse("t.fio", "[global]\nsize=1m\n[a]\n[b]\nwait_for=a\n[c]\n", no_vars)
        .unwrap_err()
        .to_string();
    assert!(e.contains("`wait_for=a` (in fio, job 'c' after it"), "{e}");
    let e = parse("t.fio", "[a]\nsize=1m\nwait_for=z\n", no_vars)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no job before it is named 'z'"), "{e}");
}

/// thinktime (microseconds without a unit), number_ios, blockalign of the block size,
/// fallocate=none.
#[test]
fn thinktime_and_number_ios_are_read() {
    let text = "[a]\nsize=1m\nthinktime=2000\nthinktime_spin=10ms\nthinktime_blocks=4\nnumber_ios=100\nblockalign=4k\nfallocate=none\n";
    let f = parse("t.fio", text, no_vars).unwrap();
    let io = &f.jobs[0].workloads.io;
    assert_eq!(io.thinktime.as_deref(), Some("2000us"));
    assert_eq!(io.thinktime_spin.as_deref(), Some("10ms"));
    assert_eq!((io.thinktime_blocks, io.number_ios), (Some(4), Some(100)));
    let e = validate(&f.run, &f.jobs).unwrap_err().to_string();
    assert!(
        e.contains("thinktime_spin = 10000 us is longer than thinktime = 2000 us"),
        "{e}"
    );
    let e = parse(
        "t.fio",
        "[a]\nsize=1m\nbs=8k\nblockalign=4k\nfallocate=posix\n",
        no_vars,
    )
    .unwrap_err()
    .to_string();
    assert!(!e.contains("blockalign"), "another alignment is io's blockalign: {e}");
    assert!(e.contains("`fallocate=posix` (dfsbench does not preallocate"), "{e}");
    let f = parse("t.fio", "[a]\nsize=1m\nrw=randread\nbs=8k\nblockalign=4k\n", no_vars).unwrap();
    assert_eq!(f.jobs[0].workloads.io.blockalign.as_deref(), Some("4096"));
    validate(&f.run, &f.jobs).unwrap();
}

#[test]
fn ratemin_is_a_floor_per_worker() {
    let f = parse(
        "t.fio",
        "[a]\nsize=1m\nrate=1250\nratemin=1024\nratecycle=1000\n",
        no_vars,
    )
    .unwrap();
    assert_eq!(f.jobs[0].workloads.io.rate_min.as_deref(), Some("1024"));
    let e = parse("t.fio", "[a]\nsize=1m\nratemin=1k\nratecycle=500\n", no_vars)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`ratecycle=500` (dfsbench checks ratemin over every second"),
        "{e}"
    );
}

#[test]
fn jobs_between_stonewalls_are_a_group() {
    let text = "[global]\nsize=1m\n[a]\n[b]\nrw=write\n[c]\nstonewall\n[d]\nstonewall\n[e]\n[a]\nstartdelay=2\n";
    let f = parse("t.fio", text, no_vars).unwrap();
    let groups: Vec<Option<&str>> = f.jobs.iter().map(|j| j.settings.group.as_deref()).collect();
    assert_eq!(groups, [Some("a"), Some("a"), None, Some("d"), Some("d"), Some("d")]);
    assert_eq!(f.jobs[5].settings.start_delay.as_deref(), Some("2"));
    let config = validate(&f.run, &f.jobs).unwrap();
    assert_eq!(config.stages(), [0..2, 2..3, 3..6]);
    // A later group named like an earlier one stays apart.
    let f = parse("t.fio", "[global]\nsize=1m\n[a]\n[b]\n[a]\nstonewall\n[c]\n", no_vars).unwrap();
    let groups: Vec<Option<&str>> = f.jobs.iter().map(|j| j.settings.group.as_deref()).collect();
    assert_eq!(groups, [Some("a"), Some("a"), Some("a 2"), Some("a 2")]);
    assert_eq!(validate(&f.run, &f.jobs).unwrap().stages(), [0..2, 2..4]);
}

#[test]
fn bssplit_and_offsets_map_onto_io_keys() {
    let text =
        "[a]\nsize=1m\nbs=8k\nbssplit=4k/50:64k/:16k/\noffset=1m\noffset_increment=2m\nnumjobs=2\nrate_iops=10\n";
    let f = parse("t.fio", text, no_vars).unwrap();
    let io = &f.jobs[0].workloads.io;
    assert_eq!(io.bssplit.as_deref(), Some("4096/50:65536/25:16384/25"));
    assert_eq!(
        (io.offset.as_deref(), io.offset_increment.as_deref()),
        (Some("1048576"), Some("2097152"))
    );
    assert_eq!(f.jobs[0].shared.bs, None, "bssplit replaces bs");
    assert_eq!(f.jobs[0].settings.rate, Some(20.0));
    validate(&f.run, &f.jobs).unwrap();
    let e = |t: &str| parse("t.fio", t, no_vars).unwrap_err().to_string();
    assert!(e("[a]\nsize=1m\nbssplit=4k/50:8k/50\nrate=1m\n").contains("give rate_iops"));
    // Reads and writes of their own sizes.
    let two = parse(
        "t.fio",
        "[a]\nsize=1m\nrw=randrw\nbssplit=4k/50:8k/50,8k/100\n",
        no_vars,
    )
    .unwrap();
    let io = &two.jobs[0].workloads.io;
    assert_eq!(
        (io.bssplit.as_deref(), io.bssplit_write.as_deref()),
        (Some("4096/50:8192/50"), Some("8192/100"))
    );
    validate(&two.run, &two.jobs).unwrap();
    assert!(e("[a]\nsize=1m\nbssplit=4k/70:8k/70\n").contains("not 100%"));
    assert!(e("[a]\nsize=1m\noffset=10%\n").contains("a share of the file"));
    assert!(e("[a]\nsize=1m\nstartdelay=1-5\n").contains("from a range"));
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
    let text = "[global]\nsize=1m\niodepth_batch=4\n[a]\nrw=trim\n[b]\nbssplit=4k/50:8k/60\n";
    let e = parse("t.fio", text, no_vars).unwrap_err().to_string();
    assert!(e.starts_with("t.fio: fio options dfsbench cannot run:"), "{e}");
    for part in [
        "[global] line 3 `iodepth_batch=4`",
        "[a] line 5 `rw=trim`",
        "[b] line 7 `bssplit=4k/50:8k/60` (the shares make 110%, not 100%)",
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
    // runtime=0 is fio's no limit: one pass over size, also where [global] gave a runtime.
    let unlimited = parse("t.fio", "[global]\nruntime=10\n[a]\nsize=1m\nruntime=0\n", no_vars).unwrap();
    assert_eq!(unlimited.jobs[0].settings.duration, None);
    validate(&unlimited.run, &unlimited.jobs).unwrap();
    assert!(e("[a]\nsize=1m\ntime_based\nruntime=0\n").contains("time_based needs a runtime above 0"));
    // numjobs clones of a named file share it, each over all of it.
    let clones = parse("t.fio", "[a]\nsize=1m\nfilename=f\nnumjobs=4\n", no_vars).unwrap();
    assert_eq!(clones.jobs[0].workloads.io.same_file, Some(true));
    validate(&clones.run, &clones.jobs).unwrap();
    assert!(e("[a]\nrw=read\n").contains("no size"));
    assert!(e("[a]\nsize=${NOPE}\n").contains("[a] line 2 `size=${NOPE}` (variable NOPE is not set"));
    // A job of another engine is refused for its engine, whatever its variables and options.
    let other = e("[global]\nioengine=http\nhttp_host=${HOST}\n[a]\nsize=${NOPE}\nrw=trim\n");
    assert!(
        other.contains("[global] line 2 `ioengine=http` (dfsbench's engines are"),
        "{other}"
    );
    assert!(
        !other.contains("line 3") && !other.contains("line 5") && !other.contains("line 6"),
        "{other}"
    );
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

    // 1024 bytes a second over 4 KiB blocks: a block every 4 s, as fio paces it.
    let slow = parse("t.fio", "[a]\nsize=1m\nrate=1k\n", no_vars).unwrap();
    assert_eq!(slow.jobs[0].settings.rate, Some(0.25));
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
    let zoned = e("random_distribution=zoned:50/5:40/95");
    assert!(
        zoned.contains("[a] line 3 `random_distribution=zoned:50/5:40/95`") && zoned.contains("make both 100%"),
        "{zoned}"
    );
}

/// Pacing, syncs, seeds, passes and the random map as fio means them.
#[test]
fn rates_syncs_seeds_and_passes() {
    let text = "[global]\nsize=1m\nbs=8k\n[a]\nrw=randwrite\nnumjobs=2\nrate_iops=50\nrate_process=poisson\nfdatasync=4\nnorandommap\n\
                [b]\nstonewall\nrw=write\nrate=80k,80k\nfsync=1\nloops=3\nrandseed=42\n";
    let f = parse("t.fio", text, no_vars).unwrap();
    let (a, b) = (&f.jobs[0], &f.jobs[1]);
    // fio paces each clone: dfsbench's rate is the job's.
    assert_eq!(
        (a.settings.rate, a.settings.arrival.as_deref()),
        (Some(100.0), Some("poisson"))
    );
    assert_eq!(
        (a.workloads.io.fdatasync_every, a.workloads.io.norandommap),
        (Some(4), Some(true))
    );
    // 80k bytes a second in 8k blocks.
    assert_eq!(b.settings.rate, Some(10.0));
    assert_eq!((b.workloads.io.fsync_every, b.workloads.io.loops), (Some(1), Some(3)));
    assert_eq!(f.run.seed, Some(42));
    validate(&f.run, &f.jobs).unwrap();
    // randrepeat=0: a seed of its own, not the fixed default.
    let fresh = |_| {
        parse("t.fio", "[a]\nsize=1m\nrandrepeat=0\n", no_vars)
            .unwrap()
            .run
            .seed
    };
    assert!(fresh(0).is_some() && fresh(0) != fresh(1));

    let e = |t: &str| {
        parse("t.fio", &format!("[a]\nsize=1m\n{t}\n"), no_vars)
            .unwrap_err()
            .to_string()
    };
    for (opt, says) in [
        ("rate=1m,500k", "one bytes-per-second figure"),
        ("rate_iops=,50", "one operations-per-second figure"),
        ("rate_process=step", "linear or poisson"),
        ("loops=0", "1 or more"),
    ] {
        assert!(
            e(opt).contains(&format!("`{opt}` (")) && e(opt).contains(says),
            "{opt}: {}",
            e(opt)
        );
    }
}

/// verify= of a checksum kind is dfsbench's check of every byte; a write job reads its
/// data back after writing, as fio's do_verify does (counted as reads in both).
#[test]
fn verify_keeps_fio_checksum_kinds() {
    let f = parse("t.fio", "[w]\nsize=1m\nrw=randwrite\nverify=crc32c\n", no_vars).unwrap();
    assert_eq!(f.run.verify, Some(true));
    assert_eq!(f.jobs[0].workloads.io.then, Some(vec!["read".to_string()]));
    validate(&f.run, &f.jobs).unwrap();
    let quiet = parse("t.fio", "[w]\nsize=1m\nrw=write\nverify=md5\ndo_verify=0\n", no_vars).unwrap();
    assert_eq!(
        (quiet.run.verify, &quiet.jobs[0].workloads.io.then),
        (Some(true), &None)
    );
    let none = parse("t.fio", "[r]\nsize=1m\nverify=0\n", no_vars).unwrap();
    assert_eq!(none.run.verify, None);

    let e = |t: &str| parse("t.fio", t, no_vars).unwrap_err().to_string();
    let pattern = e("[w]\nsize=1m\nrw=write\nverify=pattern\n");
    assert!(
        pattern.contains("`verify=pattern` (") && pattern.contains("crc32c"),
        "{pattern}"
    );
    // Jobs that verify beside jobs that do not: the run verifies, and those skip it.
    let mixed = parse(
        "t.fio",
        "[a]\nsize=1m\nrw=write\n[b]\nsize=1m\nrw=write\nverify=md5\n",
        no_vars,
    )
    .unwrap();
    assert_eq!(mixed.run.verify, Some(true));
    let skip: Vec<_> = mixed.jobs.iter().map(|j| j.workloads.io.skip_verify).collect();
    assert_eq!(skip, [Some(true), None]);
    validate(&mixed.run, &mixed.jobs).unwrap();
}

/// The options of a fio command line, read as a job: the globals before the first
/// `--name`, a job per `--name`, positions named as arguments, the working directory.
#[test]
fn a_command_line_is_read_as_fio_reads_it() {
    let arg = |at: usize, k: &str, v: Option<&str>| (at, k.to_string(), v.map(str::to_string));
    let f = parse_args(
        &[
            arg(1, "bs", Some("8k")),
            arg(2, "name", Some("one")),
            arg(3, "rw", Some("randread")),
            arg(4, "size", Some("1m")),
        ],
        &[],
    )
    .unwrap();
    let here = std::env::current_dir().unwrap();
    assert_eq!(f.target.as_deref(), Some(here.to_str().unwrap()));
    let job = &f.jobs[0];
    assert_eq!(job.settings.name.as_deref(), Some("one"));
    assert_eq!(
        (job.shared.bs.as_deref(), job.workloads.io.rw.as_deref()),
        (Some("8192"), Some("randread"))
    );
    let e = parse_args(
        &[
            arg(1, "name", Some("x")),
            arg(2, "size", Some("1m")),
            arg(3, "zonemode", Some("zbd")),
        ],
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("the fio command line: ") && e.contains("[x] argument 3 `zonemode=zbd`"),
        "{e}"
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

/// fio's flow, flow_id and flow_sleep (microseconds) are the io options of the same names.
#[test]
fn flow_is_read() {
    let f = parse(
        "t.fio",
        "[global]\nsize=1m\nflow_sleep=1000\n[a]\nflow=1\n[b]\nflow=8\nflow_id=2\n",
        no_vars,
    )
    .unwrap();
    let io = |j: usize| &f.jobs[j].workloads.io;
    assert_eq!((io(0).flow, io(0).flow_sleep.as_deref()), (Some(1), Some("1000us")));
    assert_eq!((io(1).flow, io(1).flow_id), (Some(8), Some(2)));
    validate(&f.run, &f.jobs).unwrap();
}

/// fio's dedupe_mode=working_set with its percentage, and dedupe_global.
#[test]
fn the_dedupe_working_set_is_read() {
    let text = "[global]\nsize=1m\nrw=write\ndedupe_percentage=50\ndedupe_mode=working_set\ndedupe_global=1\ndedupe_working_set_percentage=50\n[a]\n[b]\ndedupe_mode=repeat\ndedupe_global=0\n";
    let f = parse("t.fio", text, no_vars).unwrap();
    let io = |j: usize| &f.jobs[j].workloads.io;
    assert_eq!((io(0).dedupe_working_set, io(0).dedupe_global), (Some(50), Some(true)));
    assert_eq!((io(1).dedupe_working_set, io(1).dedupe_global), (None, Some(false)));
    let config = validate(&f.run, &f.jobs).unwrap();
    let crate::workloads::Workload::Io(io) = &config.jobs[0].workload else {
        unreachable!("an io job")
    };
    assert_eq!(io.data.dedupe_working_set_blocks, Some(128), "half of 256 blocks");
    assert!(io.data.dedupe_global);
}

/// exitall and exitall_on_error are the job's; exit_what=all only in the last group.
#[test]
fn exitall_stops_the_group() {
    let text = "[global]\nsize=1m\nexitall\n[a]\nexitall_on_error=1\n[b]\nexit_what=stonewall\n[c]\nstonewall\nexit_what=all\n";
    let f = parse("t.fio", text, no_vars).unwrap();
    let s = |j: usize| &f.jobs[j].settings;
    assert_eq!((s(0).exitall, s(0).exitall_on_error), (Some(true), Some(true)));
    assert_eq!((s(2).exitall, s(2).exitall_on_error), (Some(true), None));
    let config = validate(&f.run, &f.jobs).unwrap();
    assert!(config.jobs[1].exitall && !config.jobs[1].exitall_on_error);
    let e = parse(
        "t.fio",
        "[global]\nsize=1m\nexitall\nexit_what=all\n[a]\n[b]\nstonewall\n",
        no_vars,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("[global] line 4 `exit_what=all` (with exitall, fio stops"),
        "{e}"
    );
    assert_eq!(e.matches("exit_what=all").count(), 1, "named once: {e}");
}

/// verify_interval of dfsbench's 512-byte sector, verify_pattern (dfsbench's data),
/// create_serialize, error_dump and continue_on_error other than none.
#[test]
fn verify_and_error_options_are_read() {
    let text = "[a]\nsize=1m\nrw=write\nverify=meta\nverify_pattern=0xaa555aa5\nverify_interval=512\ncreate_serialize=0\nerror_dump=0\ncontinue_on_error=write\n";
    let f = parse("t.fio", text, no_vars).unwrap();
    assert_eq!(f.run.verify, Some(true));
    validate(&f.run, &f.jobs).unwrap();
    let e = parse(
        "t.fio",
        "[a]\nsize=1m\nverify_interval=4k\ncontinue_on_error=none\n",
        no_vars,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("`verify_interval=4k` (dfsbench's verify header"), "{e}");
    assert!(e.contains("`continue_on_error=none` (dfsbench records an error"), "{e}");
}

/// fill_device needs no size (the target's space is the size) and writes only.
#[test]
fn fill_device_needs_no_size() {
    let f = parse("t.fio", "[a]\nrw=write\nfill_device=1\n", no_vars).unwrap();
    assert_eq!(f.jobs[0].workloads.io.fill_device, Some(true));
    validate(&f.run, &f.jobs).unwrap();
    let f = parse("t.fio", "[a]\nrw=read\nfill_fs=1\n", no_vars).unwrap();
    let e = validate(&f.run, &f.jobs).unwrap_err().to_string();
    assert!(e.contains("fill_device writes until the target is full"), "{e}");
}

/// A zoned block device's job (zonemode=zbd) is refused for its device alone, whatever else
/// it says; strided zones are io's zones.
#[test]
fn zones_strided_or_of_a_zoned_device() {
    let e = parse(
        "t.fio",
        "[global]\nzonemode=zbd\nzonesize=256M\nmax_open_zones=32\n[dev1]\nfilename=/dev/sdj\nioengine=psync\n",
        no_vars,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("`zonemode=zbd` (the target must be a zoned block device"),
        "{e}"
    );
    assert!(!e.contains("max_open_zones") && !e.contains("/dev/sdj"), "{e}");
    let f = parse(
        "t.fio",
        "[a]\nsize=8m\nzonemode=strided\nzonesize=1m\nzoneskip=2m\n",
        no_vars,
    )
    .unwrap();
    let io = &f.jobs[0].workloads.io;
    assert_eq!(
        (io.zonesize.as_deref(), io.zoneskip.as_deref()),
        (Some("1048576"), Some("2097152"))
    );
    validate(&f.run, &f.jobs).unwrap();
    // fio ignores the zone options without zonemode=strided.
    let f = parse("t.fio", "[a]\nsize=8m\nzonesize=1m\n", no_vars).unwrap();
    assert_eq!(f.jobs[0].workloads.io.zonesize, None);
    // A job that creates no file is for a device given on fio's command line.
    let e = parse("t.fio", "[a]\nsize=1m\nallow_file_create=0\nrw=${RW}\n", no_vars)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`allow_file_create=0` (fio then runs only on files that exist"),
        "{e}"
    );
    assert!(!e.contains("RW"), "{e}");
}

/// fio's logs, latency target, priorities and steady state become io's options and the
/// job's steady-state rule.
#[test]
fn measurement_options_are_read() {
    let text = "[global]\nsize=1m\nioengine=libaio\n[first]\nnumjobs=3\n[a]\nwrite_bw_log\nwrite_lat_log=p\nlog_offset=1\nlog_prio=1\n\
                latency_target=500\nlatency_window=100000\nlatency_percentile=99.9\nrandom_generator=lfsr\n\
                prioclass=3\ncmdprio_percentage=20\ncmdprio_class=1\nbssplit=64k/40:1m/60,1m/100\n\
                cmdprio_bssplit=64k/25/1/1:64k/75/3/2,1m/0\n";
    let f = parse("t.fio", text, no_vars).unwrap();
    let io = &f.jobs[1].workloads.io;
    assert_eq!(
        (io.write_bw_log.as_deref(), io.write_lat_log.as_deref()),
        (Some("a"), Some("p"))
    );
    assert_eq!(
        (io.log_offset, io.log_prio, io.log_number),
        (Some(true), Some(true), Some(4))
    );
    assert_eq!(io.latency_target.as_deref(), Some("500us"));
    assert_eq!(io.latency_percentile, Some(99.9));
    assert_eq!((io.prioclass, io.cmdprio_percentage.as_deref()), (Some(3), Some("20")));
    assert_eq!(
        io.cmdprio_bssplit.as_deref(),
        Some("65536/25/1/1:65536/75/3/2,1048576/0")
    );
    let e = validate(&f.run, &f.jobs).unwrap_err().to_string();
    assert!(e.contains("cmdprio_percentage and cmdprio_bssplit"), "{e}");
    // ss: until_stable with fio's measure, window and ramp; clones judged together only.
    let text =
        "[w]\nsize=1m\ntime_based\nruntime=60\nnumjobs=2\ngroup_reporting\nss=bw_slope:1%\nss_dur=10s\nss_ramp=5s\n";
    let f = parse("t.fio", text, no_vars).unwrap();
    let st = &f.jobs[0].settings;
    assert_eq!(
        (st.until_stable, st.stable_measure.as_deref(), st.stable_band.as_deref()),
        (Some(true), Some("bw_slope"), Some("1%"))
    );
    let config = validate(&f.run, &f.jobs).unwrap();
    let rule = config.jobs[0].until_stable.unwrap();
    assert!(rule.slope && rule.bytes && rule.ramp == std::time::Duration::from_secs(5));
    let e = parse("t.fio", &text.replace("group_reporting\n", ""), no_vars)
        .unwrap_err()
        .to_string();
    assert!(e.contains("judges each clone's steady state alone"), "{e}");
}
