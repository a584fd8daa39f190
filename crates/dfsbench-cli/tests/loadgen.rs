//! Load generation: the mix and iterate workloads, open-loop rates against a deliberately slow
//! backend, steady-state detection and null tests, through the real binary.

mod common;

use common::{f, phase, phases, run, run_ok, u, validate, Target};
use serde_json::Value;

/// The per-kind breakdown of a phase, as (op, ops, bytes).
fn kinds(p: &Value) -> Vec<(String, u64, u64)> {
    p["ops_by_kind"]
        .as_array()
        .expect("ops_by_kind")
        .iter()
        .map(|k| (k["op"].as_str().unwrap().to_string(), u(&k["ops"]), u(&k["bytes"])))
        .collect()
}

fn kind<'a>(p: &'a Value, op: &str) -> &'a Value {
    p["ops_by_kind"]
        .as_array()
        .expect("ops_by_kind")
        .iter()
        .find(|k| k["op"] == op)
        .unwrap_or_else(|| panic!("no {op} in {}", p["label"]))
}

#[test]
fn mix_follows_its_weights_and_sizes() {
    for target in Target::both() {
        let r = run_ok(
            &target,
            &[
                "-w",
                "mix",
                "--mix",
                "get=45,put=15,stat=30,delete=5,list=5",
                "--sizes",
                "4k:70,64k:30",
                "--files",
                "50",
                "--ops",
                "4000",
                "-j",
                "2",
                "--bs",
                "16k",
                "--seed",
                "7",
                "--verify",
            ],
        );
        let fill = phase(&r, "fill");
        assert_eq!(fill["prepare"], true);
        assert_eq!(u(&fill["ops"]), 100, "50 files per worker written before the mix");
        let mix = phase(&r, "mix");
        let total = u(&mix["ops"]);
        // Every draw runs unless deletes emptied the pool, which 15 % writes never allow here.
        assert_eq!(total, 8000);
        let want = [
            ("read", 45.0),
            ("write", 15.0),
            ("stat", 30.0),
            ("delete", 5.0),
            ("list", 5.0),
        ];
        for (op, share) in want {
            let got = u(&kind(mix, op)["ops"]) as f64 / total as f64 * 100.0;
            assert!((got - share).abs() < 2.5, "{op}: {got:.1}% for {share}%");
        }
        // Sizes: 70 % of 4 KiB and 30 % of 64 KiB, so the mean file is ~22 KiB.
        for op in ["read", "write"] {
            let k = kind(mix, op);
            let mean = u(&k["bytes"]) as f64 / u(&k["ops"]) as f64;
            assert!((14_000.0..30_000.0).contains(&mean), "{op}: mean size {mean}");
        }
        assert_eq!(u(&kind(mix, "stat")["bytes"]), 0);
        let v = &mix["verify"];
        assert_eq!(u(&v["mismatches"]), 0);
        assert_eq!(
            u(&v["checked_bytes"]),
            u(&kind(mix, "read")["bytes"]),
            "every byte read was checked"
        );
        assert!(u(&mix["items"]) > 0, "list saw the pool");
    }
}

#[test]
fn mix_sizes_follow_ranges_and_a_fixed_seed_repeats() {
    let target = Target::Mem;
    let args = [
        "-w",
        "mix",
        "--mix",
        "read=50,write=50",
        "--sizes",
        "1k-3k",
        "--files",
        "20",
        "--ops",
        "500",
        "-j",
        "2",
        "--seed",
        "11",
    ];
    let a = run_ok(&target, &args);
    let b = run_ok(&target, &args);
    let write = |r: &Value| {
        let k = kind(phase(r, "mix"), "write");
        (u(&k["ops"]), u(&k["bytes"]))
    };
    let (ops, bytes) = write(&a);
    let mean = bytes as f64 / ops as f64;
    assert!((1800.0..2300.0).contains(&mean), "uniform 1k-3k: mean write {mean}");
    assert_eq!(
        write(&a),
        write(&b),
        "the same seed draws the same operations and sizes"
    );
    assert_eq!(kinds(phase(&a, "mix")), kinds(phase(&b, "mix")));
}

