//! Facts about the client machine and the process's CPU use.

use dfsbench_result::Host;

pub(crate) fn host() -> Host {
    let mut uts: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: uname fills the struct with NUL-terminated strings.
    let ok = unsafe { libc::uname(&mut uts) } == 0;
    let field = |f: &[libc::c_char]| {
        // SAFETY: uname NUL-terminates every field.
        unsafe { std::ffi::CStr::from_ptr(f.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    };
    let (hostname, kernel) = if ok {
        (
            field(&uts.nodename),
            format!("{} {}", field(&uts.sysname), field(&uts.release)),
        )
    } else {
        ("unknown".into(), "unknown".into())
    };
    let os = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME=").map(|v| v.trim_matches('"').to_string()))
        })
        .unwrap_or_else(|| std::env::consts::OS.to_string());
    let memory_bytes = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024);
    Host {
        hostname,
        os,
        kernel,
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_bytes,
    }
}

/// This process's resource usage so far.
fn own_usage() -> Option<libc::rusage> {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    (unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } == 0).then_some(ru)
}

/// User and system CPU seconds used by this process so far.
pub(crate) fn cpu_times() -> (f64, f64) {
    let Some(ru) = own_usage() else {
        return (0.0, 0.0);
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(ru.ru_utime), secs(ru.ru_stime))
}

/// This process's peak resident memory so far (Linux reports it in KiB).
pub(crate) fn peak_rss_bytes() -> u64 {
    own_usage().map_or(0, |ru| (ru.ru_maxrss.max(0) as u64) * 1024)
}

/// User and system CPU seconds of process `pid` so far (all its threads), from
/// `/proc/PID/stat`; None when there is no such process here.
pub fn process_cpu_times(pid: u32) -> Option<(f64, f64)> {
    process_stat(pid).map(|s| s.cpu)
}

/// What `/proc/PID/stat` says of a process's CPU and age.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ProcessStat {
    /// User and system CPU seconds so far, all threads.
    pub cpu: (f64, f64),
    /// When it started, in seconds of the boot clock (`boot_clock_s`).
    pub started_s: f64,
}

pub(crate) fn process_stat(pid: u32) -> Option<ProcessStat> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count from its closing one.
    let fields: Vec<&str> = stat.get(stat.rfind(')')? + 1..)?.split_whitespace().collect();
    // Fields 14, 15 (utime, stime) and 22 (starttime), counted from field 3 (state) here.
    let field = |n: usize| fields.get(n - 3)?.parse::<f64>().ok();
    // SAFETY: sysconf only reads a constant.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    (ticks > 0.0).then_some(())?;
    Some(ProcessStat {
        cpu: (field(14)? / ticks, field(15)? / ticks),
        started_s: field(22)? / ticks,
    })
}

/// Seconds since boot, on the clock that `/proc/PID/stat` dates process starts by.
pub(crate) fn boot_clock_s() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime fills the struct it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// CPU seconds at one instant: this process's, and those of the server processes a run watches
/// (`--server-pid`, or a lab's daemons) with None for one that is gone.
#[derive(Debug, Clone, Default)]
pub(crate) struct CpuSample {
    pub own: (f64, f64),
    /// When the sample was taken, on the boot clock.
    pub at_s: f64,
    pub servers: Vec<(u32, Option<ProcessStat>)>,
}

pub(crate) fn cpu_sample(servers: &[u32]) -> CpuSample {
    CpuSample {
        own: cpu_times(),
        at_s: boot_clock_s(),
        servers: servers.iter().map(|&p| (p, process_stat(p))).collect(),
    }
}

/// Address space a worker thread takes at least: std's default stack of 2 MiB, its guard page,
/// and the tokio runtime and buffers each thread carries (rounded up to 4 MiB).
const THREAD_FOOTPRINT: u64 = 4 << 20;

/// The most threads this process can expect to start, and what sets that limit: the user's
/// process limit (`ulimit -u`), the kernel's `threads-max`, and the address-space limit
/// (`ulimit -v`) over a thread's footprint. None when nothing limits them.
pub(crate) fn thread_limit() -> Option<(u64, String)> {
    let rlimit = |resource| {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit fills the struct it is given.
        let ok = unsafe { libc::getrlimit(resource, &mut r) } == 0;
        (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
    };
    let mut limits: Vec<(u64, String)> = Vec::new();
    if let Some(n) = rlimit(libc::RLIMIT_NPROC) {
        limits.push((n, format!("the process limit (ulimit -u) of {n}")));
    }
    if let Some(n) = std::fs::read_to_string("/proc/sys/kernel/threads-max")
        .ok()
        .and_then(|t| t.trim().parse::<u64>().ok())
    {
        limits.push((n, format!("the kernel's threads-max of {n}")));
    }
    if let Some(bytes) = rlimit(libc::RLIMIT_AS) {
        limits.push((
            bytes / THREAD_FOOTPRINT,
            format!(
                "the address-space limit (ulimit -v) of {} MiB at 4 MiB a thread",
                bytes >> 20
            ),
        ));
    }
    limits.into_iter().min_by_key(|(n, _)| *n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_cpu_of_a_process() {
        let start = std::time::Instant::now();
        // Burn some CPU so that the tick counters move.
        let mut x = 0u64;
        while start.elapsed().as_millis() < 50 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let (user, sys) = process_cpu_times(std::process::id()).expect("this process");
        assert!(user + sys > 0.0, "{user} {sys}");
        let (own_user, own_sys) = cpu_times();
        assert!(user + sys <= own_user + own_sys + 0.05, "/proc agrees with getrusage");
        assert_eq!(process_cpu_times(u32::MAX), None);
    }

    #[test]
    fn a_process_started_before_now() {
        let me = process_stat(std::process::id()).expect("this process");
        assert!(me.started_s > 0.0 && me.started_s <= boot_clock_s(), "{me:?}");
    }
}
