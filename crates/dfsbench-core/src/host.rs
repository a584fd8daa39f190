//! Facts about the client machine and the process's CPU use.

use crate::result::Host;

pub fn host() -> Host {
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

/// User and system CPU seconds used by this process so far.
pub fn cpu_times() -> (f64, f64) {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the struct.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return (0.0, 0.0);
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(ru.ru_utime), secs(ru.ru_stime))
}