#[test]
fn iterate_reads_the_previous_iterations_files() {
    for target in Target::both() {
        for shuffle in [false, true] {
            let mut args = vec![
                "-w",
                "iterate",
                "--iterations",
                "3",
                "--files",
                "4",
                "--file-size",
                "10k",
                "-j",
                "3",
                "--verify",
            ];
            if shuffle {
                args.push("--shuffle");
            }
            let r = run_ok(&target, &args);
            let ps = phases(&r);
            assert_eq!(ps.len(), 3);
            let per_iteration = 3 * 4 * 10240;
            assert_eq!(u(&ps[0]["bytes"]), per_iteration, "iteration 0 only writes");
            assert!(ps[0].get("ops_by_kind").is_none());
            for p in &ps[1..] {
                assert_eq!(u(&kind(p, "read")["bytes"]), per_iteration, "{}", p["label"]);
                assert_eq!(u(&kind(p, "write")["bytes"]), per_iteration, "{}", p["label"]);
                assert_eq!(p["params"]["shuffle"], shuffle);
                let from: Vec<Option<u64>> = p["workers_detail"]
                    .as_array()
                    .expect("workers_detail")
                    .iter()
                    .map(|w| w.get("read_from").and_then(|v| v.as_u64()))
                    .collect();
                let expected = if shuffle {
                    vec![Some(1), Some(2), Some(0)]
                } else {
                    vec![None; 3]
                };
                assert_eq!(from, expected, "with shuffle worker w reads worker (w + 1) mod 3");
                // The pattern of every file names the worker and iteration that wrote it: a
                // read of any other file than (iteration - 1, source worker) is a mismatch.
                assert_eq!(u(&p["verify"]["mismatches"]), 0);
                assert_eq!(u(&p["verify"]["checked_bytes"]), per_iteration);
            }
        }
    }
}

/// mem://?latency=5ms with 2 workers serves at most ~400 operations per second.
const SLOW: &str = "mem://?latency=5ms";

#[test]
fn open_loop_keeps_offering_load_that_a_slow_backend_cannot_serve() {
    let r = run(
        SLOW,
        &[
            "-w",
            "meta",
            "--phases",
            "create",
            "--files",
            "100000000",
            "--duration",
            "2s",
            "-j",
            "2",
            "--rate-steps",
            "100,200,1000",
        ],
    );
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let res = r.result();
    validate(res);
    let steps = phases(res);
    assert_eq!(steps.len(), 3);
    let rate = |p: &Value, k: &str| f(&p["rate"][k]);
    // What 2 workers can serve, from the service time this run measured: a loaded machine
    // stretches the 5 ms sleeps, and the capacity with them.
    let capacity = |p: &Value| 2e9 / f(&p["rate"]["service_latency"]["mean_ns"]);
    assert!(
        100.0 <= 0.7 * capacity(&steps[0]),
        "the machine is too busy to serve even 100/s with 2 workers of 5 ms: {} /s",
        capacity(&steps[0])
    );
    for p in steps[..2]
        .iter()
        .filter(|p| rate(p, "requested_ops_per_sec") <= 0.7 * capacity(p))
    {
        // Below capacity the offered rate is achieved and response time is service time.
        let (req, got) = (rate(p, "requested_ops_per_sec"), rate(p, "achieved_ops_per_sec"));
        assert!((got - req).abs() < 0.1 * req, "{}: achieved {got} of {req}", p["label"]);
        let service = u(&p["rate"]["service_latency"]["p50_ns"]);
        assert!(service >= 5_000_000, "the injected 5 ms is measured: {service}");
        assert!(
            u(&p["latency"]["p50_ns"]) < 2 * service,
            "{}: {}",
            p["label"],
            p["latency"]
        );
    }
    // Beyond capacity the schedule still asks for 1000/s: the backlog shows as response time
    // from the intended start, while each operation's service time stays ~5 ms.
    let over = &steps[2];
    assert_eq!(rate(over, "requested_ops_per_sec"), 1000.0);
    let got = rate(over, "achieved_ops_per_sec");
    assert!(got < 600.0, "2 workers of 5 ms cannot serve 1000/s, achieved {got}");
    let response = u(&over["latency"]["p99_ns"]);
    let service = u(&over["rate"]["service_latency"]["p99_ns"]);
    assert!(
        response > 20 * service,
        "p99 response {response} ns vs service {service} ns"
    );
    assert!(response > 300_000_000, "a second of backlog: p99 {response} ns");
    assert!(
        r.stdout.contains("requested/s"),
        "the text output has the rate table: {}",
        r.stdout
    );

    // The same backend in a closed loop hides the backlog (coordinated omission): whatever
    // load was wanted, its latency is the service time.
    let closed = run(
        SLOW,
        &[
            "-w",
            "meta",
            "--phases",
            "create",
            "--files",
            "100000000",
            "--duration",
            "1s",
            "-j",
            "2",
        ],
    );
    assert_eq!(closed.code, Some(0), "{}", closed.describe());
    let p = phase(closed.result(), "create");
    assert!(p.get("rate").is_none());
    assert!(
        u(&p["latency"]["p99_ns"]) < response / 10,
        "closed-loop p99 {}",
        p["latency"]["p99_ns"]
    );
}

#[test]
fn slow_mem_delays_workers_side_by_side() {
    let r = run(
        SLOW,
        &[
            "-w",
            "meta",
            "--phases",
            "create",
            "--files",
            "100000000",
            "--duration",
            "1s",
            "-j",
            "4",
        ],
    );
    assert_eq!(r.code, Some(0), "{}", r.describe());
    let p = phase(r.result(), "create");
    // Side by side, the 4 workers' operations overlap: by Little's law, ops/s times the mean
    // time of one is how many were in flight on average, near 4 (1 if the delays were taken in
    // turn). Both come from the same run, so a loaded machine that stretches the 5 ms sleeps
    // stretches both.
    let rate = f(&p["ops_per_sec"]);
    let mean_s = f(&p["latency"]["mean_ns"]) / 1e9;
    assert!(rate * mean_s > 2.5, "4 workers of 5 ms: {rate}/s at {mean_s} s each");
    assert!(u(&p["latency"]["p50_ns"]) >= 5_000_000);
}

#[test]
fn io_blocks_can_be_paced() {
    for target in Target::both() {
        let r = run_ok(
            &target,
            &[
                "-w",
                "io",
                "--rw",
                "randrw",
                "--bs",
                "4k",
                "--size",
                "1m",
                "--duration",
                "2s",
                "-j",
                "2",
                "--rate",
                "300",
                "--verify",
            ],
        );
        let p = phase(&r, "randrw");
        let got = f(&p["rate"]["achieved_ops_per_sec"]);
        assert!(
            (got - 300.0).abs() < 30.0,
            "{}: achieved {got}/s of 300/s",
            target.backend()
        );
        assert_eq!(u(&p["rate"]["service_latency"]["count"]), u(&p["ops"]));
    }
}

/// A paced io job at a queue depth above 1 (fio's io_submit_mode=offload): each engine waits
/// for the next start or a completion, whichever comes first, so blocks start on schedule
/// while others are in flight; none starts early, none is lost, and what is read is checked.
#[test]
fn io_blocks_can_be_paced_at_a_queue_depth() {
    let target = Target::temp();
    for engine in ["io_uring", "libaio", "posixaio"] {
        let r = run_ok(
            &target,
            &[
                "-w",
                "io",
                "--rw",
                "randrw",
                "--bs",
                "4k",
                "--size",
                "1m",
                "--duration",
                "1s",
                "-j",
                "2",
                "--rate",
                "400",
                "--iodepth",
                "8",
                "--ioengine",
                engine,
                "--verify",
            ],
        );
        let p = phase(&r, "randrw");
        let ops = u(&p["ops"]);
        // The schedule has 400 starts a second for all workers: never more blocks than that.
        assert!(ops > 0 && ops <= 400 + 2, "{engine}: {ops} blocks in 1 s at 400/s");
        assert_eq!(p["params"]["ioengine"], engine, "{engine}");
        assert_eq!(u(&p["params"]["iodepth"]), 8, "{engine}");
        let service = &p["rate"]["service_latency"];
        assert_eq!(u(&service["count"]), ops, "{engine}");
        // A block's response counts from its intended start, which is never after its start.
        assert!(u(&p["latency"]["p50_ns"]) >= u(&service["p50_ns"]), "{engine}");
        assert!(u(&p["latency"]["max_ns"]) >= u(&service["max_ns"]), "{engine}");
    }
}

/// A pace sparser than its phase: one block a second for 2.5 s is three blocks (at 0, 1 and 2
/// s), and the phase lasts its 2.5 s, idle after the last, so its achieved rate is what was
/// asked for, not three blocks over the two seconds they took.
#[test]
fn a_sparse_pace_lasts_its_whole_phase() {
    let args = [
        "-w",
        "io",
        "--rw",
        "read",
        "--bs",
        "4k",
        "--size",
        "64k",
        "--duration",
        "2500ms",
        "-j",
        "1",
        "--rate",
        "1",
    ];
    let r = run_ok(&Target::Mem, &args);
    let p = phase(&r, "read");
    assert_eq!(u(&p["ops"]), 3, "{p}");
    assert!(f(&p["duration_s"]) >= 2.5 - 1e-6, "{}", p["duration_s"]);
    assert!(
        f(&p["rate"]["achieved_ops_per_sec"]) <= 3.0 / 2.5 + 1e-6,
        "{}",
        p["rate"]
    );
}

/// `--rate-min` (fio's ratemin): a worker paced below the floor stops after its first second
/// with one error of kind ratemin; the run still ends with every figure it measured.
#[test]
fn io_rate_min_stops_a_worker_below_it() {
    for target in Target::both() {
        // 2 blocks of 4 KiB a second per worker, against a floor of 64 KiB/s.
        let args = [
            "-w",
            "io",
            "--rw",
            "read",
            "--bs",
            "4k",
            "--size",
            "1m",
            "--duration",
            "3s",
            "-j",
            "2",
            "--rate",
            "4",
            "--rate-min",
            "64k",
        ];
        let r = run(&target.uri(), &args);
        let result = r.result();
        validate(result);
        let p = phase(result, "read");
        assert_eq!(
            p["errors"]["by_kind"]["ratemin"],
            2,
            "{}: one per worker: {}",
            target.backend(),
            p["errors"]
        );
        let sample = p["errors"]["samples"][0]["message"].as_str().unwrap();
        assert!(sample.contains("below the 65536 bytes/s of ratemin"), "{sample}");
        // Stopped early: fewer than the 12 blocks of three paced seconds.
        assert!(u(&p["ops"]) < 12, "{}: {} blocks", target.backend(), p["ops"]);
    }
}

#[test]
fn poisson_arrivals_keep_the_mean_rate() {
    let r = run_ok(
        &Target::Mem,
        &[
            "-w",
            "mix",
            "--mix",
            "read=90,write=10",
            "--files",
            "10",
            "--sizes",
            "1k",
            "--duration",
            "2s",
            "-j",
            "2",
            "--rate",
            "500",
            "--arrival",
            "poisson",
        ],
    );
    let p = phase(&r, "mix");
    assert_eq!(p["rate"]["arrival"], "poisson");
    let got = f(&p["rate"]["achieved_ops_per_sec"]);
    assert!((got - 500.0).abs() < 75.0, "achieved {got}/s of 500/s");
}

#[test]
fn until_stable_ends_steady_phases_early_and_others_at_the_limit() {
    // Paced at 400/s the per-second counts are flat: steady after the 3-second window.
    let steady = run_ok(
        &Target::Mem,
        &[
            "-w",
            "meta",
            "--phases",
            "create",
            "--files",
            "100000000",
            "--duration",
            "30s",
            "-j",
            "2",
            "--rate",
            "400",
            "--until-stable",
            "--stable-window",
            "3s",
            "--stable-band",
            "10%",
        ],
    );
    let p = phase(&steady, "create");
    assert_eq!(p["steady"]["stable"], true, "{}", p["steady"]);
    let at = f(&p["steady"]["stable_at_s"]);
    assert!((2.9..8.0).contains(&at), "steady at {at} s");
    assert!(f(&p["duration_s"]) < 10.0, "ended early: {}", p["duration_s"]);

    // A band no free-running phase stays within: the phase runs to its duration.
    let unsteady = run_ok(
        &Target::Mem,
        &[
            "-w",
            "meta",
            "--phases",
            "create",
            "--files",
            "100000000",
            "--duration",
            "3s",
            "-j",
            "2",
            "--until-stable",
            "--stable-window",
            "2s",
            "--stable-band",
            "0.0001%",
        ],
    );
    let p = phase(&unsteady, "create");
    assert_eq!(p["steady"]["stable"], false, "{}", p["steady"]);
    assert!(p["steady"].get("stable_at_s").is_none());
    assert!(f(&p["duration_s"]) >= 2.9, "ran to the limit: {}", p["duration_s"]);
}

#[test]
fn null_tests_are_recorded() {
    for target in Target::both() {
        let r = run_ok(&target, &["-w", "meta", "--files", "10", "--null-tests"]);
        let n = &r["null_tests"];
        let disk = &n["local_disk"];
        assert!(f(&disk["write_bytes_per_sec"]) > 1e6, "{disk}");
        assert!(f(&disk["read_bytes_per_sec"]) > 1e6, "{disk}");
        let rtt = &n["round_trip"];
        assert_eq!(rtt["op"], "lookup of a new name");
        assert!(u(&rtt["min_ns"]) > 0 && u(&rtt["median_ns"]) < 1_000_000_000, "{rtt}");
        assert!(f(&n["bandwidth"]["read_bytes_per_sec"]) > 1e6);
        assert!(n.get("connect").is_none(), "no endpoint to connect to");
        assert!(n.get("errors").is_none(), "{n}");
    }
    // On the slow backend the round trip shows the injected latency.
    let r = run(SLOW, &["-w", "meta", "--files", "2", "--null-tests"]);
    assert_eq!(r.code, Some(0), "{}", r.describe());
    assert!(u(&r.result()["null_tests"]["round_trip"]["median_ns"]) >= 5_000_000);
    assert!(
        r.stdout.contains("null test: target lookup of a new name median"),
        "{}",
        r.stdout
    );
}

/// A child process killed when the test ends, also when it fails.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(program: &str, args: &[&str]) -> Killed {
    Killed(std::process::Command::new(program).args(args).spawn().unwrap())
}

/// The kernel's CPU accounting unit, in seconds.
fn clock_tick_s() -> f64 {
    // SAFETY: sysconf has no preconditions.
    1.0 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

/// CPU seconds (user + system) the kernel has charged to `pid` so far.
fn kernel_cpu_s(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..].split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the command name.
    let ticks: f64 = after[11].parse::<f64>().unwrap() + after[12].parse::<f64>().unwrap();
    ticks * clock_tick_s()
}

/// `--server-pid` records the CPU of the given processes per phase: a busy one shows, an idle
/// one does not, one that is gone at the start is a clear error. The checks are relations to
/// the kernel's own counters that hold however loaded the machine is (a busy loop may get only
/// a few hundredths of a core on a loaded machine).
#[test]
fn server_cpu_is_recorded_for_the_given_processes() {
    let busy = spawn("sh", &["-c", "while :; do :; done"]);
    let idle = spawn("sleep", &["60"]);
    let target = Target::temp();
    // The CPU recorded for the phase, the cores it makes, and what the kernel charged the
    // process over the whole command, which contains the phase.
    let measure = |pid: u32| {
        let args = [
            "-w",
            "meta",
            "--files",
            "100000000",
            "--phases",
            "create",
            "--duration",
            "1s",
            "--server-pid",
            &pid.to_string(),
        ];
        let before = kernel_cpu_s(pid);
        let r = run_ok(&target, &args);
        let around = kernel_cpu_s(pid) - before;
        let s = &phase(&r, "create")["server_cpu"];
        assert_eq!(s["pids"], serde_json::json!([pid]), "{s}");
        assert!(s.get("missing_pids").is_none(), "{s}");
        (f(&s["user_s"]) + f(&s["sys_s"]), f(&s["cores"]), around)
    };
    let tick = clock_tick_s();
    let (busy_s, busy_cores, busy_around) = measure(busy.0.id());
    assert!(busy_s > 0.0, "a busy loop ran during the phase: {busy_s} s");
    assert!(
        busy_s <= busy_around + tick,
        "the phase is inside the command: {busy_s} s recorded, {busy_around} s around it"
    );
    assert!(busy_cores <= 1.05, "one thread uses at most one core: {busy_cores}");
    let (idle_s, _, idle_around) = measure(idle.0.id());
    assert!(
        idle_s <= idle_around + tick,
        "idle: {idle_s} s, {idle_around} s around it"
    );
    assert!(idle_s <= tick, "a sleeping process uses no CPU: {idle_s} s");
    let gone = idle.0.id();
    drop(idle);
    let r = run(
        &target.uri(),
        &["-w", "meta", "--files", "5", "--server-pid", &gone.to_string()],
    );
    assert_ne!(r.code, Some(0));
    assert!(
        r.stderr.contains(&format!("--server-pid {gone}: no process")),
        "{}",
        r.describe()
    );
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.describe());
}

/// The DFS-Perf workload files in workloads/ run as shipped (shortened with overrides).
#[test]
fn dfsperf_workload_files_run() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/");
    let mixture = format!("{dir}dfsperf-mixture.toml");
    let r = run_ok(
        &Target::Mem,
        &[&mixture, "-j", "1", "--duration", "2s", "--stable-window", "2s"],
    );
    let mixes: Vec<&Value> = phases(&r).iter().filter(|p| p["name"] == "mix").collect();
    assert_eq!(mixes.len(), 3);
    for (p, read_share) in mixes.iter().zip([80.0, 50.0, 20.0]) {
        let share = u(&kind(p, "read")["ops"]) as f64 / u(&p["ops"]) as f64 * 100.0;
        assert!((share - read_share).abs() < 10.0, "{}: {share:.0}% reads", p["label"]);
    }
    let iterative = format!("{dir}dfsperf-iterative.toml");
    let r = run_ok(&Target::Mem, &[&iterative, "-j", "1", "--verify"]);
    assert_eq!(phases(&r).len(), 10);
}

#[test]
fn bad_load_flags_are_one_line_usage_errors() {
    let cases: &[(&str, &[&str], &str)] = &[
        ("mem://", &["-w", "meta", "--rate", "0"], "rate = 0"),
        ("mem://", &["-w", "meta", "--rate-steps", "100,200"], "add duration"),
        ("mem://", &["-w", "meta", "--arrival", "poisson"], "needs rate"),
        (
            "mem://",
            &["-w", "meta", "--rate", "10", "--arrival", "bursty"],
            "uniform or poisson",
        ),
        ("mem://", &["-w", "meta", "--until-stable"], "time-based"),
        (
            "mem://",
            &["-w", "meta", "--duration", "2s", "--until-stable", "--stable-band", "x"],
            "stable_band",
        ),
        ("mem://", &["-w", "mix", "--mix", "read=x"], "OP=WEIGHT"),
        ("mem://", &["-w", "mix", "--mix", "read=50,delete=50"], "needs writes"),
        ("mem://", &["-w", "mix", "--sizes", "1m-4k"], "goes down"),
        ("mem://", &["-w", "mix", "--rw", "read"], "'rw' does not apply"),
        (
            "mem://",
            &["-w", "iterate", "--duration", "2s"],
            "'duration' does not apply",
        ),
        ("mem://", &["-w", "iterate", "--iterations", "1"], "at least 2"),
        ("mem://", &["-w", "meta", "--mix", "read=1"], "'mix' does not apply"),
        ("mem://?lag=1ms", &["-w", "meta"], "latency=DURATION"),
    ];
    for (target, args, needle) in cases {
        let r = run(target, args);
        let want = if target.contains('?') { 1 } else { 2 };
        assert_eq!(r.code, Some(want), "{args:?}: {}", r.describe());
        let lines = r.stderr_lines();
        assert_eq!(lines.len(), 1, "{args:?}: {}", r.stderr);
        assert!(
            lines[0].starts_with("dfsbench: ") && lines[0].contains(needle),
            "{args:?}: {}",
            lines[0]
        );
        assert!(!r.stderr.contains("panicked"));
    }
}

/// The per-second series counts each operation in the second it completed, however late anything
/// else runs: under CPU stress (more busy processes than cores) it still adds up to the phase's
/// totals (run_ok checks that), and no second holds a burst the workload did not make, as a
/// sampler that woke late used to put there (several seconds in one bucket, then zeros).
#[test]
fn the_series_is_exact_under_cpu_stress() {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let _busy: Vec<Killed> = (0..2 * cores + 1)
        .map(|_| spawn("sh", &["-c", "while :; do :; done"]))
        .collect();
    let r = run_ok(
        &Target::Mem,
        &[
            "-w",
            "io",
            "--rw",
            "randread",
            "--size",
            "1m",
            "--bs",
            "4k",
            "--duration",
            "5s",
            "-j",
            "2",
        ],
    );
    let p = phase(&r, "randread");
    let ops: Vec<u64> = p["series"]["ops"].as_array().unwrap().iter().map(u).collect();
    assert!(ops.len() >= 5, "a 5 s phase has at least 5 seconds: {ops:?}");
    // The first and last seconds may be partial; the whole seconds between them ran the same
    // closed loop on the same share of the CPU.
    let mut inner = ops[1..ops.len() - 1].to_vec();
    inner.sort_unstable();
    let median = inner[inner.len() / 2];
    assert!(median > 0, "{ops:?}");
    assert!(
        inner.iter().all(|&n| n <= 4 * median),
        "no second holds several seconds' operations: {ops:?}"
    );
}
